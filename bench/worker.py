"""One system on some programs, in a process of its own: `python -m bench.worker ...`.

    python -m bench.worker --programs lstm,mlp_forward --system jax --mode cold --cache-dir D --out R.json

Fixes the thread settings before any numerical library loads, starts the
system (its on-disk cache in D), pays the library's one-time start-up on a
trivial function, then for each size of each program:

* cold mode: first-call latency, a check against NumPy's answer (a wrong or
  failed answer is reported and not timed; every checked call is compared
  with NumPy run on a copy of its inputs, as a training step updates them), steady-state time per step, the
  first call after a batch-size change, and, for programs that declare one,
  the call whose inputs break a speculated guard plus the call after it;
* warm mode (a new process on the cache the cold run filled): first-call
  latency only, i.e. the warm start from the on-disk cache.

Every first call, batch-size change and guard-failure call runs under a time
limit (--call-limit): one that runs past it is stopped (SIGALRM) and reported
as over time, so that one slow compile cannot take the whole run's time.

Writes a JSON object to --out; an exception in one size is reported for that
size and the others still run. One process per system (not per program) pays
each library's start-up once: torch's inductor takes half a minute on a cold cache.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import traceback


class OverTime(BaseException):
    """A call ran past the time limit (a BaseException: libraries' `except Exception` must not swallow it)."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise OverTime in the main thread if the block runs longer than `seconds`."""

    def expire(signum, frame):
        raise OverTime

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", required=True, help="comma-separated program names")
    parser.add_argument("--system", required=True)
    parser.add_argument("--mode", choices=("cold", "warm"), required=True)
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--budget", type=float, default=1.0, help="seconds of steady-state timing per size")
    parser.add_argument("--first-size-only", action="store_true", help="only each program's first size")
    parser.add_argument("--call-limit", type=float, default=60.0,
                        help="seconds allowed for a first call, a batch-size change or a guard-failure call")
    opts = parser.parse_args(argv)

    from bench import threads

    threads.configure_env(opts.threads)  # before NumPy and the peers load

    from bench.program import load_programs
    from bench.systems import SYSTEMS

    programs = load_programs(opts.programs.split(","))
    record = {"system": opts.system, "mode": opts.mode, "programs": {}}
    try:
        system = SYSTEMS[opts.system]()
        system.setup(opts.cache_dir)
        threads.configure_loaded(opts.system, opts.threads)
        record["init_s"] = system.warm_up_library()
    except Exception as e:  # noqa: BLE001 - reported in the table, with the traceback on stderr
        traceback.print_exc()
        record["error"] = f"{type(e).__name__}: {e}"
    else:
        for program in programs:
            rows = record["programs"][program.name] = {}
            for label in list(program.sizes)[:1] if opts.first_size_only else program.sizes:
                try:
                    rows[label] = measure_size(system, program, label, opts)
                except Exception as e:  # noqa: BLE001 - one size failing must not hide the others
                    traceback.print_exc()
                    rows[label] = {"status": "error", "reason": f"{type(e).__name__}: {e}"[:300]}
                system.reset()
    with open(opts.out, "w") as f:
        json.dump(record, f, indent=1)


def measure_size(system, program, label: str, opts) -> dict:
    import copy

    import numpy as np

    from bench.compare import mismatch, state_mismatch
    from bench.measure import steady_state, timed
    from bench.program import Port
    from bench.systems import CannotRun, reason_of

    size = program.sizes[label]
    inputs = program.make_inputs(size, np.random.default_rng(0))
    expected = program.fn(*copy.deepcopy(inputs))  # on a copy: a stateful program updates its inputs

    def check(out, want):
        return mismatch(want, system.to_numpy(out), program.rtol, program.atol, system.strict_types)

    in_place = program.stateful and not isinstance(program.port_for(system.name), Port)

    def checked_call(numpy_inputs, args=None):
        """(seconds, why the call is wrong or None) of one call, against NumPy on a copy of the inputs as they are.

        A system that runs a stateful NumPy function itself must also leave the
        inputs as NumPy left the copy (a port returns the new arrays instead).
        """
        after_numpy = copy.deepcopy(numpy_inputs)
        want = program.fn(*after_numpy)
        try:
            with time_limit(opts.call_limit):
                seconds, out = timed(lambda: system.run(fn, system.arguments(program, numpy_inputs)
                                                        if args is None else args))
        except OverTime:
            return None, f"not measured: the call ran past the {opts.call_limit:.0f} s limit per call"
        wrong = check(out, want)
        if not wrong and in_place:
            wrong = state_mismatch(after_numpy, numpy_inputs, program.rtol, program.atol, system.strict_types)
        return seconds, wrong

    try:
        fn = system.build(program)
        args = system.arguments(program, inputs)
        with time_limit(opts.call_limit):
            first_s, out, notes = system.first_result(fn, args)
    except OverTime:
        return {"status": "over time", "reason": f"no first result within the {opts.call_limit:.0f} s limit "
                "per call (python -m bench --call-limit)"}
    except CannotRun as e:
        return {"status": "cannot run", "reason": str(e)}
    except Exception as e:  # noqa: BLE001 - a peer's compile error is the reason it cannot run this
        traceback.print_exc()
        return {"status": "cannot run", "reason": reason_of(e)}
    row = {"status": "ok", "notes": notes, "first_call_s": first_s}
    if any(n.startswith("ran in the interpreter") for n in notes):
        row["status"] = "interpreted"
    # A stateful program's first result may come after several calls (pyfront profiles first),
    # each updating the inputs: only the next call can be checked against NumPy.
    wrong = None if program.stateful else check(out, expected)
    if not wrong:
        seconds, wrong = checked_call(inputs, args)
        if seconds is None:
            return {"status": "over time", "reason": wrong, "notes": notes}
    if wrong:
        return {"status": "wrong", "reason": wrong, "notes": notes}
    if opts.mode == "warm":
        return {"status": row["status"], "warm_start_s": first_s, "notes": notes}

    compiles = system.name.startswith("pyfront")
    before = []  # pyfront's counts when the timed calls start
    warm_up = 3
    if compiles:  # its warm-up takes the variant's speed trial too (Config.keep_faster): what follows is steady
        from pyfront import speed_trial

        warm_up += speed_trial.TIMED_CALLS + speed_trial.BASELINE_CALLS
    row["steady"] = steady_state(lambda: system.run(fn, args), opts.budget, warm_up=warm_up,
                                 warmed=(lambda: before.append(_pyfront_counts(fn))) if compiles else None).as_dict()
    if compiles:  # its steady state is its compiled code's only if every timed call ran compiled
        row["steady"]["fallbacks"] = _fallbacks(before[0], _pyfront_counts(fn))

    bigger = {**size, "batch": size["batch"] + 1}
    seconds, wrong = checked_call(program.make_inputs(bigger, np.random.default_rng(1)))
    row["shape_change_s"] = None if wrong else seconds
    if wrong:
        row["shape_change_note"] = wrong if seconds is None else f"wrong answer after the batch-size change: {wrong}"

    if program.guard_failure is not None:
        row.update(measure_guard_failure(system, program, size, fn, inputs, args, checked_call))
    if system.name.startswith("pyfront"):
        import pyfront

        report = pyfront.explain(fn)
        row["pyfront"] = {"compilations": report.compilations, "deopts": report.deopts,
                          "compiled_calls": report.compiled_calls,
                          "interpreted_calls": report.interpreted_calls}
    return row


def measure_guard_failure(system, program, size, fn, inputs, args, checked_call) -> dict:
    """The call whose inputs break pyfront's speculated guard, and the usual call after it."""
    import numpy as np

    breaking = program.guard_failure.make_inputs(size, np.random.default_rng(2))
    deopts_before, _ = _counts(system, fn)
    seconds, wrong = checked_call(breaking)
    _, compiled_before = _counts(system, fn)
    after_s, wrong_after = checked_call(inputs, args)
    wrong = wrong or wrong_after
    for _ in range(3):  # and a few more: does it run compiled again?
        wrong = wrong or checked_call(inputs, args)[1]
    row = {"guard_failure_s": None if wrong else seconds, "after_guard_failure_s": None if wrong else after_s}
    if wrong:
        over_time = seconds is None or after_s is None
        row["guard_failure_note"] = wrong if over_time else f"wrong answer around the guard failure: {wrong}"
    if system.name.startswith("pyfront"):
        import pyfront

        report = pyfront.explain(fn)
        row["guard_failure_deopts"] = report.deopts - deopts_before
        if report.compiled_calls == compiled_before:
            reasons = "; ".join(sorted(report.interpreter_reasons)) or "?"
            row["guard_failure_note"] = f"the calls after the guard failure ran in the interpreter: {reasons}"
    return row


def _pyfront_counts(fn) -> tuple[int, int, int, dict[str, int]]:
    """(calls, compiled calls, deopts, interpreted calls per reason) of pyfront-compiled `fn` so far."""
    import pyfront

    report = pyfront.explain(fn)
    return report.calls, report.compiled_calls, report.deopts, dict(report.interpreter_reasons)


def _fallbacks(before: tuple, after: tuple) -> dict:
    """The calls between two `_pyfront_counts` that did not run compiled code, its deopts, and the
    interpreter's reasons (with their counts)."""
    (calls, compiled, deopts, reasons), (calls2, compiled2, deopts2, reasons2) = before, after
    return {"calls": (calls2 - calls) - (compiled2 - compiled), "deopts": deopts2 - deopts,
            "reasons": {r: n - reasons.get(r, 0) for r, n in reasons2.items() if n > reasons.get(r, 0)}}


def _counts(system, fn) -> tuple[int, int]:
    """pyfront's (deopts, compiled calls) so far; zeros for other systems."""
    if not system.name.startswith("pyfront"):
        return 0, 0
    _, compiled, deopts, _ = _pyfront_counts(fn)
    return deopts, compiled


if __name__ == "__main__":
    sys.exit(main())
