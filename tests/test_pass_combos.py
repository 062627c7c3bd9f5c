"""Differential cases under every combination of the JIT pipeline's optional passes.

Each optional pass (passes.pipeline.OPTIONAL: unroll, specialize,
hoist-entry-guards with refine-static-dims, fuse, and the passes after lowering: the upstream
clean-ups canonicalize + cse and bind-result-storage, toggled together as one
switch) is on or off: 32 pipelines. Every pipeline
runs CORE, the cases the optional passes change (a range loop that becomes an
scf.for and is unrolled or not, a dynamic-dim guard that is hoisted or not
and then fails, deferred attribute stores, fused dense layers); the pipeline
with all passes off and the one with all on also run WIDE, more of the
differential suite. The cases are imported from the differential, loop and
relaxation tests, not copied; each is checked against the interpreter by
`tests/differential.check`. Pipelines that produce the same lowered module
share one IREE compilation through the on-disk cache.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from pyfront.passes.pipeline import OPTIONAL, WITH_FUSION

from differential import arrays, check
from test_differential import RNNCell, clip_where, mlp, reductions, rnn_step, ufuncs, views
from test_loops import power_iteration, run_rnn
from test_relaxation import add
from test_relaxation import mlp as batch_mlp

# refine-static-dims reads only the guards hoist-entry-guards hoisted: one switch.
SWITCHES = [("unroll",), ("specialize",), ("hoist-entry-guards", "refine-static-dims"), ("fuse",), ("canonicalize", "cse", "bind-result-storage")]
assert {p for s in SWITCHES for p in s} == set(OPTIONAL)


def pipelines():
    for enabled in itertools.product((False, True), repeat=len(SWITCHES)):
        off = {p for s, on in zip(SWITCHES, enabled) if not on for p in s}
        yield pytest.param(tuple(p for p in WITH_FUSION if p not in off),
                           id="+".join(s[0] for s, on in zip(SWITCHES, enabled) if on) or "none")


def _rng():
    return np.random.default_rng(7)


def loop_case():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    return power_iteration, [(a, 5), (a, 5), (a, 3), (a, 3)], {}


def rnn_rows_case():
    rng = _rng()
    w = rng.standard_normal((3, 3)) * 0.5
    return run_rnn, [(rng.standard_normal((n, 3)), np.zeros(3), w) for n in (4, 3, 5, 2)], {"profile_calls": 2}


def hoisted_guard_case():
    # (4,4) then (3,3) relax both first dims; (5,6) fails the shape guard and raises like NumPy.
    calls = [(np.ones((n, 3)), np.ones((m, 3))) for n, m in ((4, 4), (3, 3), (5, 5), (5, 6), (2, 2))]
    return add, calls, {"profile_calls": 2}


def stores_case():
    w, h, x = arrays(_rng(), "float64", (3, 3), (3,), (2, 3))
    return rnn_step, [(RNNCell(w, h), x)] * 3, {}


def dense_case():
    x, w1, b1, w2, b2 = arrays(_rng(), "float32", (4, 8), (8, 16), (16,), (16, 3), (3,))
    params = (w1, b1, w2, b2)
    return mlp, [(x, params, 2), (x, params, 2)], {}


CORE = [loop_case, hoisted_guard_case, stores_case, dense_case]


def batch_case():
    rng = _rng()
    w, b = rng.standard_normal((8, 5)), np.zeros(5)
    return batch_mlp, [(rng.standard_normal((n, 8)), w, b) for n in (4, 3, 2, 7, 1)], {"profile_calls": 2}


def elementwise_case():
    (x,) = arrays(_rng(), "float32", (5, 3))
    return clip_where, [(x,), (x,)], {}


def ufunc_case():
    (x,) = arrays(_rng(), "float64", (5, 3))
    return ufuncs, [(x,), (x,)], {}


def reduction_case():
    (x,) = arrays(_rng(), "int32", (3, 4))
    return reductions, [(x,), (x,)], {}


def views_case():
    (x,) = arrays(_rng(), "float64", (3, 4))
    return views, [(x,), (x,)], {}


WIDE = [rnn_rows_case, batch_case, elementwise_case, ufunc_case, reduction_case, views_case]


def _run(case, passes):
    fn, calls, options = case()
    check(fn, calls, passes=passes, **options)


@pytest.mark.parametrize("case", CORE, ids=lambda c: c.__name__)
@pytest.mark.parametrize("passes", pipelines())
def test_core_cases_under_every_pipeline(passes, case):
    _run(case, passes)


@pytest.mark.parametrize("case", WIDE, ids=lambda c: c.__name__)
@pytest.mark.parametrize("passes", [pytest.param(WITH_FUSION, id="all"),
                                    pytest.param(tuple(p for p in WITH_FUSION if p not in OPTIONAL), id="none")])
def test_wide_cases_with_all_or_no_optional_passes(passes, case):
    _run(case, passes)
