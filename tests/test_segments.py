"""Functions split around their collective statements (pyfront/segments.py), on one rank.

With one rank every collective gives its input back, so these tests check what splitting
must keep, against the interpreter (the multi-rank behaviour is in test_distributed.py):
results, state writes made before and after a collective, deopts in a part, and which
functions are not split."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mpi4py", reason="pyfront.distributed needs mpi4py: pip install -e '.[distributed]'")

import pyfront  # noqa: E402
from pyfront import distributed, segments  # noqa: E402
from tests.differential import check  # noqa: E402

pytestmark = pytest.mark.iree


class Trainer:
    def __init__(self, w):
        self.w = w
        self.t = 0

    def step(self, x, lr=0.1, *, clip=10.0):
        self.t += 1
        err = x @ self.w - 1.0
        g = x.T @ err / len(x)
        g = distributed.allreduce(g, op="mean")
        if np.abs(g).max() > clip:
            g = g * (clip / np.abs(g).max())
        self.w -= lr * g
        return 0.5 * np.mean(err ** 2), self.t


def test_a_step_around_an_allreduce_compiles_in_parts():
    rng = np.random.default_rng(0)
    calls = [(Trainer(np.zeros(3)), rng.normal(size=(8, 3)) * k) for k in (1, 1, 2, 30, 1, 40, 2)]
    compiled = check(Trainer.step, calls, profile_calls=1)
    report = pyfront.explain(compiled)
    parts = [part for _, part in report.parts if part is not None]
    assert len(report.parts) == 3 and all(p.compiled_calls > p.verified_calls for p in parts), str(report)
    assert "a collective, run in the interpreter" in report.parts[1][0]


def test_a_deopt_after_the_collective_keeps_the_state_written_before_it():
    """The clipping branch flips on call 4: the part after the allreduce deopts and re-runs in the
    interpreter from its own start; `self.t += 1`, in the part before, happens once."""
    trainer = Trainer(np.zeros(3))
    plain = Trainer(np.zeros(3))
    step = pyfront.compile(Trainer.step, profile_calls=1)
    rng = np.random.default_rng(1)
    for k in (1, 1, 1, 50, 1, 60):
        x = rng.normal(size=(8, 3)) * k
        expected = Trainer.step(plain, x, lr=0.2)
        got = step(trainer, x, lr=0.2)
        assert np.isclose(got[0], expected[0], rtol=1e-13) and got[1] == expected[1] == trainer.t
        assert np.allclose(trainer.w, plain.w, rtol=1e-13)
    last = pyfront.explain(step).parts[2][1]
    assert last.deopts >= 1, str(last)


def collective_in_a_loop(g):
    for _ in range(2):
        g = distributed.allreduce(g)
    return g


def conditional_name(g, flag):
    if flag:
        h = g * 2
    g = distributed.allreduce(g)
    return h + g


def returns_early(g, flag):
    if flag:
        return g
    g = distributed.allreduce(g)
    return g


def makes_a_closure(g):
    scale = lambda v: v * 2  # noqa: E731
    g = distributed.allreduce(g)
    return scale(g)


def deletes(g):
    h = g * 2
    del g
    h = distributed.allreduce(h)
    return h


def no_collective(g):
    return g * 2


@pytest.mark.parametrize("fn", [collective_in_a_loop, conditional_name, returns_early, makes_a_closure, deletes,
                                no_collective])
def test_functions_that_splitting_would_change_are_not_split(fn):
    assert segments.split(fn) is None


def test_a_name_bound_for_certain_before_the_collective_is_passed_on():
    def scaled(g, k):
        h = g * k
        g = distributed.allreduce(g)
        return h + g, [v * k for v in g]  # a comprehension reading a local

    parts = segments.split(scaled)
    assert [p.collective for p in parts] == [False, True, False]
    compiled = check(scaled, [(np.arange(3.0), 2.0)] * 4, profile_calls=1)
    assert pyfront.explain(compiled).parts[0][1].compiled_calls > 0
