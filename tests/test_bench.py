"""The benchmark harness (bench/): its quick mode produces the table and chart.

Runs NumPy and pyfront only, on the smallest MLP, and checks the report's
structure, never a timing. The result check that guards every timing is tested
on its own: a wrong answer must be caught, and for a program that updates its
arguments (a training step) a wrong update or one that is not kept too.
"""

import argparse
import copy
import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.compare import mismatch
from bench.program import Program
from bench.report import write_markdown
from bench.systems import NumPy
from bench.worker import measure_size


@pytest.mark.iree
def test_quick_mode_writes_table_and_chart(tmp_path):
    from bench.run import main

    main(["--quick", "--programs", "mlp_forward", "--systems", "numpy,pyfront", "--out-dir", str(tmp_path)])
    table = (tmp_path / "latest.md").read_text()
    assert "quick mode" in table
    rows = [ln for ln in table.splitlines() if ln.startswith("| mlp_forward | 8x32-64-10 |")]
    assert len(rows) == 4  # steady, first call, warm start, batch change (no guard failure row)
    steady = rows[0].split(" | ")
    assert steady[2].endswith(("s", "%")) and "×" in steady[3], rows[0]
    results = json.loads((tmp_path / "latest.json").read_text())
    cell = results["programs"]["mlp_forward"]["sizes"]["8x32-64-10"]
    assert cell["numpy"]["status"] == "ok"
    assert cell["pyfront"]["status"] == "ok", cell["pyfront"]  # ran compiled and matched NumPy
    assert cell["pyfront"]["pyfront"]["compiled_calls"] > 0
    assert cell["pyfront"]["steady"]["fallbacks"] == {"calls": 0, "deopts": 0, "reasons": {}}  # all ran compiled
    for key in ("first_call_s", "warm_start_s", "shape_change_s"):
        assert cell["pyfront"][key] > 0, key
    overhead = results["call_overhead"]["medians"]["cpu"]  # the trivial-call row, for pyfront's backend
    assert all(overhead[way] > 0 for way in ("numpy", "bare VM call", "iree.runtime", "pyfront")), overhead
    assert "## Trivial call overhead" in table
    assert [ln for ln in table.splitlines() if ln.startswith("| cpu | ")], table
    assert (tmp_path / "latest.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # A steady state whose timed calls fell back to the interpreter says so in a note on its cell.
    steady = cell["pyfront"]["steady"]
    steady["fallbacks"] = {"calls": 7, "deopts": 2, "reasons": {"compiled code suspended for 4 calls: x": 5}}
    table = write_markdown(results)
    row = next(ln for ln in table.splitlines() if ln.startswith("| mlp_forward | 8x32-64-10 |"))
    note = row.split(" | ")[3].split()[-1]  # the pyfront cell ends with its note's reference, "[1]"
    text = (f"{note.strip('[]')}. pyfront (cpu) on mlp_forward: 7 of the {steady['repeats']} timed calls did not "
            "run compiled code (2 deopts; interpreted: 5x compiled code suspended for 4 calls: x)")
    assert text in table.splitlines(), (row, table)


def test_result_check_catches_wrong_values_types_and_shapes():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert mismatch((a, a.sum()), (a.copy(), a.sum()), 1e-4, 1e-5, strict_types=True) is None
    assert "max abs error" in mismatch(a, a + 1, 1e-4, 1e-5, strict_types=False)
    assert "shape" in mismatch(a, a.T, 1e-4, 1e-5, strict_types=False)
    assert "dtype" in mismatch(a, a.astype(np.float64), 1e-4, 1e-5, strict_types=True)
    assert mismatch(a, a.astype(np.float64), 1e-4, 1e-5, strict_types=False) is None
    assert "type" in mismatch(a.sum(), float(a.sum()), 1e-4, 1e-5, strict_types=True)
    assert "results" in mismatch((a, a), (a,), 1e-4, 1e-5, strict_types=False)


class Accumulator:
    def __init__(self, n):
        self.state = {"total": np.zeros(n), "count": np.zeros(1)}


def accumulate(acc, x):
    """A stateful step: writes the new arrays into the object's dict."""
    acc.state["total"] = acc.state["total"] + x
    acc.state["count"] = acc.state["count"] + 1
    return acc.state["total"].sum()


ACCUMULATE = Program("accumulate", "a stateful step", accumulate,
                     lambda size, rng: (Accumulator(size["batch"]), rng.standard_normal(size["batch"])),
                     {"3": {"batch": 3}}, stateful=True)


class UpdatesTwice(NumPy):
    """Each call applies the update twice: wrong results."""

    def run(self, fn, args):
        fn(*args)
        return fn(*args)


class ForgetsTheUpdate(NumPy):
    """Right results, but the update is not kept (runs on a copy of the arguments)."""

    def run(self, fn, args):
        return fn(*copy.deepcopy(args))


class Slow(NumPy):
    def run(self, fn, args):
        time.sleep(5)
        return fn(*args)


def measured(system, call_limit=60.0):
    opts = argparse.Namespace(mode="cold", budget=0.01, call_limit=call_limit)
    return measure_size(system, ACCUMULATE, "3", opts)


def test_stateful_programs_are_checked_on_results_and_on_the_state_left():
    assert measured(NumPy())["status"] == "ok"
    twice = measured(UpdatesTwice())
    assert twice["status"] == "wrong" and "max abs error" in twice["reason"], twice
    forgets = measured(ForgetsTheUpdate())
    assert forgets["status"] == "wrong" and "argument" in forgets["reason"], forgets


def test_a_call_past_the_limit_is_reported_over_time():
    row = measured(Slow(), call_limit=0.2)
    assert row["status"] == "over time" and "0 s limit" in row["reason"], row


def test_corpus_benchmark_measures_a_program():
    from bench import corpus

    result = corpus.measure("policy-gradient update", steps=1, repeats=1, warmup=3)
    assert result["numpy"] > 0 and result["pyfront"] > 0 and result["share"] == 1.0
