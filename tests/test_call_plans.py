"""Call plans (runtime/call_plans.py): a steady call repeats the array decisions of an earlier one.

A training loop's calls pass the same arrays each step, alternating between two
buffers per state slot; a call whose arrays are as they were when a plan was
made follows it instead of deciding array by array. These tests run loops
plain and compiled on twin arguments (test_device_state.check_loop) and, once
the compiled calls follow plans, do between two steps each thing that must make
a call decide afresh: keep the value a plan would write into (by a reference, a
view, a weak reference), make it read-only, rebind a state slot to a copy, pass
a resident array where the plan uploaded one. Every result and the state stay
the interpreter's, and the white-box counters show which calls followed a plan.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from pyfront.runtime import call_plans, iree_backend
from test_device_state import Model, assert_exact, check_loop, model_args, resident, sgd_step

import pyfront

pytestmark = pytest.mark.iree


@pytest.fixture
def followed(monkeypatch) -> list:
    """One bool per planned check of a call: whether a plan was followed (white box)."""
    calls = []
    plan_for = iree_backend._Function._plan_for

    def counting(self, inputs, storage, modes):
        plan, candidates = plan_for(self, inputs, storage, modes)
        calls.append(plan is not None)
        return plan, candidates

    monkeypatch.setattr(iree_backend._Function, "_plan_for", counting)
    return calls


def test_a_steady_loop_follows_two_alternating_plans(followed):
    compiled = check_loop(sgd_step, model_args(), lambda args, i, log: None, steps=10)
    # The first compiled calls have no resident values to write into; once every slot ping-pongs
    # (the fifth), each call follows the plan of the call before last.
    assert followed[-4:] == [True] * 4, str(followed)
    (variant,) = [v for g in compiled._groups.values() for v in g.variants]
    assert len(variant.invoke._plans) == 2
    assert compiled.explain().deopts == 0


def keep_reference(args, i, log):
    log.append(args[0].w)  # the array the call after next would write into


def keep_view(args, i, log):
    log.append(args[0].w[1:])


_WEAK_REFERENCES: dict[int, list] = {}  # per log (plain or compiled run): weak references to old values


def keep_weak_reference(args, i, log):
    refs = _WEAK_REFERENCES.setdefault(id(log), [])
    refs.append((weakref.ref(args[0].w), args[0].w.copy()))
    log.append([ref() is None or np.array_equal(ref(), value) for ref, value in refs])


def make_read_only(args, i, log):
    args[0].w.flags.writeable = False


def rebind_to_a_copy(args, i, log):
    args[0].m = args[0].m.copy()


@pytest.mark.parametrize("between", [keep_reference, keep_view, keep_weak_reference, make_read_only,
                                     rebind_to_a_copy])
def test_what_user_code_does_between_steady_steps(between, followed):
    def at_steady_steps(args, i, log):
        if i >= 6:
            between(args, i, log)
            log.append([np.array(x) for x in log if isinstance(x, np.ndarray)])  # their values now

    check_loop(sgd_step, model_args(), at_steady_steps, steps=12)
    # followed[n] is step n + 1 (one profiled call); the change is made from step 7 on.
    assert followed[5], str(followed)
    assert False in followed[6:], str(followed)  # some call after the change decided afresh


def test_a_plan_keeps_no_buffer_of_a_dead_array(followed):
    compiled = pyfront.compile(sgd_step, profile_calls=1)
    model = Model()
    for _ in range(8):
        compiled(model, np.ones(4))
    (variant,) = [v for g in compiled._groups.values() for v in g.variants]
    entries = [e for plan in variant.invoke._plans for e in plan.resident_entries]
    assert entries and all(e.ref is not None for e in entries)
    assert resident(model.w)
    variant._spares.clear()
    del model
    gc.collect()
    assert all(e() is None and e.ref is None and e.buffer is None for e in entries)


def test_a_result_not_written_into_its_storage_is_made_the_general_way(followed, monkeypatch):
    compiled = check_loop(sgd_step, model_args(), lambda args, i, log: None, steps=6)
    # As if IREE had put every result in a buffer of its own: the buffers compare unequal.
    monkeypatch.setattr(iree_backend, "_BUFFER", lambda entry: object())
    plain, model = Model(), Model()
    for i in range(6):
        x = np.full(4, 0.5 * i)
        assert_exact(sgd_step(plain, x), compiled(model, x), f"step {i}")
    assert_exact(vars(plain), vars(model), "state")
    assert True in followed[-4:], followed


def test_counts_of_an_array_held_only_by_its_slot_are_measured():
    slot = [np.asarray(call_plans._Owner(np.empty(3)))]
    assert call_plans._counts(slot, (0,)) == ([call_plans._ALONE], [call_plans._BASE_ALONE], [0])
    kept = slot[0]
    assert call_plans._counts(slot, (0,))[0] == [call_plans._ALONE + 1]
    del kept
    view = slot[0][1:]
    assert call_plans._counts(slot, (0,))[1] == [call_plans._BASE_ALONE]  # a view holds the array, not the owner
    assert call_plans._counts(slot, (0,))[0] == [call_plans._ALONE + 1]
    del view


def test_a_call_that_only_uploads_and_copies_keeps_no_plan(followed):
    def add_one(x):
        return x + 1.0

    compiled = pyfront.compile(add_one, profile_calls=1)
    for i in range(6):
        x = np.full(4, float(i))
        assert_exact(add_one(x), compiled(x), f"call {i}")
    (variant,) = [v for g in compiled._groups.values() for v in g.variants]
    assert variant.invoke._plans == [] and compiled.explain().compiled_calls == 5
    assert followed and not any(followed)
