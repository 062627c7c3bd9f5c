"""Bounded per-function tables and LRU eviction of variants (pyfront/variant_budget.py, bounded.py).

A Python int that changes every call is a new dispatch key every call: the
function must keep answering right with tables that stay bounded, and a
function that moves on to other keys, or cycles through more keys than
`max_variants`, must keep compiling them without recompiling on every call.
"""

from __future__ import annotations

import numpy as np
import pytest

import pyfront
from differential import assert_same, check
from pyfront.api import MAX_IDLE_GROUPS
from pyfront.bounded import OTHER, BoundedCounter, remember
from pyfront.variant_budget import TRACKED_PER_VARIANT

pytestmark = pytest.mark.iree

MAX_VARIANTS = 4


def _shift(x, tag):
    return x * 2.0 + len(tag)  # a str: keyed by its value, never relaxed to a runtime operand


def _uncompilable(x, n):
    try:
        return x + n
    except ValueError:
        return x


def _table_sizes(compiled):
    groups = compiled._groups
    return {
        "groups": len(groups),
        "failed": max((len(g.failed) for g in groups.values()), default=0),
        "signatures": max((len(g._by_signature) for g in groups.values()), default=0),
        "misses": len(compiled._budget._misses),
        "evicted": len(compiled._budget._evicted),
        "interpreter reasons": len(compiled._report.interpreter_reasons),
        "deopt reasons": len(compiled._report.deopt_reasons),
        "state misses": len(compiled._state_misses),
        "profiled arg facts": max(len(o.facts) for o in compiled._profiler.profile.args.values()),
    }


@pytest.mark.parametrize("fn", [_shift, _uncompilable])
def test_a_key_changing_every_call_keeps_every_table_bounded(fn):
    # Before: 40,000 calls made 40,000 groups (and as many `failed` entries), each call slower.
    compiled = pyfront.compile(fn, profile_calls=1, max_variants=MAX_VARIANTS)
    x = np.linspace(-1.0, 1.0, 7)
    for n in range(40_000):
        tag = "k" * (n % 7) + str(n) if fn is _shift else n
        got = compiled(x, tag)
        if n % 997 == 0 or n < 2 * MAX_VARIANTS:
            assert_same(fn(x, tag), got, f"n = {n}")
    sizes = _table_sizes(compiled)
    limits = {"groups": MAX_VARIANTS + MAX_IDLE_GROUPS, "failed": 1, "signatures": 0,
              "misses": TRACKED_PER_VARIANT * MAX_VARIANTS, "evicted": 0, "interpreter reasons": 2,
              "deopt reasons": 0, "state misses": 0, "profiled arg facts": 8}
    assert all(sizes[k] <= limits[k] for k in limits), sizes
    report = pyfront.explain(compiled)
    assert report.compilations <= MAX_VARIANTS and report.evictions == 0, str(report)
    # A key the variant budget cannot hold vs code whose failure is the same for every key.
    expected = "variant limit reached" if fn is _shift else "new keys are not compiled"
    assert any(expected in r for r in report.interpreter_reasons), str(report)


def test_new_keys_evict_the_least_recently_used_variant():
    # Before: once max_variants keys had compiled, every other key ran in the interpreter for good.
    compiled = check(_shift, [(np.ones(3), n) for n in ["", "", "a", "a"] + ["abc", "abcd"] * 6], max_variants=2)
    report = pyfront.explain(compiled)
    assert report.evictions == 2 and report.compilations == 4, str(report)
    assert sorted(v.signature for v in report.variants) == ["(ndarray[float64, (3,)], str='abc')",
                                                            "(ndarray[float64, (3,)], str='abcd')"]
    assert report.compiled_calls >= 8, str(report)
    assert "evicted 2 variants" in str(report)


def test_cycling_through_more_keys_than_max_variants_backs_off():
    # The worst case for LRU: each new key evicts the next one needed. Compilations grow
    # with the log of the calls (the threshold doubles on each recompilation), results stay right.
    calls = [(np.ones(3), "x" * (n % 3)) for n in range(600)]
    compiled = check(_shift, calls, max_variants=2)
    report = pyfront.explain(compiled)
    assert 4 < report.compilations <= 2 * 2 + 10, str(report)
    assert report.compiled_calls > 300 and compiled._budget.threshold >= 16, str(report)


def test_bounded_tables():
    counter = BoundedCounter(limit=3)
    for reason in ["a", "b", "c", "d", "a"]:
        counter[reason] += 1
    assert counter == {"a": 2, "b": 1, OTHER: 2}
    table: dict = {}
    for k in [1, 2, 3, 1, 4]:
        remember(table, k, str(k), 3)
    assert list(table) == [3, 1, 4]
