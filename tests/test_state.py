"""Deferred Python state (JANUS §4.2.3): globals, closure cells, dict/list items.

Compiled calls write state to local copies that later reads in the same call
see; the runtime commits them only after every guard held, so a call that
deopts (and re-runs in the interpreter) or raises leaves exactly the
interpreter's state. Globals and cells are compared by running each call from
the same starting state, interpreted and compiled.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import pytest
from differential import _run, assert_same, check

import pyfront

pytestmark = pytest.mark.iree


def check_state(fn: Callable, calls: list[tuple], get: Callable[[], dict], put: Callable[[dict], None],
                **options) -> pyfront.CompiledFunction:
    """Like `differential.check`, also comparing the state that `get` returns (and `put` restores)."""
    options.setdefault("profile_calls", 1)
    compiled = pyfront.compile(fn, **options)
    for n, args in enumerate(calls):
        start = get()
        plain_args, compiled_args = copy.deepcopy(args), copy.deepcopy(args)
        put(copy.deepcopy(start))
        expected, expected_error, expected_out, expected_warnings = _run(fn, plain_args)
        expected_state = get()
        put(copy.deepcopy(start))
        got, error, out, got_warnings = _run(compiled, compiled_args)
        assert out == expected_out, f"call {n}: printed {out!r}, expected {expected_out!r}"
        assert got_warnings == expected_warnings, f"call {n}: warned {got_warnings}, expected {expected_warnings}"
        assert type(error) is type(expected_error), f"call {n}: raised {error!r}, expected {expected_error!r}"
        assert str(error) == str(expected_error)
        if expected_error is None:
            assert_same(expected, got, f"call {n} result")
        assert_same(expected_state, get(), f"call {n} state after the call")
        assert_same(plain_args, compiled_args, f"call {n} arguments after the call")
    return compiled


def module_state(*names: str):
    g = globals()
    return (lambda: {k: g[k] for k in names if k in g}), g.update


def cell_state(fn: Callable, name: str):
    cell = fn.__closure__[fn.__code__.co_freevars.index(name)]
    return (lambda: {name: cell.cell_contents}), (lambda d: setattr(cell, "cell_contents", d[name]))


def compiled_ran(compiled) -> None:
    report = pyfront.explain(compiled)
    assert report.compiled_calls > 0, str(report)


# Globals -------------------------------------------------------------------------

total = np.zeros(3)
scale = np.ones(3)
count = 0


def accumulate(x):
    global total
    total = total + x
    return total * scale  # the read after the write sees the new value


def test_global_array_accumulator():
    x = np.arange(3.0)
    compiled = check_state(accumulate, [(x,)] * 4, *module_state("total", "scale"))
    compiled_ran(compiled)


def swap_and_keep_old(x):
    global total, scale
    old = total
    total, scale = scale * 2, total + x
    return old, total, scale


from numpy import dot, vstack  # noqa: E402 - NumPy 2 array functions bound to globals by name


def gate(W, h, x):
    return np.tanh(dot(W, vstack((h, x))))


def test_numpy_functions_imported_by_name_are_guarded_constants(monkeypatch):
    rng = np.random.default_rng(0)
    W, h, x = rng.normal(size=(3, 5)), rng.normal(size=(2, 1)), rng.normal(size=(3, 1))
    compiled = check(gate, [(W, h, x)] * 3)
    assert pyfront.explain(compiled).compiled_calls == 2
    monkeypatch.setitem(gate.__globals__, "vstack", lambda tup: np.vstack(tup[::-1]))  # rebound: seen
    assert_same(gate(W, h, x), compiled(W, h, x))


def test_global_rebinding_returns_the_objects_the_interpreter_returns():
    global total, scale
    compiled = check_state(swap_and_keep_old, [(np.ones(3),)] * 3, *module_state("total", "scale"))
    compiled_ran(compiled)
    total, scale = np.zeros(3), np.ones(3)
    before = total
    old, new_total, new_scale = compiled(np.ones(3))
    assert old is before  # read at call start, not after the commit
    assert new_total is total and new_scale is scale


def store_argument(x):
    global total
    total = x
    return x * 2


def test_stored_argument_is_the_callers_object():
    compiled = pyfront.compile(store_argument, profile_calls=1)
    for _ in range(3):
        x = np.ones(3)
        compiled(x)
        assert globals()["total"] is x
    compiled_ran(compiled)


def count_calls(x):
    global count
    count += 1
    return x * 2


def test_python_counter_compiles_once():
    # The global is stored anew every call: it is read at run time, not specialized on.
    compiled = check_state(count_calls, [(np.ones(2),)] * 6, *module_state("count"))
    report = pyfront.explain(compiled)
    assert report.compiled_calls >= 4 and report.compilations == 1, str(report)


def test_rebinding_a_global_between_calls():
    global total, scale
    compiled = pyfront.compile(accumulate, profile_calls=1)
    total, scale = np.zeros(3), np.ones(3)
    compiled(np.ones(3))
    compiled(np.ones(3))
    np.testing.assert_array_equal(total, [2, 2, 2])
    scale = np.full(3, 10.0)  # rebound: seen by the next compiled call
    np.testing.assert_array_equal(compiled(np.ones(3)), [30, 30, 30])
    total = np.zeros(4)  # another shape: the state guard fails, the interpreter broadcasts...
    with pytest.raises(ValueError):
        compiled(np.ones(3))
    total = np.zeros(3)
    scale = 2  # ...and a Python scalar is a guarded constant
    np.testing.assert_array_equal(compiled(np.ones(3)), [2, 2, 2])
    np.testing.assert_array_equal(total, [1, 1, 1])
    assert pyfront.explain(compiled).compiled_calls >= 2


def step_or_fail(x):
    global total
    total = total + x
    if x.sum() > 100:
        raise ValueError("too big")
    return total


def test_store_then_raise_leaves_the_interpreters_state():
    small, big = np.ones(3), np.full(3, 50.0)
    compiled = check_state(step_or_fail, [(small,), (small,), (big,), (small,)], *module_state("total"))
    compiled_ran(compiled)


# Closure cells -------------------------------------------------------------------


def make_counter():
    hits = np.zeros(2)
    steps = 0

    def step(x):
        nonlocal hits
        hits = hits + (x > 0)
        return hits.sum() + steps

    def bump(x):
        nonlocal steps
        steps += 1
        return x

    return step, bump


def test_closure_array_counter():
    step, _ = make_counter()
    compiled = check_state(step, [(np.array([1.0, -1.0]),)] * 4, *cell_state(step, "hits"))
    compiled_ran(compiled)


def test_closure_int_counter_compiles_once():
    _, bump = make_counter()
    compiled = check_state(bump, [(np.ones(2),)] * 6, *cell_state(bump, "steps"))
    report = pyfront.explain(compiled)
    assert report.compiled_calls >= 4 and report.compilations == 1, str(report)


# Dict and list items -------------------------------------------------------------


def rnn_dict_step(state, x):
    h = state["h"]
    state["h"] = np.tanh(h @ state["w"] + x)
    state["out"] = state["h"] * 2  # a new key, read back below
    return state["out"] + h


def test_dict_item_reads_and_writes():
    rng = np.random.default_rng(0)
    state = {"h": np.zeros(3), "w": rng.standard_normal((3, 3))}
    compiled = check(rnn_dict_step, [(state, np.ones(3))] * 3)
    compiled_ran(compiled)
    # Committed into the caller's dict, keys in the interpreter's order.
    live = {"h": np.zeros(3), "w": state["w"]}
    compiled(live, np.ones(3))
    assert list(live) == ["h", "w", "out"]


def list_items(params, x):
    w, b = params[0], params[1]
    return np.tanh(x @ w + b)


def test_list_argument_items():
    rng = np.random.default_rng(1)
    params = [rng.standard_normal((3, 2)), np.zeros(2)]
    compiled = check(list_items, [(params, np.ones((4, 3)))] * 3)
    compiled_ran(compiled)


class Model:
    def __init__(self, layers, cache):
        self.layers = layers
        self.cache = cache


def model_forward(model, x):
    for i in range(2):
        x = np.tanh(x @ model.layers[i]["w"])
    model.cache["last"] = x
    return x


PARAMS = {"w": np.eye(2), "b": np.ones(2)}


def global_dict(x):
    return x @ PARAMS["w"] + PARAMS["b"]


def test_items_of_attributes_and_globals():
    rng = np.random.default_rng(2)
    model = Model([{"w": rng.standard_normal((2, 2))}, {"w": rng.standard_normal((2, 2))}], {})
    compiled_ran(check(model_forward, [(model, np.ones((3, 2)))] * 3))
    compiled = check(global_dict, [(np.ones(2),)] * 3)
    compiled_ran(compiled)
    PARAMS["w"] = np.zeros((2, 2))  # mutated between calls: read at call time
    np.testing.assert_array_equal(compiled(np.ones(2)), [1, 1])


def write_then_raise(state, x):
    state["h"] = x * 2
    if x.sum() > 100:
        raise ValueError("too big")
    return state["h"]


def test_dict_write_then_raise():
    small, big = np.ones(2), np.full(2, 60.0)
    state = {"h": np.zeros(2)}
    compiled = check(write_then_raise, [(state, small), (state, small), (state, big), (state, small)])
    compiled_ran(compiled)


class Cell:
    def __init__(self, h):
        self.h = h


def through_two_names(p, q, x):
    p.h = x * 2
    return q.h + 1


def test_objects_alias_as_at_compile_time():
    x = np.ones(2)
    same = Cell(np.zeros(2))
    compiled = pyfront.compile(through_two_names, profile_calls=1)
    for _ in range(2):
        np.testing.assert_array_equal(compiled(same, same, x), through_two_names(Cell(np.zeros(2)), same, x) * 0 + 3)
    a, b = Cell(np.zeros(2)), Cell(np.zeros(2))
    np.testing.assert_array_equal(compiled(a, b, x), [1, 1])  # distinct objects: the alias guard fails
    np.testing.assert_array_equal(a.h, [2, 2])
    report = pyfront.explain(compiled)
    assert report.compiled_calls >= 1 and report.deopts >= 1, str(report)


def test_alias_differential():
    x = np.ones(2)
    shared = Cell(np.zeros(2))
    compiled_ran(check(lambda_free_alias, [(shared, x), (shared, x)]))


def lambda_free_alias(c, x):
    return through_two_names(c, c, x)


# In-place writes into arrays the caller sees (tests/test_array_writes.py has the rest) ------------


def write_into(a, x):
    a[0] = x.sum()
    return a


def add_into_slice(model, x):
    model.h[1:3] += x
    return model.h


histogram = np.zeros(5)


def count_into_global(labels, scale):
    np.add.at(histogram, labels, scale)  # repeated labels accumulate
    histogram[labels[0]] -= 0.5  # a computed index into a global array
    histogram[histogram > 3] = 3.0
    return histogram


def test_writes_into_a_global_array():
    labels = np.array([0, 3, 3, 1, 0, 3])
    compiled = check_state(count_into_global, [(labels, 1.0), (labels[::-1].copy(), 0.5), (labels, 2.0)],
                           *module_state("histogram"))
    compiled_ran(compiled)


def test_in_place_array_writes_compile():
    compiled_ran(check(write_into, [(np.zeros(3), np.ones(2))] * 3))
    compiled_ran(check(add_into_slice, [(Cell(np.zeros(4)), np.ones(2))] * 3))


def store_in_branch(x):
    global total
    if x.sum() > 0:
        total = x * 2
    else:
        total = x * 3
    return total


def test_stores_in_computed_branches_run_in_the_interpreter():
    pos, neg = np.ones(3), -np.ones(3)
    compiled = check_state(store_in_branch, [(pos,), (neg,), (pos,), (neg,)], *module_state("total"))
    assert pyfront.explain(compiled).compiled_calls >= 0  # exact either way


# Recursion over the argument's structure ----------------------------------------------


@pyfront.compile(profile_calls=1)
def encode(t):
    if isinstance(t, np.ndarray):
        return np.tanh(t)
    return np.tanh(encode(t[0]) + encode(t[1]))


def test_recursive_tree_encoder_is_inlined_along_the_structure():
    rng = np.random.default_rng(3)
    a, b, c, d = (rng.standard_normal(4) for _ in range(4))
    tree = ((a, b), (c, (d, a)))
    compiled = check(encode.fn, [(tree,)] * 3)
    compiled_ran(compiled)
    for _ in range(3):
        np.testing.assert_allclose(encode(tree), encode.fn(tree))
    assert pyfront.explain(encode).compiled_calls > 0


class History:
    def __init__(self):
        self.W = np.ones((3, 2))
        self.losses, self.grads = [], []


LOG: list = []


def step_with_history(m, x):
    out = x @ m.W
    loss = float((out ** 2).mean())
    m.losses.append(loss)
    m.grads.append(out.sum(axis=0))
    m.losses.append(f"{loss:.3f}")
    LOG.append(loss)
    m.W = m.W - 0.01 * x.T @ out
    return loss


def test_appends_to_lists_in_state_are_committed_in_order():
    LOG.clear()
    m = History()
    compiled = check(step_with_history, [(m, np.ones((4, 3)) * k) for k in range(1, 6)])
    report = pyfront.explain(compiled)
    assert report.compiled_calls > report.verified_calls and report.compilations == 1, str(report)
    assert len(LOG) == 10  # each call once compiled or interpreted, once by the plain run


def append_then_write(m, x):
    y = x * 2.0
    m.losses.append(y)
    y[0] = -1.0  # the list holds y itself: it sees the write
    return y


def test_an_appended_array_written_later_is_the_written_array():
    report = pyfront.explain(check(append_then_write, [(History(), np.ones(3))] * 3))
    assert report.compiled_calls == 2, str(report)


def length_after_append(m, x):
    m.losses.append(float(x.sum()))
    return len(m.losses)


def append_then_rebind(m, x):
    m.losses.append(float(x.sum()))
    m.losses = []


@pytest.mark.parametrize("fn", [length_after_append, append_then_rebind])
def test_a_list_read_or_rebound_after_an_append_compiles(fn):
    report = pyfront.explain(check(fn, [(History(), np.ones((4, 3)))] * 3))
    assert report.compiled_calls > 0, str(report)
    history = History()
    kept = history.losses
    pyfront.compile(fn)(history, np.ones(2))
    assert kept[-1] == 2.0  # the list the attribute held when the call began got the item
