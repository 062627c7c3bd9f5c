"""runtime/memory_spans.py against the pairwise overlap test it replaces, on random non-empty ranges."""

import random

from pyfront.runtime.memory_spans import MemorySpans, all_disjoint


def _naive_overlaps(spans: list, start: int, end: int) -> bool:
    return any(start < e and s < end for s, e in spans)


def test_matches_pairwise_overlap_on_random_ranges():
    rng = random.Random(14)
    for _ in range(2000):
        spans, stored = MemorySpans(), []
        for _ in range(rng.randint(0, 12)):
            start = rng.randint(0, 60)
            query = (start, start + rng.randint(1, 12))
            assert spans.overlaps(*query) == _naive_overlaps(stored, *query), (stored, query)
            start = rng.randint(0, 60)
            added = (start, start + rng.randint(1, 12))
            spans.add(*added)
            stored.append(added)


def test_touching_ranges_do_not_overlap():
    spans = MemorySpans()
    spans.add(0, 8)
    spans.add(16, 24)
    assert not spans.overlaps(8, 16) and spans.overlaps(7, 9) and spans.overlaps(15, 17)
    spans.add(8, 16)
    assert spans.overlaps(10, 11) and not spans.overlaps(24, 30)


def test_all_disjoint_matches_pairwise_overlap():
    rng = random.Random(15)
    for _ in range(2000):
        spans = []
        for _ in range(rng.randint(0, 8)):
            start = rng.randint(0, 60)
            spans.append((start, start + rng.randint(1, 12)))
        want = not any(_naive_overlaps(spans[:i] + spans[i + 1:], *s) for i, s in enumerate(spans))
        assert all_disjoint(list(spans)) == want, spans
