"""The benchmark harness (bench/): its quick mode produces the table and chart.

Runs NumPy and pyfront only, on the smallest MLP, and checks the report's
structure, never a timing. The result check that guards every timing is tested
on its own: a wrong answer must be caught.
"""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.compare import mismatch


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
    for key in ("first_call_s", "warm_start_s", "shape_change_s"):
        assert cell["pyfront"][key] > 0, key
    assert (tmp_path / "latest.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_result_check_catches_wrong_values_types_and_shapes():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert mismatch((a, a.sum()), (a.copy(), a.sum()), 1e-4, 1e-5, strict_types=True) is None
    assert "max abs error" in mismatch(a, a + 1, 1e-4, 1e-5, strict_types=False)
    assert "shape" in mismatch(a, a.T, 1e-4, 1e-5, strict_types=False)
    assert "dtype" in mismatch(a, a.astype(np.float64), 1e-4, 1e-5, strict_types=True)
    assert mismatch(a, a.astype(np.float64), 1e-4, 1e-5, strict_types=False) is None
    assert "type" in mismatch(a.sum(), float(a.sum()), 1e-4, 1e-5, strict_types=True)
    assert "results" in mismatch((a, a), (a,), 1e-4, 1e-5, strict_types=False)
