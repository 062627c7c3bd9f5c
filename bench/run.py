"""`python -m bench`: every registered program on every system; writes the table and chart.

    python -m bench                       # full run (about 15 minutes on 2 cores)
    python -m bench --quick               # first size of each program, short timings
    python -m bench --programs lstm --systems numpy,pyfront,jax

Each system runs in two fresh processes (bench/worker.py), one after the
other so they do not compete for the cores: a cold one on empty on-disk
caches (first-call latency, correctness, steady state, batch-size change,
guard failure) and a warm one on the caches the cold one filled (warm start),
for the programs the cold one ran. A call running past --call-limit (default
60 s: torch.compile takes minutes on the model-suite steps) is reported as
over time.
A system whose library is not installed is reported as such. Results go to
`--out-dir` (default bench/results): latest.md (the table), latest.png (the
chart) and latest.json (raw numbers of this run; not committed).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SYSTEMS = ("numpy", "pyfront", "pyfront-cpu-sync", "jax", "torch", "numba")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="first size of each program, 0.05 s timings")
    parser.add_argument("--programs", default="", help="comma-separated program names (default: all)")
    parser.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS), help="comma-separated systems")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for every system (default 1: see README, Benchmarks)")
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds of steady-state timing per size and system (default 1, quick 0.05)")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds allowed per worker process")
    parser.add_argument("--call-limit", type=float, default=60,
                        help="seconds allowed for one first call, batch-size change or guard-failure call")
    parser.add_argument("--out-dir", default=str(REPO / "bench" / "results"))
    opts = parser.parse_args(argv)

    from bench.program import load_programs
    from bench.report import PYFRONTS, write_chart, write_markdown
    from bench.systems import MODULES, SYSTEMS
    from bench.threads import describe

    programs = load_programs([p for p in opts.programs.split(",") if p] or None)
    systems = [s for s in opts.systems.split(",") if s]
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        raise SystemExit(f"unknown system(s) {', '.join(unknown)}; known: {', '.join(SYSTEMS)}")
    budget = opts.budget if opts.budget is not None else (0.05 if opts.quick else 1.0)
    started = time.perf_counter()
    results = {
        "meta": {**machine_meta(systems, opts.threads, budget, opts.quick, describe(opts.threads)),
                 "call_limit_s": opts.call_limit},
        "programs": {p.name: {"description": p.description, "guard_failure":
                              p.guard_failure.description if p.guard_failure else None,
                              "sizes": {label: {} for label in (list(p.sizes)[:1] if opts.quick else p.sizes)}}
                     for p in programs},
        "init_s": {},
    }
    scratch = Path(tempfile.mkdtemp(prefix="pyfront-bench-"))
    try:
        for system in systems:
            module = MODULES.get(system)
            if module and importlib.util.find_spec(module) is None:
                reason = f"{module} is not installed (pip install -e '.[bench]')"
                for_each_row(results, system, {"status": "not installed", "reason": reason})
                continue
            cache_dir = scratch / system
            record = run_worker(system, "cold", programs, cache_dir, opts, budget, scratch)
            merge(results, system, "cold", record)
            ran = [p for p in programs if ran_in(record, p.name)]
            if system != "numpy" and ran:  # warm start of what the cold run compiled
                merge(results, system, "warm", run_worker(system, "warm", ran, cache_dir, opts, budget, scratch))
        backends = [SYSTEMS[s]().backend for s in systems if s in PYFRONTS]
        if backends:
            results["call_overhead"] = run_call_overhead(backends, opts, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    results["meta"]["wall_s"] = time.perf_counter() - started
    out = Path(opts.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "latest.json").write_text(json.dumps(results, indent=1))
    (out / "latest.md").write_text(write_markdown(results))
    write_chart(results, out / "latest.png")
    print(f"wrote {out / 'latest.md'} and {out / 'latest.png'} in {results['meta']['wall_s']:.0f} s",
          file=sys.stderr)


def run_worker(system, mode, programs, cache_dir, opts, budget, scratch) -> dict:
    out = scratch / f"{system}-{mode}.json"
    cmd = [sys.executable, "-m", "bench.worker", "--system", system, "--mode", mode,
           "--programs", ",".join(p.name for p in programs), "--cache-dir", str(cache_dir),
           "--out", str(out), "--threads", str(opts.threads), "--budget", str(budget),
           "--call-limit", str(opts.call_limit)]
    if opts.quick:
        cmd.append("--first-size-only")
    log = scratch / f"{system}-{mode}.log"
    start = time.perf_counter()
    print(f"[bench] {system} ({mode}) ...", file=sys.stderr, flush=True)
    with open(log, "w") as log_file:
        try:
            rc = subprocess.run(cmd, cwd=REPO, stdout=log_file, stderr=subprocess.STDOUT, check=False,
                                timeout=opts.timeout, env=os.environ.copy()).returncode
        except subprocess.TimeoutExpired:
            rc = f"timeout after {opts.timeout:.0f} s"
    print(f"[bench] {system} ({mode}) done in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    if rc == 0 and out.exists():
        return json.loads(out.read_text())
    tail = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()][-1:] or [""]
    return {"error": f"worker failed ({rc}): {tail[0][:200]}"}


def run_call_overhead(backends: list[str], opts, scratch) -> dict:
    """bench/call_overhead.py in a fresh process: {"medians": {backend: {way: seconds}}, ...} or {"error": ...}."""
    out = scratch / "call_overhead.json"
    cmd = [sys.executable, "-m", "bench.call_overhead", "--backends", ",".join(backends),
           "--threads", str(opts.threads), "--json", str(out)]
    if opts.quick:
        cmd += ["--rounds", "3", "--calls", "200"]
    print("[bench] trivial call overhead ...", file=sys.stderr, flush=True)
    try:
        done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False, timeout=opts.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {opts.timeout:.0f} s"}
    if done.returncode == 0 and out.exists():
        return json.loads(out.read_text())
    tail = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.strip()][-1:] or [""]
    return {"error": f"bench.call_overhead failed ({done.returncode}): {tail[0][:200]}"}


def ran_in(record: dict, program: str) -> bool:
    """Whether a worker's record has a result (compiled or interpreted) for some size of `program`."""
    sizes = record.get("programs", {}).get(program, {})
    return any(row.get("status") in ("ok", "interpreted") for row in sizes.values())


def merge(results: dict, system: str, mode: str, record: dict) -> None:
    if "init_s" in record:
        results["init_s"].setdefault(system, {})[mode] = record["init_s"]
    if "error" in record:
        if mode == "cold":
            for_each_row(results, system, {"status": "error", "reason": record["error"]})
        else:
            for_each_row(results, system, {"warm_error": record["error"]}, update=True)
        return
    for name, sizes in record.get("programs", {}).items():
        for label, row in sizes.items():
            target = results["programs"][name]["sizes"][label]
            if mode == "cold":
                target[system] = row
            elif row.get("status") in ("ok", "interpreted"):
                target.setdefault(system, {})["warm_start_s"] = row["warm_start_s"]
            else:
                target.setdefault(system, {})["warm_error"] = f"{row.get('status')}: {row.get('reason')}"


def for_each_row(results: dict, system: str, row: dict, update: bool = False) -> None:
    for program in results["programs"].values():
        for cells in program["sizes"].values():
            if update:
                cells.setdefault(system, {}).update(row)
            else:
                cells[system] = dict(row)


def machine_meta(systems, threads, budget, quick, threads_text) -> dict:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for dist in ("numpy", "iree-base-runtime", "jax", "jaxlib", "torch", "numba"):
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "cpu": cpu,
            "cores": os.cpu_count(), "python": platform.python_version(), "versions": versions,
            "threads": threads, "threads_note": threads_text, "budget_s": budget, "quick": quick,
            "systems": list(systems)}


if __name__ == "__main__":
    main()
