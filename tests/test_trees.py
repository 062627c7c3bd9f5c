"""Recursion over trees of objects: one dispatch key, one variant per tree shape (api.py's variant groups).

Every call of a function over `Leaf`/`Node` trees has the same argument key
(its root's class); the variants differ in the classes they guard along the
tree. Each tree shape must compile once and then always run compiled, and a
tree mutated between calls must never be served by a variant that no longer
holds for it.
"""

from __future__ import annotations

import numpy as np
from differential import assert_same, check

import pyfront


class Leaf:
    def __init__(self, word):
        self.word = word


class Node:
    def __init__(self, left, right):
        self.left = left
        self.right = right


EMBEDDING = (np.arange(24, dtype=np.float32).reshape(6, 4) - 12) / 10
COMPOSE = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)


def encode(tree):
    if isinstance(tree, Leaf):
        return EMBEDDING[tree.word]
    return np.tanh(np.concatenate([encode(tree.left), encode(tree.right)]) @ COMPOSE)


def w(i):
    return np.int64(i)  # word ids are NumPy integers: run-time values, not specialized


SHAPES = [
    Node(Leaf(w(1)), Leaf(w(2))),
    Node(Node(Leaf(w(0)), Leaf(w(3))), Leaf(w(4))),
    Node(Leaf(w(5)), Node(Leaf(w(1)), Leaf(w(2)))),
    Node(Node(Leaf(w(2)), Leaf(w(2))), Node(Leaf(w(3)), Leaf(w(0)))),
]


def test_each_tree_shape_compiles_once_then_always_runs_compiled():
    rounds = [(t,) for _ in range(3) for t in SHAPES]
    compiled = check(encode, rounds)
    before = pyfront.explain(compiled)
    assert before.compilations == len(SHAPES), str(before)
    check_more = [(t,) for _ in range(2) for t in SHAPES]
    for (tree,) in check_more:
        assert_same(encode(tree), compiled(tree))
    after = pyfront.explain(compiled)
    assert after.compilations == len(SHAPES)
    assert after.compiled_calls - before.compiled_calls == len(check_more), str(after)
    assert after.interpreted_calls == before.interpreted_calls


def test_new_word_values_reuse_the_variant_of_their_shape():
    compiled = check(encode, [(Node(Leaf(w(i % 6)), Leaf(w((i * 5) % 6))),) for i in range(8)])
    report = pyfront.explain(compiled)
    assert report.compilations == 1 and report.compiled_calls >= 6, str(report)


def test_a_tree_mutated_between_calls_is_never_served_by_a_stale_variant():
    compiled = pyfront.compile(encode, profile_calls=1)
    tree = Node(Node(Leaf(w(0)), Leaf(w(3))), Leaf(w(4)))
    other = Node(Leaf(w(5)), Node(Leaf(w(1)), Leaf(w(2))))
    mutations = [
        lambda: None,
        lambda: setattr(tree.left.right, "word", w(5)),  # a leaf's word changed
        lambda: setattr(tree, "right", Node(Leaf(w(1)), Leaf(w(1)))),  # a subtree swapped for a deeper one
        lambda: setattr(tree, "left", Leaf(w(2))),  # ... and for a leaf
        lambda: setattr(tree.right.left, "word", 3),  # a Python int word: specialized on its value
        lambda: setattr(tree.right.left, "word", 4),
        lambda: setattr(tree, "right", other),
        lambda: setattr(other.right, "left", Leaf(w(0))),  # mutated through another name
    ]
    for mutate in mutations:
        mutate()
        for _ in range(3):
            for t in (tree, other):
                assert_same(encode(t), compiled(t))
    assert pyfront.explain(compiled).compiled_calls > 0


def test_a_leaf_that_loses_its_attribute_runs_in_the_interpreter_and_raises_the_same():
    compiled = check(encode, [(SHAPES[0],)] * 3)
    broken = Node(Leaf(w(1)), Leaf(w(2)))
    del broken.right.word
    check(encode, [(SHAPES[0],)] * 3 + [(broken,), (SHAPES[0],)])
    assert pyfront.explain(compiled).compiled_calls > 0


def test_max_variants_bounds_the_live_variants_and_waiting_shapes_run_in_the_interpreter():
    compiled = check(encode, [(t,) for _ in range(3) for t in SHAPES], max_variants=2)
    report = pyfront.explain(compiled)
    assert len(report.variants) <= 2 and report.evictions > 0 and report.compiled_calls > 0, str(report)
    assert any("variant limit reached" in r for r in report.interpreter_reasons), str(report)
