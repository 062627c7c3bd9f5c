"""Result storage: state results written into the buffers of displaced values.

`bind-result-storage` gives each state result a caller-supplied buffer, and the
runtime offers it the array the state slot held before the last commit, when
nothing can observe that array any more (runtime/result_storage.py). These
tests check both halves: a plain training loop ping-pongs between two buffers
per slot (no allocation), and every way user code can keep an old value (a
list of them, a view, a memoryview, `np.frombuffer`, a weak reference, a flag
or a shape set in place) keeps it intact, exactly as in the interpreter.
"""

from __future__ import annotations

import copy
import weakref

import numpy as np
import pytest
from test_device_state import Model, assert_exact, check_loop, guarded_step, model_args, resident, sgd_step

import pyfront

pytestmark = pytest.mark.iree


def addresses(model) -> tuple[int, ...]:
    return model.w.ctypes.data, model.m.ctypes.data, model.steps["b"].ctypes.data


def storage_arguments(compiled) -> list:
    """The storage arguments of every variant compiled so far (white box)."""
    return [v.storage for g in compiled._groups.values() for v in g.variants]


@pytest.mark.parametrize("backend", ["cpu", "cpu-sync"])
def test_training_loop_ping_pongs_between_two_buffers(backend):
    compiled = pyfront.compile(sgd_step, profile_calls=1, backend=backend)
    model, plain = Model(), Model()
    seen = []
    for i in range(10):
        x = np.linspace(-1, 1, 4) * i
        assert_exact(sgd_step(plain, x), compiled(model, x), f"step {i}")
        seen.append(addresses(model))
    assert_exact(vars(plain), vars(model), "state")
    assert pyfront.explain(compiled).compiled_calls > 0
    # Once two compiled calls have displaced resident values, each slot alternates between two buffers.
    steady = seen[4:]
    assert all(a == b for a, b in zip(steady, steady[2:])), seen
    assert all(a != b for a, b in zip(steady, steady[1:])), seen
    assert resident(model.w, backend)
    # White box: the variant holds the displaced w, and the next result is that very array.
    (variant,) = [v for g in compiled._groups.values() for v in g.variants]
    spare = next(x for x, (j, k) in zip(variant._spares[0], variant.storage) if variant.input_paths[k] == "arg0.w")
    spare_id, spare_address = id(spare), spare.ctypes.data
    del spare
    compiled(model, np.ones(4))
    assert (id(model.w), model.w.ctypes.data) == (spare_id, spare_address)


def test_storage_is_bound_only_with_device_state():
    for device_state in (True, False):
        compiled = pyfront.compile(sgd_step, profile_calls=1, device_state=device_state)
        model = Model()
        for _ in range(3):
            compiled(model, np.ones(4))
        # w, m and steps["b"] are read and written: three storage arguments, or none.
        assert [len(s) for s in storage_arguments(compiled)] == [3 if device_state else 0]


@pytest.mark.parametrize("keep", [
    pytest.param(lambda w: w, id="the array"),
    pytest.param(lambda w: w[1:], id="a view"),
    pytest.param(lambda w: w.reshape(2, 2), id="a reshaped view"),
    pytest.param(memoryview, id="a memoryview"),
    pytest.param(lambda w: np.frombuffer(w, w.dtype), id="np.frombuffer"),
    pytest.param(lambda w: [w], id="a list holding it"),
])
def test_kept_old_values_never_change(keep):
    compiled = pyfront.compile(sgd_step, profile_calls=1)
    model, plain = Model(), Model()
    kept = []  # (what user code keeps of an old w, a copy of its value then)
    for i in range(8):
        x = np.linspace(-1, 1, 4) * (i + 1)
        assert_exact(sgd_step(plain, x), compiled(model, x), f"step {i}")
        if i % 3 == 0:
            reference = keep(model.w)
            kept.append((reference, np.array(reference, copy=True)))
        for reference, value in kept:
            assert np.array_equal(np.array(reference), value), f"step {i}: a kept old value changed"
    assert_exact(vars(plain), vars(model), "state")
    assert pyfront.explain(compiled).compiled_calls > 0


def test_a_history_of_old_values_is_kept_intact():
    def keep_history(args, i, log):
        history = log.pop() if log else []
        history.append(args[0].w)
        log.append([h.copy() for h in history])  # compared with the interpreter's after each step
        log.append(history)

    check_loop(sgd_step, model_args(), keep_history, steps=8)


def test_weak_reference_to_an_old_value_sees_it_unchanged():
    compiled = pyfront.compile(sgd_step, profile_calls=1)
    model = Model()
    refs = []
    for _ in range(8):
        compiled(model, np.full(4, 0.5))
        refs.append((weakref.ref(model.w), model.w.copy()))
    for ref, value in refs:
        old = ref()
        assert old is None or np.array_equal(old, value)
    assert pyfront.explain(compiled).compiled_calls > 0


def test_old_value_made_read_only_or_reshaped_in_place_is_not_reused():
    compiled = pyfront.compile(sgd_step, profile_calls=1)
    model, plain = Model(), Model()
    for i in range(8):
        x = np.full(4, 0.25 * i)
        assert_exact(sgd_step(plain, x), compiled(model, x), f"step {i}")
        for m in (model, plain):
            if i % 2:
                m.w.flags.writeable = False  # the next step displaces it
            else:
                m.m.shape = (2, 2)
                m.m.shape = (4,)
        assert_exact(vars(plain), vars(model), f"state after step {i}")
        assert model.w.flags.writeable == plain.w.flags.writeable
    assert pyfront.explain(compiled).compiled_calls > 0


def test_deopt_after_reuse_leaves_the_interpreters_state():
    def flip(args, i, log):
        model, x = args
        x[...] = -x if i in (4, 5) else x  # an in-graph branch guard fails after buffers were reused
        log.append((model.w.copy(), model.m.copy()))

    check_loop(guarded_step, lambda: (Model(), np.full(4, 0.5)), flip, steps=10)


def test_deep_copies_train_independently_with_reuse():
    compiled = pyfront.compile(sgd_step, profile_calls=1)
    model = Model()
    for _ in range(4):
        compiled(model, np.ones(4))
    twin, plain, plain_twin = copy.deepcopy(model), copy.deepcopy(model), copy.deepcopy(model)
    for i in range(6):
        x = np.full(4, 0.5 * i)
        compiled(model, x)
        compiled(twin, -x)
        sgd_step(plain, x)
        sgd_step(plain_twin, -x)
    assert_exact(vars(plain), vars(model), "model")
    assert_exact(vars(plain_twin), vars(twin), "twin")


class Matrix:
    def __init__(self):
        self.w = np.arange(6, dtype=np.float32).reshape(2, 3) / 4


def matrix_step(p, x):
    p.w = p.w * 0.5 + x
    return p.w.sum()


@pytest.mark.parametrize("keep", [
    pytest.param(lambda w: w[1:], id="a view"),  # its .base is w's base array, not w
    pytest.param(lambda w: w.T, id="a transposed view"),
    pytest.param(lambda w: w.base, id="the base array"),
])
def test_kept_views_of_a_matrix_never_change(keep):
    compiled = pyfront.compile(matrix_step, profile_calls=1)
    p, plain = Matrix(), Matrix()
    kept = []
    for i in range(8):
        x = np.full(3, i, np.float32)
        assert_exact(matrix_step(plain, x), compiled(p, x), f"step {i}")
        if i % 3 == 0 and p.w.base is not None:
            reference = keep(p.w)
            kept.append((reference, np.array(reference, copy=True)))
        for reference, value in kept:
            assert np.array_equal(np.array(reference), value), f"step {i}: a kept old value changed"
    assert kept and pyfront.explain(compiled).compiled_calls > 0
