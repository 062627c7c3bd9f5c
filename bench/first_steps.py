"""Wall time of a fresh training loop: N steps in a new process, on empty caches.

    python -m bench.first_steps                      # model_* programs, 100 and 1,000 steps, 3 runs each
    python -m bench.first_steps --steps 100 --programs model_gan --repeats 1

What a user waits for on the first run of a training script: for each model
program of bench/programs, each system and each N, a new process with empty
on-disk caches builds the step and times N calls of it on the same inputs
(a stateful program updates its parameters in place, as training does). The
clock covers the loop, compiles included; not the library's start-up (each
system first runs a trivial function, as bench/worker.py does).

pyfront runs with its defaults (no call waits for IREE, and a function's
first variant is prepared once its calls have spent twice as long in the
interpreter as preparing it is expected to take: `Config.compile_after`; a
large module is lowered in the preparation worker), with the defaults but
`PYFRONT_PREPARATION_WORKER=0` (lowered on the calling thread, as before the
worker existed), with `compile_after=0` (prepared right after profiling, the
default before it existed) and with `wait_for_compile="always"` (each
compiling call waits). The
table gives the median seconds per loop over --repeats processes, each against
NumPy's, and how many of pyfront's calls ran compiled. Writes bench/results/first_steps.md
(`--out FILE` elsewhere, `--out -` nowhere: a run of a few programs should not replace the table). Peers (jax.jit) run when installed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "first_steps.md"
PROGRAMS = ["model_gan", "model_treenn", "model_reinforce", "model_cnn", "model_lstm_lm"]
# (column, system of bench/systems.py, the pyfront Config it runs with, as environment variables)
CONFIGURATIONS = [("NumPy", "numpy", {}),
                  ("pyfront (default)", "pyfront-cpu-sync",
                   {"PYFRONT_WAIT_FOR_COMPILE": "never", "PYFRONT_COMPILE_AFTER": "auto"}),
                  ("pyfront (no worker)", "pyfront-cpu-sync",
                   {"PYFRONT_WAIT_FOR_COMPILE": "never", "PYFRONT_COMPILE_AFTER": "auto",
                    "PYFRONT_PREPARATION_WORKER": "0"}),
                  ("pyfront (compile_after=0)", "pyfront-cpu-sync",
                   {"PYFRONT_WAIT_FOR_COMPILE": "never", "PYFRONT_COMPILE_AFTER": "0"}),
                  ("pyfront (always wait)", "pyfront-cpu-sync", {"PYFRONT_WAIT_FOR_COMPILE": "always"}),
                  ("jax.jit", "jax", {})]


def loop_seconds(system_name: str, program_name: str, steps: int) -> dict:
    """In this (fresh) process: the seconds of `steps` calls of the program's step, and pyfront's counts."""
    from bench import threads

    threads.configure_env(1)  # before NumPy and the peers load
    from bench.program import load_programs
    from bench.systems import SYSTEMS

    import numpy as np

    system = SYSTEMS[system_name]()
    system.setup(tempfile.mkdtemp(prefix="first-steps-cache-"))
    threads.configure_loaded(system_name, 1)
    system.warm_up_library()
    (program,) = load_programs([program_name])
    inputs = program.make_inputs(next(iter(program.sizes.values())), np.random.default_rng(0))
    start = time.perf_counter()
    fn = system.build(program)
    args = system.arguments(program, inputs)
    for _ in range(steps):
        system.run(fn, args)
    row = {"seconds": time.perf_counter() - start}
    if system_name.startswith("pyfront"):
        import pyfront

        row["compiled_calls"] = pyfront.explain(fn).compiled_calls
    return row


def fresh_process(system: str, config: dict, program: str, steps: int) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           **config}
    done = subprocess.run([sys.executable, "-m", "bench.first_steps", "--child", system, program, str(steps)],
                          cwd=REPO, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = [ln for ln in done.stderr.splitlines() if ln.strip()][-1:] or [""]
        return {"error": tail[0][:120]}
    return json.loads(done.stdout.splitlines()[-1])


def available(system: str) -> bool:
    from bench.systems import MODULES

    module = MODULES.get(system)
    if module is None:
        return True
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _cpu_model() -> str:
    """The CPU's name (results differ between AVX2 and AVX-512 hosts)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "CPU unknown")
    except OSError:
        return "CPU unknown"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS,
                        help=f"where the table goes (default {RESULTS.relative_to(REPO)}; '-': printed only)")
    parser.add_argument("--child", nargs=3, metavar=("SYSTEM", "PROGRAM", "STEPS"), help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.child:
        system, program, steps = opts.child
        print(json.dumps(loop_seconds(system, program, int(steps))))
        return
    configurations = [c for c in CONFIGURATIONS if available(c[1])]
    lines = ["# Fresh training loops: seconds for N steps in a new process, empty caches",
             "", f"python -m bench.first_steps --steps {' '.join(map(str, opts.steps))} --repeats {opts.repeats}; "
             f"median of {opts.repeats} processes; (x NumPy: below 1 is faster); pyfront: calls that ran compiled.",
             f"Machine: {os.cpu_count()} cores, {_cpu_model()}. Not installed here: "
             f"{', '.join(c for c, s, _ in CONFIGURATIONS if not available(s)) or 'none'}.", "",
             "| program | steps | " + " | ".join(c for c, _, _ in configurations) + " |",
             "|---|---|" + "---|" * len(configurations)]
    for program in opts.programs.split(","):
        for steps in opts.steps:
            cells, numpy_s = [], None
            # The columns' processes alternate, so that a noisy neighbour slows all of them alike.
            runs_of = [[] for _ in configurations]
            for _ in range(opts.repeats):
                for runs, (_, system, config) in zip(runs_of, configurations):
                    runs.append(fresh_process(system, config, program, steps))
            for runs, (column, system, _) in zip(runs_of, configurations):
                errors = [r["error"] for r in runs if "error" in r]
                if errors:
                    cells.append(f"failed: {errors[0]}")
                    continue
                seconds = statistics.median(r["seconds"] for r in runs)
                numpy_s = seconds if system == "numpy" else numpy_s
                cell = f"{seconds:.2f} s"
                if numpy_s and system != "numpy":
                    cell += f" ({seconds / numpy_s:.2f}x)"
                if "compiled_calls" in runs[0]:
                    cell += f", {statistics.median(r['compiled_calls'] for r in runs):.0f} compiled"
                cells.append(cell)
                print(f"{program} {steps} {column}: {cell}", file=sys.stderr, flush=True)
            lines.append(f"| {program} | {steps} | " + " | ".join(cells) + " |")
    if str(opts.out) != "-":
        opts.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
