"""pyfront.guards.BufferGuard: its two overlap tests (pair by pair, and the sorted sweep used for
many arrays) against np.may_share_memory on every pair that matters, on random views of one base."""

import random

import numpy as np
import pytest

from pyfront import guards
from pyfront.guards import BufferGuard


def _random_view(rng: random.Random, base: np.ndarray) -> np.ndarray:
    """A view of `base` (2-d): a slice with random bounds and steps (negative ones too), maybe a
    transpose, an empty one or a 0-d element."""
    kind = rng.random()
    if kind < 0.1:
        return base[rng.randrange(base.shape[0]), rng.randrange(2, 4):rng.randrange(2, 4)]  # often empty
    if kind < 0.2:
        return base[rng.randrange(base.shape[0]), rng.randrange(base.shape[1])][()]
    rows = slice(rng.randrange(base.shape[0]), rng.randrange(base.shape[0] + 1), rng.choice([1, 2, -1]))
    view = base[rows, rng.randrange(base.shape[1]):]
    return view.T if rng.random() < 0.3 else view


def _expected(values: list, groups: tuple, written: tuple) -> bool:
    return not any(np.may_share_memory(values[i], values[j])
                   for i in range(len(values)) for j in range(i + 1, len(values))
                   if groups[i] != groups[j] and (written[i] or written[j]))


@pytest.mark.parametrize("pairwise_max", [guards._PAIRWISE_MAX, 0], ids=["pairwise", "sweep"])
def test_overlap_matches_may_share_memory_pair_by_pair(monkeypatch, pairwise_max):
    monkeypatch.setattr(guards, "_PAIRWISE_MAX", pairwise_max)
    rng = random.Random(21)
    outcomes = set()
    for _ in range(1500):
        bases = [np.zeros((6, 5)) for _ in range(rng.randint(1, 2))]
        values = []
        for _ in range(rng.randint(1, 6)):
            values.append(_random_view(rng, rng.choice(bases)) if rng.random() < 0.8 else rng.choice(bases))
        values = [v for v in values if type(v) is np.ndarray]
        # One group per object, as buffers.py makes them.
        first = {}
        groups = tuple(first.setdefault(id(v), len(first)) for v in values)
        written = tuple(rng.random() < 0.5 for _ in values)
        guard = BufferGuard((None,) * len(values), groups, written, "test")
        want = _expected(values, groups, written)
        assert guard.holds_for(values) == want, (values, groups, written)
        outcomes.add(want)
    assert outcomes == {True, False}  # both answers were exercised


def test_another_grouping_or_a_read_only_written_array_fails():
    a, b = np.zeros(4), np.zeros(4)
    guard = BufferGuard((None, None), (0, 1), (True, False), "test")
    assert guard.holds_for([a, b])
    assert not guard.holds_for([a, a])  # compiled for two objects, called with one
    a.flags.writeable = False
    assert not guard.holds_for([a, b])
