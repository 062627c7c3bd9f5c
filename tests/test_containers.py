"""Containers and dynamic Python features compile (pyfront/containers.py, state.py).

Dict displays and comprehensions, list comprehensions and generator
expressions consumed by builtins, zip/enumerate/reversed/len/sorted/sum,
dict views of dicts the caller passed or Python state holds (key sets
guarded), getattr/setattr/hasattr with compile-time names, and unpacking lists
read from state (lengths guarded): each compared with the interpreter by
`differential.check`, and each must run compiled.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from differential import check

import pyfront

pytestmark = pytest.mark.iree

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)


def compiled_ran(compiled) -> pyfront.Report:
    report = pyfront.explain(compiled)
    assert report.compiled_calls > 0, str(report)
    return report


class Model:
    names = ("w", "b")

    def __init__(self, w=A, b=B, extra=None):
        self.w, self.b = w.copy(), b.copy()
        self.params = {"w": self.w, "b": self.b}
        self.plist = [self.w, self.b]
        if extra is not None:
            self.extra = extra


# 1. Dict displays and comprehensions -------------------------------------------------


def test_dict_display_returned_fresh_with_argument_identity():
    def f(a, b):
        return {"w": a, "b": b * 2, 1: a + 1, True: b}  # True == 1: the first key, the last value

    compiled = check(f, [(A, B), (A + 1, B)])
    compiled_ran(compiled)
    r1, r2 = compiled(A, B), compiled(A, B)
    assert r1 is not r2 and list(r1) == ["w", "b", 1] and r1["w"] is A and r1[1] is B


def test_dict_display_unpacking_and_lookup():
    def f(a, d):
        e = {**d, "z": a, "w": a * 3}
        return e["w"] + e["z"] + e["b"].sum(), list(e)

    compiled = check(f, [(A, {"w": A, "b": B}), (A * 2, {"w": A, "b": B})])
    compiled_ran(compiled)


def test_dict_comprehension_over_argument_items():
    def f(params, scale):
        return {k: v * scale for k, v in params.items() if k != "skip"}

    calls = [({"w": A, "b": B, "skip": B}, 2.0), ({"w": A + 1, "b": B, "skip": B}, 2.0)]
    compiled_ran(check(f, calls))


def test_dict_key_set_guarded():
    def f(params):
        return sum(v.sum() for v in params.values())

    compiled = check(f, [({"w": A, "b": B}, ), ({"w": A, "b": B}, ), ({"b": B, "w": A}, ), ({"w": A}, )])
    report = compiled_ran(compiled)
    assert report.deopts >= 1


def test_local_dict_item_assignment_and_missing_key_raises():
    def f(a, key):
        out = {}
        for k in ("x", "y"):
            out[k] = a * len(k)
        out["x"] = out["x"] + 1
        return out[key]

    compiled = check(f, [(A, "x"), (A, "y"), (A, "q")])
    compiled_ran(compiled)


def gradients_by_layer(x, n):
    grads = [np.zeros_like(x) for _ in range(n)]
    grads[-1] = x * 2.0
    for layer in range(2, n + 1):
        grads[-layer] = grads[-layer + 1] + 1.0  # walking back with negative indices
    held = (grads, [grads])  # one list object: each place sees the items assigned later
    grads[0:1] = [x - 1.0, x]  # a slice assignment that grows the list
    return held


def a_list_item_out_of_range(x):
    grads = [x, x]
    grads[2] = x  # IndexError, raised by the interpreter
    return grads


def test_local_list_item_assignment():
    compiled = check(gradients_by_layer, [(A, 3), (A + 1, 3), (B, 2)])
    compiled_ran(compiled)
    compiled = check(a_list_item_out_of_range, [(A,)] * 3)
    assert "list assignment index out of range" in str(pyfront.explain(compiled))


def test_dict_values_iteration_refuses_mutation():
    def f(d):
        out = {"a": d["w"], "b": d["w"]}
        for v in out.values():
            out["b"] = v + 1  # Python sees the new value in the next step
        return out

    compiled = check(f, [({"w": A},), ({"w": A},)])
    assert pyfront.explain(compiled).compiled_calls == 0


def test_in_operator_on_dicts():
    def f(params, a):
        return a * 2 if "w" in params and "z" not in params else a

    compiled_ran(check(f, [({"w": A}, B), ({"w": A}, B), ({"z": A}, B)]))


# 4. getattr / setattr / hasattr --------------------------------------------------------


def test_getattr_setattr_with_compile_time_names():
    def step(model, g):
        for name in model.names:
            setattr(model, name, getattr(model, name) - 0.1 * g[name])
        return getattr(model, "w")

    calls = [(Model(), {"w": A, "b": B}), (Model(A * 2), {"w": A, "b": B})]
    compiled_ran(check(step, calls))


def test_hasattr_folded_under_a_guard():
    def f(model, x):
        if hasattr(model, "extra"):
            return x + model.extra
        return getattr(model, "extra", x * 2)

    compiled = check(f, [(Model(), B), (Model(), B), (Model(extra=B), B), (Model(extra=B), B), (Model(), B)])
    compiled_ran(compiled)


def test_setattr_to_non_object_raises_as_interpreter():
    def f(x, name):
        setattr(x, name, x)
        return x

    compiled = check(f, [(A, "foo"), (A, "foo")])
    assert pyfront.explain(compiled).compiled_calls == 0


# 2. List comprehensions and generator expressions ----------------------------------------


def test_list_comprehension_and_generators_in_builtins():
    def f(xs, n):
        sq = [x * x for x in xs if True]
        pairs = [(i, j) for i in range(n) for j in range(i) if (i + j) % 2]
        return tuple(s + 1 for s in sq), sum(x.sum() for x in xs), list(p for p in pairs), len(pairs)

    compiled_ran(check(f, [((A, A + 1, A - 1), 4), ((A * 2, A, A), 4)]))


def test_comprehension_scope_restores_outer_variable():
    def f(x):
        y = x + 1
        zs = [y * 2 for y in (x, x * 3)]
        return y, zs

    compiled_ran(check(f, [(A,), (B,)]))


def test_sum_of_bool_arrays_and_empty_sum():
    def f(m):
        return sum([m, m]), sum(x for x in ()), sum([m], m)

    compiled_ran(check(f, [(A > 0,), (A < 0,)]))


def test_generator_expression_elsewhere_runs_in_interpreter():
    def f(xs):
        g = (x * 2 for x in xs)
        return list(g), list(g)  # the second is empty

    compiled = check(f, [((A, B),), ((A, B),)])
    assert pyfront.explain(compiled).compiled_calls == 0


# 3. zip, enumerate, reversed, range, len, sorted ---------------------------------------------


def test_zip_enumerate_reversed_sorted():
    def f(xs, ys):
        out = []
        for i, (x, y) in enumerate(zip(xs, ys), 1):
            out.append(x * i + y)
        for k in sorted({"b": 1, "a": 2}):
            out.append(xs[0] if k == "a" else ys[0])
        return [o for o in reversed(out)], len(xs), list(range(len(ys)))

    compiled_ran(check(f, [((A, A), (A, A, A)), ((A + 1, A), (A, A, A))]))


def test_exhausted_iterator_is_refused():
    def f(xs):
        z = zip(xs, xs)
        first = [a + b for a, b in z]
        return first, [a for a, _ in z]

    compiled = check(f, [((A, B),), ((A, B),)])
    assert pyfront.explain(compiled).compiled_calls == 0


def test_list_growth_while_iterating_is_refused():
    def f(x):
        out = [x]
        for y in out:
            if len(out) < 3:
                out.append(y + 1)
        return out

    compiled = check(f, [(A,), (A,)])
    assert pyfront.explain(compiled).compiled_calls == 0


# 5. Unpacking lists and tuples read from state --------------------------------------------


def test_unpack_list_attribute_length_guarded():
    def f(model, x):
        w, b = model.plist
        return x @ w.T + b[0]

    m3 = Model()
    m3.plist = [A, B, B]  # unpacking raises ValueError in the interpreter
    compiled = check(f, [(Model(), B), (Model(A * 2), B), (m3, B)])
    compiled_ran(compiled)


def test_list_items_in_state_updated_by_index():
    class Opt:
        def __init__(self):
            self.m = [np.zeros_like(A), np.zeros_like(B)]

    def update(opt, model, grads):
        params = model.plist
        for i, g in enumerate(grads):
            opt.m[i] = 0.9 * opt.m[i] + g
            params[i] = params[i] - 0.1 * opt.m[i]
        return len(params)

    compiled = check(update, [(Opt(), Model(), (A, B)), (Opt(), Model(A + 1), (A, B))])
    compiled_ran(compiled)


def test_dict_items_of_attribute_and_global_tuple_unpack():
    def f(model):
        total = 0.0
        for name, value in model.params.items():
            total = total + value.sum() * len(name)
        w, b = GLOBAL_PAIR
        return total + w.sum() + b.sum()

    compiled_ran(check(f, [(Model(),), (Model(A * 3),)]))


GLOBAL_PAIR = [A, B]


# 6. Indexing with a computed integer ---------------------------------------------------------

EMB = RNG.standard_normal((5, 3)).astype(np.float32)


def test_index_with_numpy_int_arguments_wraps_and_raises():
    def f(emb, i, v):
        return np.tanh(emb[i]) * 2, v[i]

    calls = [(EMB, np.int64(2), B), (EMB, np.int64(-1), B), (EMB, np.int64(3), B),
             (EMB, np.int64(5), B), (EMB, np.int64(-6), B), (EMB, np.int32(1), B), (EMB, np.array(2), B)]
    compiled = check(f, calls)
    report = compiled_ran(compiled)
    assert report.deopts >= 2  # out of range: the guard fails, the interpreter raises IndexError


def test_index_with_items_of_an_int_array_in_a_loop():
    def f(emb, tokens, h):
        for t in range(len(tokens)):
            h = np.tanh(emb[tokens[t]] + h)
        return h

    tokens = np.array([0, 4, -2, 1], np.int64)
    compiled = check(f, [(EMB, tokens, EMB[0]), (EMB, tokens[::-1].copy(), EMB[1]), (EMB, tokens + 3, EMB[1])])
    compiled_ran(compiled)


def test_returning_a_row_view_runs_in_interpreter():
    def f(emb, i):
        return emb[i]

    compiled = check(f, [(EMB, np.int64(1)), (EMB, np.int64(2))])
    assert pyfront.explain(compiled).compiled_calls == 0


class Stack:
    """A model in the style of minimal MLP scripts: parameter lists and a tuple of arrays on self."""

    def __init__(self):
        rng = np.random.default_rng(3)
        self.Ws = [rng.standard_normal((4, 4)) for _ in range(3)]
        self.bs = [np.zeros(4) for _ in range(3)]
        self.head = (rng.standard_normal((4, 2)), np.ones(2))

    def forward(self, x):
        for W, b in zip(self.Ws[:-1], self.bs[:-1]):  # all but the last layer
            x = np.tanh(x @ W + b)
        x = x @ self.Ws[-1] + self.bs[-1]
        W, b = self.head
        return x @ W + b


def test_slices_negative_indices_and_tuples_of_state_lists_compile():
    model = Stack()
    compiled = check(Stack.forward, [(model, np.ones((2, 4)))] * 3)
    compiled_ran(compiled)


def test_a_new_layer_list_is_seen_by_the_next_call():
    model = Stack()
    compiled = check(Stack.forward, [(model, np.ones((2, 4)))] * 3)
    model.Ws = model.Ws[:2]  # one layer fewer: the slice reads two items now
    model.bs = model.bs[:2]
    assert np.array_equal(compiled(model, np.ones((2, 4))), model.forward(np.ones((2, 4))))


class Tree(list):
    pass


def weighted_sum(tree, x):
    return sum(w * x for w in tree)


def test_a_generator_over_a_list_subclass_in_state_compiles():
    compiled = check(weighted_sum, [(Tree([1.0, 2.5]), np.ones(2))] * 3)
    compiled_ran(compiled)


def test_messages_never_show_an_array_repr():
    from pyfront import semantics as S
    from pyfront.values import Known

    assert S.describe(Known(np.arange(1000.0))) == "ndarray of float64 (1000,)"


class Recorder:
    pass


def record_activations(net, x):
    """Layer code caching activations: lists stored on self, then appended to (one object in Python)."""
    net.acts, net.masks = [x], []
    h = x
    for _ in range(3):
        h = np.tanh(h * 1.5)
        net.acts.append(h)
        net.masks.append(h > 0)
    return h.sum()


def one_list_many_names(x):
    d = {"c": [x]}
    d["c"].append(x * 2)  # a list inside a dict
    a = []
    b = a
    b.append(x)  # seen through `a` too
    t = (a, 1)
    a.append(x + 1)  # and through the tuple
    v = d.values()
    d["e"] = [x]  # a dict view is live
    return d, len(a), t, list(v)


@pytest.mark.parametrize("fn, first", [(record_activations, (Recorder(),)), (one_list_many_names, ())])
def test_a_list_appended_to_is_one_object_everywhere_it_is_stored(fn, first):
    compiled = check(fn, [first + (np.ones(3) * k,) for k in range(4)])
    assert pyfront.explain(compiled).compiled_calls > 0


class Holder:
    pass


def update_each_param(params, grads, configs):
    for name, w in params.items():  # Python allows replacing the item the loop is at
        config = configs[name]
        config.setdefault("lr", 0.1)
        v = config.get("velocity", np.zeros_like(w))
        v = 0.9 * v - config["lr"] * grads[name]
        params[name] = w + v
        config["velocity"] = v
    return params


def test_replacing_the_current_item_while_iterating_a_dict_and_setdefault():
    def call(k):
        params = {"W": np.ones((2, 2)) * k, "b": np.zeros(2)}
        return params, {"W": np.full((2, 2), 0.5), "b": np.ones(2)}, {"W": {"lr": 0.1}, "b": {"lr": 0.2}}
    compiled = check(update_each_param, [call(k) for k in (1.0, 2.0, 3.0)])
    assert pyfront.explain(compiled).compiled_calls > 0


def momentum_of(config, g):
    mu = config.setdefault("momentum", 0.9)  # added to the caller's dict on the first call
    return g * config["momentum"] * mu


def test_setdefault_adds_the_key_to_the_callers_dict():
    compiled = check(momentum_of, [({"lr": 0.1}, np.ones(2) * k) for k in (1.0, 2.0, 3.0)])
    assert pyfront.explain(compiled).compiled_calls > 0


def write_ahead_of_the_loop(m, x):
    out = []
    for v in m.ws:
        m.ws[1] = x * 2.0  # the loop reads this item later: Python sees the new value
        out.append(v * 1.0)
    return out


def test_writing_an_item_a_loop_has_not_reached_runs_in_the_interpreter():
    def call(k):
        m = Holder()
        m.ws = [np.ones(2), np.zeros(2)]
        return m, np.ones(2) * k
    compiled = check(write_ahead_of_the_loop, [call(k) for k in (1.0, 2.0, 3.0)])
    assert "not reached yet" in str(pyfront.explain(compiled))


def schedules_and_floors(x, lr):
    loss = float((x ** 2).mean())
    return max(lr * 0.5, 1e-3), min(loss, 10.0), abs(x.sum()), abs(lr - 1.0), abs(x)


def extremes_as_python_compares(a, b):
    a, b = a * 1.0, b * 1.0
    return max(a, b), min(a, b), max(a, b, 0.5), min(np.float32(a), np.float32(b))


def test_min_max_abs_of_computed_scalars():
    compiled = check(schedules_and_floors, [(np.ones(3) * k, 0.1 * k) for k in (1.0, 2.0, 3.0, -1.0)])
    assert pyfront.explain(compiled).compiled_calls > 0
    pairs = [(1.0, 2.0), (3.0, 1.0), (float("nan"), 1.0), (1.0, float("nan")), (0.0, -0.0), (-0.0, 0.0), (3.0, 3.0)]
    compiled = check(extremes_as_python_compares, pairs)  # NaN, signed zeros and ties: the earlier item stays
    assert pyfront.explain(compiled).compiled_calls > 0


def mixed_types(x):
    return max(x.max(), 0.0)  # np.float64 or float, depending on the data


def test_max_of_a_numpy_scalar_and_a_float_runs_in_the_interpreter():
    compiled = check(mixed_types, [(np.ones(3) * k,) for k in (1.0, -1.0, 2.0)])
    assert "different types" in str(pyfront.explain(compiled))



def sgd_on_a_copy(params, grads, lr):
    new = copy.deepcopy(params)  # the deeplearning.ai update_parameters idiom
    for k in grads:
        new[k] -= lr * grads[k]  # in place, into the copies only
    return new


def test_deepcopy_makes_new_arrays_and_containers():
    calls = [({"w": A.copy(), "b": B.copy(), "hist": [A[0].copy(), (B.copy(), 2)]}, {"w": A, "b": B}, 0.1 * k)
             for k in range(4)]
    compiled = check(sgd_on_a_copy, calls)
    compiled_ran(compiled)
    params = calls[0][0]
    new = compiled(params, calls[0][1], 0.5)
    assert new["hist"] is not params["hist"] and new["hist"][0] is not params["hist"][0]
    assert new["hist"][1] is not params["hist"][1] and new["w"] is not params["w"]


def write_through_a_copy(p):
    q = copy.deepcopy(p)
    q["a"][0] = 7.0
    return q


def test_deepcopy_copies_an_array_reached_twice_once():
    shared = A.copy()
    calls = [({"a": shared, "b": shared},), ({"a": A.copy(), "b": A.copy()},)] * 3
    compiled = check(write_through_a_copy, calls)
    compiled_ran(compiled)
    q = compiled({"a": shared, "b": shared})
    assert q["a"] is q["b"] and q["b"][0, 0] == 7.0
    q = compiled({"a": A.copy(), "b": A.copy()})
    assert q["a"] is not q["b"] and q["b"][0, 0] != 7.0


def shallow_copies(d, lst):
    e, m = d.copy(), copy.copy(lst)
    e["new"] = d["w"] * 2.0
    m.append(e["new"])
    return e, m, [1.0] * 3 + lst.copy(), (B,) * 2


def test_shallow_copies_and_repetition_share_the_items():
    calls = [({"w": A * k}, [A, 2.0]) for k in range(4)]
    compiled = check(shallow_copies, calls)
    compiled_ran(compiled)
    d, lst = {"w": A.copy()}, [A.copy(), 2.0]
    e, m, joined, pair = compiled(d, lst)
    assert e["w"] is d["w"] and m[0] is lst[0] and joined[3] is lst[0] and joined is not lst and pair[1] is B


def test_math_functions_of_compile_time_values_fold():
    def batches(x, size):
        return [x[k * size:(k + 1) * size].sum() for k in range(math.floor(x.shape[0] / size))]
    compiled_ran(check(batches, [(np.arange(10.0) * k, 3) for k in range(3)]))


class KeepsInputs:
    """numpy-ml's layers: `forward` appends its input to a list on the layer, `backward` reads them all,
    `update` rebinds the list to a new empty one."""

    def __init__(self):
        self.X, self.W = [], np.ones((3, 2))

    def forward(self, x):
        self.X.append(x)
        return x @ self.W

    def backward(self, dy):
        grads = [x.T @ dy for x in self.X]
        return grads[-1] + len(self.X), self.X[-1].sum(), self.X[len(self.X) - 1][0]

    def step(self, x):
        out = self.backward(self.forward(x))
        self.X = []
        return out


def test_a_list_in_state_is_read_after_this_call_appended_to_it():
    layer = KeepsInputs()
    compiled = check(KeepsInputs.step, [(layer, np.ones((4, 3)) * k) for k in range(4)])
    assert pyfront.explain(compiled).compiled_calls > 0
    layer, seen = KeepsInputs(), []
    layer.X = seen
    compiled(layer, np.ones((4, 3)))
    assert len(seen) == 1 and layer.X == []  # the list the call began with got the item; the attribute a new list
    both = KeepsInputs()
    both.X.append(np.zeros((4, 3)))
    check(KeepsInputs.backward, [(both, np.ones((4, 2)))] * 3)  # an item an earlier call appended


def assign_an_appended_item(holder, x):
    holder.items.append(x)
    holder.items[-1] = x * 2  # (assigning an item appended in this call runs in the interpreter)
    return len(holder.items)


def append_while_iterating(holder, x):
    for item in holder.items:
        if len(holder.items) < 3:
            holder.items.append(item + x)
    return len(holder.items)


@pytest.mark.parametrize("fn, reason", [(assign_an_appended_item, "an item appended in this call"),
                                        (append_while_iterating, "while the loop goes through it")])
def test_appending_to_a_list_in_state_that_a_loop_or_a_store_changes_runs_in_the_interpreter(fn, reason):
    def holder():
        h = Holder()
        h.items = [np.ones(2)]
        return h
    compiled = check(fn, [(holder(), np.ones(2) * k) for k in range(3)])
    assert reason in str(pyfront.explain(compiled))


def deepcopy_of_nested_lists(x, lists):
    q = copy.deepcopy(lists)
    q[0].append(x)  # one list twice in the caller's list: both copies are one list
    return q


def test_deepcopy_of_lists_the_caller_nested_runs_in_the_interpreter():
    inner = [1.0]
    compiled = check(deepcopy_of_nested_lists, [(np.ones(2), [inner, inner]), (np.ones(2), [[1.0], [1.0]])] * 2)
    assert "inside a list the caller passed" in str(pyfront.explain(compiled))
