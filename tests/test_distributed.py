"""pyfront.distributed: collectives over MPI and data-parallel training, on 2 processes over loopback.

The multi-process tests launch `mpiexec -n 2 python tests/mpi_programs.py
SCENARIO` (MPICH's mpiexec from the mpich wheel that the test extra installs)
with a timeout, so a hang fails the test instead of stalling the suite. The
single-process tests run in this process, a rank of one.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mpi4py", reason="pyfront.distributed needs mpi4py: pip install -e '.[distributed]'")

import pyfront  # noqa: E402
from pyfront import distributed  # noqa: E402
from pyfront.data_parallel import shard_bounds  # noqa: E402

pytestmark = pytest.mark.iree

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "mpi_programs.py"
SECONDS = 240  # compiles are cached on disk after the first run; a hang is the only way to take this long


def mpiexec() -> str:
    """The mpiexec beside this Python (the mpich wheel's), else the one on PATH."""
    found = shutil.which("mpiexec", path=os.pathsep.join([str(Path(sys.executable).parent),
                                                         os.environ.get("PATH", "")]))
    if found is None:
        pytest.fail("no mpiexec: pip install -e '.[distributed]' installs MPICH's")
    return found


def launch(*arguments: str, processes: int = 2) -> subprocess.CompletedProcess:
    """Run the job; past SECONDS, kill its whole process group (mpiexec and the ranks) and fail."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    command = [mpiexec(), "-n", str(processes), sys.executable, *arguments]
    with subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as job:
        try:
            stdout, stderr = job.communicate(timeout=SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            stdout, stderr = job.communicate()
            pytest.fail(f"{' '.join(arguments)} did not finish in {SECONDS}s (a hang):\n{stdout}{stderr}")
    return subprocess.CompletedProcess(command, job.returncode, stdout, stderr)


def results(scenario: str) -> list[dict]:
    """Each rank's RESULT line, in rank order; fails unless the job succeeded and every rank reported."""
    done = launch(str(PROGRAMS), scenario)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.replace("RESULT", "\nRESULT").splitlines()  # the ranks' lines may interleave
    found = [json.loads(line.split("RESULT ", 1)[1]) for line in lines if line.startswith("RESULT ")]
    assert sorted(r["rank"] for r in found) == [0, 1], done.stdout + done.stderr
    return sorted(found, key=lambda r: r["rank"])


# Two processes ------------------------------------------------------------------------------------------------


def test_data_parallel_equals_one_process_and_runs_compiled_on_every_rank():
    ranks = results("train")
    for r in ranks:
        assert r["difference"] < 1e-12 and r["identical"]  # vs the 1-process run; parameters equal across ranks
        assert r["interpreted_difference"] < 1e-12  # vs data_parallel(compile=False) on 2 ranks
        assert r["uneven_difference"] < 1e-12  # 13 rows: shards of 7 and 6, weighted
        assert abs(r["loss"] - r["alone_loss"]) < 1e-12
        assert r["grad_compiled"] > 0 and r["update_compiled"] > 0
        assert r["resyncs"] == 0
    # The batch of step 5 breaks rank 1's speculation only: it deopts while rank 0 runs compiled.
    assert ranks[1]["grad_deopts"] >= 1 and ranks[0]["grad_deopts"] == 0


def test_parameters_that_diverge_are_resynchronized_from_rank_0():
    for r in results("diverge"):
        assert r["resyncs"] == 1 and r["identical"]
        assert r["warnings"] == ["pyfront.distributed.data_parallel step: the parameters of rank(s) [1] differ "
                                 "from rank 0's; rank 0's are broadcast to every rank and the step is recomputed"]


def test_allreduce_in_a_loop_of_a_compiled_function_runs_in_the_interpreter_once_per_call():
    for r in results("interpreted"):
        assert r["w"] == [1.0 - 5 * 0.5 * 1.5] * 4  # mean of 1 and 2 is 1.5, five steps of 0.5 * 1.5
        assert r["calls"] == 5 and r["compiled"] == 0
        assert r["allreduces"] == 10 and r["agreements"] == 10  # exactly one collective (and its agreement) each
        assert "pyfront.distributed.allreduce talks to the other MPI ranks" in r["explain"]


def test_a_compiled_step_with_an_allreduce_in_the_middle_runs_compiled_on_every_rank():
    ranks = results("compiled_parts")
    for r in ranks:
        assert r["difference"] < 1e-12  # each step equals the interpreter's
        assert r["allreduces"] == r["calls"] == 8  # one collective per call, compiled or not
        assert r["compiled"] > 0 and all(n > 0 for n in r["part_compiled"])
    # Step 5 breaks rank 1's speculation in the part after the collective only: it deopts there (and
    # re-runs that part in the interpreter) while rank 0 runs compiled, with no extra collective.
    assert ranks[1]["part_deopts"][1] >= 1 and ranks[0]["part_deopts"] == [0, 0]


def test_a_raising_step_raises_on_every_rank():
    for r in results("step_raises"):
        assert r["error"] == ("pyfront.distributed.data_parallel step failed on rank 1: "
                              "ValueError: a NaN in the batch")
        assert r["steps"] == 3


def test_shape_mismatch_names_the_rank_and_the_argument():
    for r in results("mismatch"):
        assert r["error"] == ("pyfront.distributed.allreduce(op='mean'): rank 1 passes ['w1'] as float64 (3, 5), "
                              "rank 0 as float64 (3, 4)")


def test_an_uncaught_exception_aborts_every_rank():
    start = time.monotonic()
    done = launch(str(PROGRAMS), "uncaught")
    assert done.returncode != 0 and "rank 0 was not stopped" not in done.stdout
    assert "RuntimeError: rank 1 gives up" in done.stderr
    assert "rank 1 raised RuntimeError and did not catch it; aborting every rank (MPI_Abort)" in done.stderr
    assert time.monotonic() - start < SECONDS


def test_a_collective_past_its_timeout_aborts_the_job():
    done = launch(str(PROGRAMS), "timeout")  # rank 1 sleeps 30 s; the job must end well before it wakes
    assert done.returncode != 0 and "not aborted" not in done.stdout
    assert "allreduce(op='mean') waited 1s on rank 0 for a rank that did not reach it" in done.stderr


def test_example_prints_equality_with_one_process():
    done = launch(str(ROOT / "examples" / "data_parallel.py"), "--steps", "8")
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("data-parallel: 2 processes, final loss "), last
    difference = float(last.split("max parameter difference vs 1-process run ")[1].split(",")[0])
    assert difference < 1e-12


# One process (this one) ---------------------------------------------------------------------------------------

Pair = namedtuple("Pair", "a b")


def tree():
    return {"w": np.arange(6.0).reshape(2, 3), "layers": [Pair(np.float32(2.5), 1.5), (np.ones(2, np.float32),)],
            "count": np.arange(3)}


def test_one_rank_collectives_return_the_tree_with_its_types():
    from mpi4py import MPI

    t = tree()
    one = MPI.COMM_SELF
    for got in (distributed.allreduce(t, op="sum", comm=one), distributed.broadcast(t, comm=one)):
        assert got["w"].tolist() == t["w"].tolist() and got["w"] is not t["w"]
        assert isinstance(got["layers"][0], Pair) and type(got["layers"][0].a) is np.float32
        assert type(got["layers"][0].b) is float and got["layers"][0].b == 1.5
        assert isinstance(got["layers"][1], tuple) and got["layers"][1][0].dtype == np.float32
        assert got["count"].dtype == t["count"].dtype
    assert distributed.allreduce({"w": np.arange(3.0)}, comm=MPI.COMM_SELF)["w"].tolist() == [0.0, 1.0, 2.0]


def test_one_message_per_dtype():
    sys.path.insert(0, str(PROGRAMS.parent))
    from mpi_programs import CountingComm
    from mpi4py import MPI

    counting = CountingComm(MPI.COMM_SELF)
    distributed.allreduce(tree(), op="sum", comm=counting)  # float64, float32 and int64 leaves
    assert counting.counts["Iallreduce"] == 3 and counting.counts["Iallgather"] == 1
    previous = distributed.timeout()
    distributed.set_timeout(60)  # the same calls, polled
    try:
        counting.counts.clear()
        distributed.allreduce(tree(), op="sum", comm=counting)
    finally:
        distributed.set_timeout(previous)
    assert counting.counts["Iallreduce"] == 3 and counting.counts["Iallgather"] == 1


def test_what_cannot_be_communicated_is_refused_naming_the_leaf():
    from mpi4py import MPI

    with pytest.raises(distributed.RankFailed, match=r"rank 0: TypeError: \['n'\] is a int"):
        distributed.allreduce({"n": 3}, comm=MPI.COMM_SELF)
    with pytest.raises(distributed.RankFailed, match=r"\['count'\] has dtype int64: op='mean' needs float"):
        distributed.allreduce(tree(), comm=MPI.COMM_SELF)
    with pytest.raises(distributed.RankFailed, match=r"\['w'\] has dtype >f8, not in this machine's byte order"):
        distributed.allreduce({"w": np.ones(2, ">f8")}, comm=MPI.COMM_SELF)
    with pytest.raises(ValueError, match="op must be"):
        distributed.allreduce(tree(), op="max", comm=MPI.COMM_SELF)


def test_compiling_a_collective_itself_runs_it_in_the_interpreter():
    from mpi4py import MPI

    reduce = pyfront.compile(distributed.allreduce)
    for _ in range(4):
        assert reduce(np.ones(2), comm=MPI.COMM_SELF).tolist() == [1.0, 1.0]
    report = pyfront.explain(reduce)
    assert report.compiled_calls == 0 and "talks to the other MPI ranks" in str(report)


def test_shards_cover_the_batch_in_order():
    for rows in range(2, 12):
        for ranks in (1, 2, 3, 4):
            bounds = [shard_bounds(rows, ranks, r) for r in range(ranks)]
            assert bounds[0][0] == 0 and bounds[-1][1] == rows
            assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
            assert max(b - a for a, b in bounds) - min(b - a for a, b in bounds) <= 1


def test_without_mpi4py_the_collectives_say_how_to_install_it():
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "from pyfront import distributed\n"
            "try:\n    distributed.rank()\nexcept ImportError as e:\n    print(e)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == ("pyfront.distributed needs mpi4py and an MPI library: "
                                   "pip install 'pyfront[distributed]'"), done.stderr
