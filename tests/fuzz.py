"""Differential fuzzing over several random streams: `python -m tests.fuzz --seeds 7 11 13 --examples 5000`.

Runs tests/test_random_programs.py's fuzz test once per seed (PYFRONT_FUZZ_SEED,
PYFRONT_FUZZ_EXAMPLES), one pytest process after another, each stopping at its
first failing program (hypothesis shrinks it and pytest prints its source).
Prints one line per seed (passed or failed, examples, seconds) and exits 1 if
any seed failed. With `--log-dir DIR --resume`, a stream continues where an
earlier run into DIR stopped (fuzz-seed-<n>.progress counts the programs
checked), so a 5,000-example run can span several sessions of a small machine. The CI run is a few dozen derandomized examples; bugs such as
pyfront issue 16's needed thousands over several streams, which is what this is for.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def checked(log_dir: Path, seed: int) -> int:
    """How many programs of stream `seed` earlier runs into `log_dir` checked."""
    progress = log_dir / f"fuzz-seed-{seed}.progress"
    return int(progress.read_text()) if progress.is_file() else 0


def run_seed(seed: int, examples: int, log_dir: Path | None, skip: int = 0) -> tuple[bool, float]:
    """Fuzz programs `skip` to `examples` of stream `seed`; (passed, seconds). Output goes to the log or the terminal."""
    env = {**os.environ, "PYFRONT_FUZZ_SEED": str(seed), "PYFRONT_FUZZ_EXAMPLES": str(examples),
           "PYFRONT_FUZZ_SKIP": str(skip),
           "PYTHONPATH": os.pathsep.join([str(TESTS.parent)] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
    if log_dir is not None:
        env["PYFRONT_FUZZ_PROGRESS"] = str(log_dir / f"fuzz-seed-{seed}.progress")
    command = [sys.executable, "-m", "pytest", "-q", "-x", "--hypothesis-show-statistics",
               str(TESTS / "test_random_programs.py"), "-k", "fuzz"]
    start = time.perf_counter()
    if log_dir is None:
        proc = subprocess.run(command, env=env, cwd=TESTS.parent, check=False)
    else:
        with open(log_dir / f"fuzz-seed-{seed}.log", "a" if skip else "w") as log:
            proc = subprocess.run(command, env=env, cwd=TESTS.parent, stdout=log, stderr=subprocess.STDOUT,
                                  check=False)
    return proc.returncode == 0, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[7, 11, 13])
    parser.add_argument("--examples", type=int, default=5000, help="programs per seed")
    parser.add_argument("--log-dir", type=Path, help="write each seed's pytest output to fuzz-seed-<n>.log here")
    parser.add_argument("--resume", action="store_true", help="continue the streams an earlier run into --log-dir began")
    args = parser.parse_args(argv)
    if args.resume and args.log_dir is None:
        parser.error("--resume needs --log-dir (where the earlier run's progress is)")
    if args.log_dir is not None:
        args.log_dir.mkdir(parents=True, exist_ok=True)
    failed = []
    for seed in args.seeds:
        skip = checked(args.log_dir, seed) if args.resume else 0
        passed, seconds = (True, 0.0) if skip >= args.examples else run_seed(seed, args.examples, args.log_dir, skip)
        print(f"seed {seed}: {'passed' if passed else 'FAILED'} ({args.examples - skip} of {args.examples} examples"
              f" this run, {seconds:.0f} s)", flush=True)
        if not passed:
            failed.append(seed)
    if failed:
        print(f"failing seeds: {' '.join(map(str, failed))}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
