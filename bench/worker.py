"""One system on some programs, in a process of its own: `python -m bench.worker ...`.

    python -m bench.worker --programs lstm,mlp_forward --system jax --mode cold --cache-dir D --out R.json

Fixes the thread settings before any numerical library loads, starts the
system (its on-disk cache in D), pays the library's one-time start-up on a
trivial function, then for each size of each program:

* cold mode: first-call latency, a check against NumPy's answer (a wrong or
  failed answer is reported and not timed), steady-state time per step, the
  first call after a batch-size change, and, for programs that declare one,
  the call whose inputs break a speculated guard plus the call after it;
* warm mode (a new process on the cache the cold run filled): first-call
  latency only, i.e. the warm start from the on-disk cache.

Writes a JSON object to --out; an exception in one size is reported for that
size and the others still run. One process per system (not per program) pays
each library's start-up once: torch's inductor takes half a minute on a cold cache.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback


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
    import numpy as np

    from bench.compare import mismatch
    from bench.measure import steady_state, timed
    from bench.systems import CannotRun, reason_of

    size = program.sizes[label]
    inputs = program.make_inputs(size, np.random.default_rng(0))
    expected = program.fn(*inputs)

    def check(out, want=expected):
        return mismatch(want, system.to_numpy(out), program.rtol, program.atol, system.strict_types)

    try:
        fn = system.build(program)
        args = system.convert(inputs)
        first_s, out, notes = system.first_result(fn, args)
    except CannotRun as e:
        return {"status": "cannot run", "reason": str(e)}
    except Exception as e:  # noqa: BLE001 - a peer's compile error is the reason it cannot run this
        traceback.print_exc()
        return {"status": "cannot run", "reason": reason_of(e)}
    row = {"status": "ok", "notes": notes, "first_call_s": first_s}
    if any(n.startswith("ran in the interpreter") for n in notes):
        row["status"] = "interpreted"
    wrong = check(out)
    if wrong:
        return {"status": "wrong", "reason": wrong, "notes": notes}
    if opts.mode == "warm":
        return {"status": row["status"], "warm_start_s": first_s, "notes": notes}

    row["steady"] = steady_state(lambda: system.run(fn, args), opts.budget).as_dict()

    bigger = {**size, "batch": size["batch"] + 1}
    changed = program.make_inputs(bigger, np.random.default_rng(1))
    seconds, out = timed(lambda: system.run(fn, system.convert(changed)))
    wrong = check(out, program.fn(*changed))
    row["shape_change_s"] = None if wrong else seconds
    if wrong:
        row["shape_change_note"] = f"wrong answer after the batch-size change: {wrong}"

    if program.guard_failure is not None:
        row.update(measure_guard_failure(system, program, size, fn, args, check))
    if system.name.startswith("pyfront"):
        import pyfront

        report = pyfront.explain(fn)
        row["pyfront"] = {"compilations": report.compilations, "deopts": report.deopts,
                          "compiled_calls": report.compiled_calls,
                          "interpreted_calls": report.interpreted_calls}
    return row


def measure_guard_failure(system, program, size, fn, args, check) -> dict:
    """The call whose inputs break pyfront's speculated guard, and the usual call after it."""
    import numpy as np

    from bench.measure import timed

    breaking = program.guard_failure.make_inputs(size, np.random.default_rng(2))
    deopts_before, _ = _counts(system, fn)
    seconds, out = timed(lambda: system.run(fn, system.convert(breaking)))
    wrong = check(out, program.fn(*breaking))
    _, compiled_before = _counts(system, fn)
    after_s, out_after = timed(lambda: system.run(fn, args))
    for _ in range(3):  # and a few more: does it run compiled again?
        wrong = wrong or check(system.run(fn, args))
    wrong = wrong or check(out_after)
    row = {"guard_failure_s": None if wrong else seconds, "after_guard_failure_s": None if wrong else after_s}
    if wrong:
        row["guard_failure_note"] = f"wrong answer around the guard failure: {wrong}"
    if system.name.startswith("pyfront"):
        import pyfront

        report = pyfront.explain(fn)
        row["guard_failure_deopts"] = report.deopts - deopts_before
        if report.compiled_calls == compiled_before:
            reasons = "; ".join(sorted(report.interpreter_reasons)) or "?"
            row["guard_failure_note"] = f"the calls after the guard failure ran in the interpreter: {reasons}"
    return row


def _counts(system, fn) -> tuple[int, int]:
    """pyfront's (deopts, compiled calls) so far; zeros for other systems."""
    if not system.name.startswith("pyfront"):
        return 0, 0
    import pyfront

    report = pyfront.explain(fn)
    return report.deopts, report.compiled_calls


if __name__ == "__main__":
    sys.exit(main())
