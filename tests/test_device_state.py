"""Device-resident state: training loops with user code between the calls.

Arrays that compiled code commits to Python state stay in IREE's buffers
(runtime/iree_backend.py, "Device-resident arrays"). These tests run the same
loop twice from deep copies, once with the plain function and once compiled,
and between the calls user code reads, rebinds, mutates in place (`+=`, item
assignment, `np.copyto`, writes through kept views), deep-copies and pickles
the state. Every step's result, everything the user code observed, and the
final state must equal the interpreter's exactly: the steps use arithmetic
that is exact in float64 (dyadic values), so no tolerance is needed.
"""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable

import numpy as np
import pytest
from differential import _run, assert_same, check

import pyfront
from pyfront.runtime import iree_backend

pytestmark = pytest.mark.iree


class Model:
    def __init__(self, n: int = 4):
        self.w = np.arange(n, dtype=np.float64) / 4
        self.m = np.zeros(n)
        self.steps = {"b": np.ones(n, np.int32)}


def sgd_step(model, x):
    g = model.w * 0.5 - x
    model.m = model.m * 0.5 + g
    model.w = model.w - model.m * 0.25
    model.steps["b"] = model.steps["b"] + 1
    return (model.w * x).sum()


def snapshot(model) -> dict:
    """What user code sees of the model: values, types, dtypes, flags."""
    out = {}
    for name, value in [("w", model.w), ("m", model.m), ("b", model.steps["b"])]:
        out[name] = (type(value), value.dtype, value.shape, value.flags.writeable, value.copy())
    return out


def check_loop(step: Callable, make_args: Callable[[], tuple], between: Callable, steps: int = 8,
               **options) -> pyfront.CompiledFunction:
    """Run `steps` calls of `step` plain and compiled on twin arguments; `between(args, i, log)` is user code."""
    options.setdefault("profile_calls", 1)
    compiled = pyfront.compile(step, **options)
    plain_args = make_args()
    compiled_args = copy.deepcopy(plain_args)
    plain_log, compiled_log = [], []
    for i in range(steps):
        expected, expected_error, *_ = _run(step, plain_args)
        got, error, *_ = _run(compiled, compiled_args)
        assert type(error) is type(expected_error) and str(error) == str(expected_error), (error, expected_error)
        assert_exact(expected, got, f"step {i} result")
        between(plain_args, i, plain_log)
        between(compiled_args, i, compiled_log)
        assert_exact(plain_log, compiled_log, f"after step {i}: what user code saw")
        assert_exact(plain_args, compiled_args, f"after step {i}: state")
    assert pyfront.explain(compiled).compiled_calls > 0
    return compiled


def assert_exact(expected, got, where: str) -> None:
    assert_same(expected, got, where)
    for e, g in zip(_arrays(expected), _arrays(got)):
        assert np.array_equal(e, g), f"{where}: {g} != {e} (exactly)"


def _arrays(x):
    if isinstance(x, (np.ndarray, np.generic)):
        yield np.asarray(x)
    elif isinstance(x, (tuple, list)):
        for item in x:
            yield from _arrays(item)
    elif isinstance(x, dict):
        for item in x.values():
            yield from _arrays(item)
    elif hasattr(x, "__dict__") and not isinstance(x, type):
        yield from _arrays(vars(x))


def model_args(n: int = 4):
    return lambda: (Model(n), np.linspace(-1, 1, n))


def resident(array: np.ndarray, backend: str | None = None) -> bool:
    """Whether `array` is in its device's table of resident arrays (white box); default: pyfront's backend."""
    backend = backend or pyfront.Config().backend
    entry = iree_backend._runtime(iree_backend.get_backend(backend)).resident.get(id(array))
    return entry is not None and entry() is array


# Reading between calls ---------------------------------------------------------


def test_reads_see_new_writable_arrays_each_step():
    seen = {}  # per run (keyed by its log): the w of every step

    def read(args, i, log):
        model, old = args[0], seen.setdefault(id(log), [])
        log.append(snapshot(model))
        log.append(any(model.w is w for w in old))  # a new object each step, as in the interpreter
        old.append(model.w)

    compiled = check_loop(sgd_step, model_args(), read)
    model = Model()
    for _ in range(3):
        compiled(model, np.ones(4))
    assert resident(model.w) and resident(model.m) and resident(model.steps["b"])
    assert type(model.w) is np.ndarray and model.w.flags.writeable and model.w.flags.c_contiguous


def test_device_state_off_copies():
    compiled = pyfront.compile(sgd_step, profile_calls=1, device_state=False)
    model = Model()
    for _ in range(3):
        compiled(model, np.ones(4))
    assert pyfront.explain(compiled).compiled_calls == 2
    assert not resident(model.w) and model.w.base is None


# Mutation in place between calls ------------------------------------------------


def _in_place(args, i, log):
    model = args[0]
    if i % 4 == 0:
        model.w += 1
    elif i % 4 == 1:
        model.w[0] = 5
        model.steps["b"][1] = -7
    elif i % 4 == 2:
        np.copyto(model.m, np.full(4, 0.75))
    else:
        model.m *= 2
    log.append(snapshot(model))


def test_in_place_mutation_between_calls_is_seen():
    check_loop(sgd_step, model_args(), _in_place, steps=12)


def test_in_place_mutation_on_cpu_sync():
    check_loop(sgd_step, model_args(), _in_place, steps=8, backend="cpu-sync")


def test_writes_through_kept_views():
    views_of = {}  # per run (keyed by its log)

    def views(args, i, log):
        model, kept = args[0], views_of.setdefault(id(log), [])
        if kept:
            kept[-1][...] = 3.0  # a view of the previous step's w: the current w must not change
        view = model.w[1:3]
        view *= 2  # a view of the current w: the next step must read the change
        kept.append(model.w[::2])
        rows = model.m.reshape(2, 2)
        rows[1] = -1.5
        log.append(snapshot(model))

    check_loop(sgd_step, model_args(), views)


# Rebinding, copies, pickles --------------------------------------------------------


def test_rebinding_copying_and_pickling_between_calls():
    def rebind(args, i, log):
        model = args[0]
        if i % 3 == 0:
            model.w = np.full(4, 0.5)
        elif i % 3 == 1:
            model.m = copy.deepcopy(model.m)
            model.w = pickle.loads(pickle.dumps(model.w))
        else:
            model.m = model.m.copy()[::-1]  # a non-contiguous view
        log.append(snapshot(model))

    check_loop(sgd_step, model_args(), rebind)


def test_deep_copied_and_pickled_models_train_independently():
    forks = {}  # per run (keyed by its log)

    def fork(args, i, log):
        model, copies = args[0], forks.setdefault(id(log), [])
        if i == 2:
            copies.append(copy.deepcopy(model))
            copies.append(pickle.loads(pickle.dumps(model)))
        for other in copies:
            other.w += 0.25
        log.append([snapshot(m) for m in [model, *copies]])

    compiled = check_loop(sgd_step, model_args(), fork, steps=6)
    # The compiled function trains a copy while the original keeps its values.
    model = Model()
    for _ in range(3):
        compiled(model, np.ones(4))
    twin = copy.deepcopy(model)
    before = model.w.copy()
    compiled(twin, np.ones(4))
    compiled(twin, np.ones(4))
    assert np.array_equal(model.w, before)


# Aliasing: values stored twice, passed through, constants ----------------------------


class Pair:
    def __init__(self):
        self.a = np.ones(3)
        self.b = np.arange(3.0)
        self.c = np.zeros(3)


def alias_step(p, x):
    y = p.a * 2 + x
    p.a = y
    p.b = y  # the same object twice, as in the interpreter
    p.c = p.c + 0.0
    return y.sum()


def test_a_value_stored_twice_is_one_object():
    def mutate(args, i, log):
        p = args[0]
        log.append(p.a is p.b)
        p.a[0] = 9.0  # seen through p.b too
        p.c[1] = 4.0
        log.append((p.a.copy(), p.b.copy(), p.c.copy()))

    check_loop(alias_step, lambda: (Pair(), np.ones(3)), mutate)


def passthrough_step(p, x):
    p.c = p.b
    p.b = p.a
    p.a = p.a + x
    return p.c * 1.0


def test_passed_through_state_keeps_identity():
    def check_ids(args, i, log):
        p = args[0]
        log.append((p.c.copy(), p.b.copy()))
        p.b += 1.0
        log.append(p.a.copy())

    check_loop(passthrough_step, lambda: (Pair(), np.ones(3)), check_ids)


def constant_step(p, x):
    old = p.c.sum()
    p.a = x * 0.0 + 1.0
    p.b = p.b * 0.0 + 2.0
    return old + x.sum()


def test_state_computed_from_constants_mutated_in_place():
    def mutate(args, i, log):
        p = args[0]
        p.a[0] = -1.0
        p.b[...] = 7.0
        log.append((p.a.copy(), p.b.copy()))

    check_loop(constant_step, lambda: (Pair(), np.ones(3)), mutate)


_ALIASING = """
func.func @f(%x: tensor<4xf32>, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>) {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %y = arith.addf %x, %w : tensor<4xf32>
  %r = tensor.expand_shape %w [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  return %y, %y, %c, %w, %r : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>
}
"""


@pytest.mark.parametrize("backend", ["cpu", "cpu-sync"])
def test_resident_results_own_their_memory(backend):
    """A result returned twice, a constant, a passed-through or reshaped resident input."""
    f = iree_backend.LoadedModule(iree_backend.compile_vmfb(_ALIASING, backend).vmfb, backend).function("f")
    modes = [iree_backend.RESIDENT] * 5
    x = np.arange(4, dtype=np.float32)
    y1, y2, c, _, _ = f([x, np.ones(4, np.float32)], modes)
    assert resident(y1, backend) and not resident(y2, backend) and not np.shares_memory(y1, y2)
    assert resident(c, backend)  # IREE copied the constant into a result buffer
    c[...] = -1.0
    y1[...] = 10.0  # mutated in place, then passed back: IREE reads this memory
    y, y2, c2, w, r = f([x, y1], modes)
    assert np.array_equal(c2, [1, 2, 3, 4]), "a resident result was the module's constant"
    assert np.array_equal(y, x + 10) and np.array_equal(y2, x + 10)
    # The resident input passed through (as itself and reshaped) is the caller's memory: copied.
    assert not resident(w, backend) and not resident(r, backend)
    assert np.array_equal(w, np.full(4, 10.0)) and np.array_equal(r, np.full((2, 2), 10.0))
    y1 += 1.0
    assert np.array_equal(w, np.full(4, 10.0)), "a passed-through result aliases its input"


def test_returned_state_in_place_update():
    # `check` runs each call on fresh deep copies: nothing resident is reused,
    # and the results still match.
    check(sgd_step, [model_args()() for _ in range(4)])


# Deopt and threads -----------------------------------------------------------------------


def guarded_step(model, x):
    model.m = model.m * 0.5 + x
    if model.m.sum() > 0:
        model.w = model.w - model.m * 0.25
    else:
        model.w = model.w + 1.0
    return model.w.sum()


def test_deopt_in_the_middle_leaves_the_interpreters_state():
    def flip(args, i, log):
        model, x = args
        x[...] = -x if i in (3, 4) else x  # the branch flips: an in-graph guard fails
        if i == 5:
            model.m += 100.0  # mutated in place right after a deopted call
        log.append(snapshot(model))

    compiled = check_loop(guarded_step, lambda: (Model(), np.full(4, 0.5)), flip, steps=8)
    assert pyfront.explain(compiled).compiled_calls > 0


def batch_step(model):
    model.m = model.m * 0.5 + model.x
    model.w = model.w - model.m * 0.25
    return model.w @ model.x


def test_shape_change_recompiles_and_keeps_state():
    def make():
        model = Model()
        model.x = np.full(4, 0.5)
        return (model,)

    def shrink(args, i, log):
        model = args[0]
        if i in (3, 6):  # the last batch is smaller: shape guards fail, then dims are relaxed
            n = model.w.shape[0] - 1
            model.w, model.m, model.x = model.w[:n].copy(), model.m[:n], np.full(n, -0.25)
        log.append(snapshot(model))

    check_loop(batch_step, make, shrink, steps=9)


def test_threads_train_their_own_models():
    compiled = pyfront.compile(sgd_step, profile_calls=1)
    models = [Model() for _ in range(4)]
    plain = copy.deepcopy(models)
    xs = [np.linspace(-1, 1, 4) * (k + 1) / 4 for k in range(4)]
    barrier = threading.Barrier(4)
    errors = []

    def worker(k: int) -> None:
        barrier.wait()
        try:
            for i in range(30):
                compiled(models[k], xs[k])
                if i % 7 == 0:
                    models[k].w += 0.5
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(4):
        for i in range(30):
            sgd_step(plain[k], xs[k])
            if i % 7 == 0:
                plain[k].w += 0.5
        assert_exact(vars(plain[k]), vars(models[k]), f"model {k}")
    assert pyfront.explain(compiled).compiled_calls > 0


def test_state_shared_between_two_compiled_functions():
    other = pyfront.compile(guarded_step, profile_calls=1)
    first = pyfront.compile(sgd_step, profile_calls=1)
    model, plain = Model(), Model()
    for i in range(6):
        x = np.full(4, 0.5 * (i % 3))
        assert_exact(sgd_step(plain, x), first(model, x), f"sgd {i}")
        assert_exact(guarded_step(plain, x), other(model, x), f"guarded {i}")
        model.w[i % 4] = i
        plain.w[i % 4] = i
    assert_exact(vars(plain), vars(model), "state")


# Interpreter exit ---------------------------------------------------------------------------


def test_exit_with_resident_state_is_silent(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import numpy as np, pyfront
        class M:
            pass
        def step(m, x):
            m.w = m.w * 0.5 + x
            return m.w.sum()
        f = pyfront.compile(step, profile_calls=1)
        m = M(); m.w = np.ones(1000)
        for _ in range(4):
            f(m, np.ones(1000))
        view = m.w[10:20]
        assert pyfront.explain(f).compiled_calls == 3
        print(float(m.w.sum()))
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1937.5"
    assert "leaked" not in proc.stderr and proc.stderr.strip() == "", proc.stderr
