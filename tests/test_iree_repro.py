"""Canaries for the IREE 3.13 miscompiles in tests/iree_repro/ (README there).

Each case compiles one reproducer with IREE for generic x86-64 and asserts the
right answer. The bugs make them fail today, so they are strict xfails: when an
IREE upgrade fixes one, it XPASSes, the strict marker turns that into a
failure, and we know to revisit pyfront's work-around. The
work-arounds (`splat_sum_barrier`, and pyfront's: `splat_constant_sum`,
`mB_splat_constant`) must pass. Below them, differential tests of the Python
programs that hit the bugs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from differential import assert_same, check
from pyfront.runtime.iree_backend import LoadedModule

import pyfront

pytestmark = pytest.mark.iree

HERE = Path(__file__).parent / "iree_repro"
FLAGS = ["--iree-llvmcpu-target-cpu=generic", "--iree-input-demote-f64-to-f32=false"]
IREE_313_BUG = pytest.mark.xfail(strict=True, reason="IREE 3.13 miscompiles it (tests/iree_repro/README.md)")


def _run(name: str, function: str, inputs: list) -> list:
    from iree.compiler import compile_str

    vmfb = compile_str((HERE / name).read_text(), target_backends=["llvm-cpu"], extra_args=FLAGS)
    return LoadedModule(vmfb, "cpu-sync").function(function)(inputs)


@pytest.mark.parametrize("name, x, expected", [
    pytest.param("reduction_ignores_input.mlir", np.zeros(5, np.int64), 10, marks=IREE_313_BUG),
    pytest.param("splat_sum.mlir", np.zeros(5, np.int64), 10, marks=IREE_313_BUG),
    pytest.param("splat_sum_f32.mlir", np.zeros(5, np.float32), 10.0, marks=IREE_313_BUG),
    pytest.param("ws3.mlir", np.ones(5, np.bool_), 10, marks=IREE_313_BUG),
    pytest.param("splat_sum_barrier.mlir", np.zeros(5, np.int64), 10),
    pytest.param("splat_constant_sum.mlir", np.zeros(5, np.int64), 10),
])
def test_reduction_of_a_splat(name, x, expected):
    (got,) = _run(name, "f", [x])
    assert got == expected


@pytest.mark.parametrize("name", [pytest.param("mB.mlir", marks=IREE_313_BUG), "mB_splat_constant.mlir"])
def test_zero_d_result_overwritten_by_a_later_dispatch(name):
    v, e, flags = _run(name, "f1", [np.bool_(True)])
    assert e == pytest.approx(np.exp(2.0)) and flags.tolist() == [1]
    assert v == 2


@pytest.mark.parametrize("data_tiling", [pytest.param(True, marks=pytest.mark.xfail(
    strict=True, reason="IREE 3.13 fails to compile it with data tiling (tests/iree_repro/README.md)")), False])
def test_bool_mask_fused_with_a_batch_matmul_compiles(data_tiling):
    from iree.compiler import compile_str

    flags = FLAGS + ["--iree-dispatch-creation-data-tiling"] * data_tiling
    q, k = np.ones((2, 10, 8)), np.ones((2, 8, 10))
    mask = np.tril(np.ones((10, 10), dtype=bool))
    vmfb = compile_str((HERE / "masked_batch_matmul.mlir").read_text(), target_backends=["llvm-cpu"], extra_args=flags)
    (got,) = LoadedModule(vmfb, "cpu-sync").function("f")([q, k, mask])
    assert np.array_equal(got, np.where(mask, q @ k, -1e9))


def masked_scores(q, k, mask):
    return np.where(mask, q @ k, -1e9)


def test_masked_attention_scores_compile_without_data_tiling():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 10, 8)), rng.normal(size=(2, 8, 10))
    mask = np.tril(np.ones((10, 10), dtype=bool))
    compiled = check(masked_scores, [(q, k, mask), (q * 2, k, mask), (q, k * 0.5, mask)])
    assert pyfront.explain(compiled).compiled_calls > 0, pyfront.explain(compiled)


@pytest.mark.parametrize("name", [pytest.param("scatter_two_axes.mlir", marks=IREE_313_BUG),
                                  "scatter_two_axes_barrier.mlir"])
def test_one_reduction_read_along_two_dims(name):
    (got,) = _run(name, "f", [np.zeros((3, 3), np.float32), np.array([1, 0])])
    assert got.tolist() == [[2, 2, 1.5], [2, 2, 1.5], [2, 2, 0]]


def rows_then_columns(a, idx):
    b = a * 1
    b[idx] = 1.5
    c = b * 1
    c[:, idx] = 2
    return c


def test_scatters_along_two_dims_with_one_index():
    a = np.zeros((3, 3), np.float32)
    compiled = check(rows_then_columns, [(a, np.array([1, 0]))] * 3, verify="off")
    assert pyfront.explain(compiled).compiled_calls == 2


# The Python programs that hit the bugs: pass `materialize-splats` keeps their lowered IR
# clear of both patterns. verify="off": the compiled calls themselves are compared.
class Box:
    pass


def eq_self_sum(x):
    return (x == x).sum()


def times_zero_plus_three_sum(x):
    return (x * 0 + 3).sum()


def times_zero_plus_one_mean(x):
    return (x * 0 + 1).mean()


def where_always_sum(b):
    return np.where(b > -0.25, 2, b).sum()


def where_always_stored(b, box):
    v = np.where(b > -0.25, 2, b)
    box.value = v
    return np.exp(v)


def constant_sum_then_written(x):
    v = x * 0 + 3  # read by the sum (through an astype) and by the write: not fused on a probe (fuzz seed 7)
    total = v.sum()
    v[0] += total
    return total, v


@pytest.mark.parametrize("fn, args", [
    (constant_sum_then_written, (np.array([-2, -2], np.int32),)),
    (eq_self_sum, (np.arange(5),)),
    (times_zero_plus_three_sum, (np.arange(5),)),
    (times_zero_plus_one_mean, (np.arange(4),)),
    (where_always_sum, (np.array([True, False, True, True, False]),)),
    (where_always_stored, (np.bool_(True), Box())),
])
def test_python_programs_that_hit_the_bugs(fn, args):
    compiled = check(fn, [args] * 3, verify="off")
    assert pyfront.explain(compiled).compiled_calls == 2


def test_constant_reduction_with_a_dynamic_size_is_compiled_per_size():
    # Two sizes make the dim dynamic: no splat constant can stand for x == x then, so the
    # pass refuses and the JIT undoes the relaxation (one variant per size, each right).
    compiled = check(eq_self_sum, [(np.arange(5),), (np.arange(6),), (np.arange(7),)], verify="off")
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 2
    assert any("relaxation undone" in r and "constant, with a dynamic shape" in r for r in report.relaxations)


# An argument written in place by IREE (returned_argument_updated.mlir): the runtime hands such
# inputs over as copies and makes a returned one from the input itself (runtime/jit.py).
@IREE_313_BUG
def test_an_inserted_into_argument_that_is_also_returned():
    inserted, returned = _run("returned_argument_updated.mlir", "f", [np.zeros(3, np.int32)])
    assert inserted.tolist() == [1, 0, 1] and returned.tolist() == [0, 0, 0]


def copy_then_write(a):
    v = a.copy()
    a[::2] = True if a.dtype == bool else 7
    return v


@pytest.mark.parametrize("dtype", [np.bool_, np.int64, np.float32])
def test_a_copy_taken_before_an_in_place_write(dtype):
    compiled = check(copy_then_write, [(np.zeros(3, dtype),)] * 3, verify="off")
    assert pyfront.explain(compiled).compiled_calls == 2


def count_up(state):
    state.x = state.x + 1  # committed by compiled code: a device-resident array (device_state)


def marked_copy(state):
    y = state.x.copy()
    y[::2] = -5  # in IREE: an insert into the argument holding state.x's own memory
    return y


def test_a_device_resident_input_is_not_written_by_a_copy_then_write():
    step, peek = pyfront.compile(count_up, verify="off"), pyfront.compile(marked_copy, verify="off")
    compiled_state, plain_state = Box(), Box()
    compiled_state.x, plain_state.x = np.zeros(4, np.int64), np.zeros(4, np.int64)
    for i in range(5):
        step(compiled_state), count_up(plain_state)
        assert_same(marked_copy(plain_state), peek(compiled_state), f"call {i}")
        assert_same(plain_state.x, compiled_state.x, f"call {i}: the state the copy was taken from")
    assert pyfront.explain(peek).compiled_calls >= 2 and pyfront.explain(step).compiled_calls >= 2


# IREE 3.13's runtime refuses a dispatch with more than 32 buffer bindings when it loads the
# module, and its dispatch formation does not keep below that: `bound-dispatch-inputs` cuts long
# elementwise chains and `lower-guards` gathers its flags in groups (both once ran in the
# interpreter as "internal compiler error ... binding count 41 > 32").
def sum_of_many(xs):
    return sum(xs)


def accuracy_of_many(w, data):
    return sum(int(np.argmax(w @ x) == y) for (x, y) in data)


def test_many_inputs_into_one_fused_chain_or_one_guard_gather():
    rng = np.random.default_rng(3)
    ints = [rng.integers(-5, 5, 8) for _ in range(40)]
    compiled = check(sum_of_many, [(ints,)] * 3)
    assert pyfront.explain(compiled).compiled_calls == 2, str(pyfront.explain(compiled))
    w = rng.standard_normal((4, 6))
    data = [(rng.standard_normal((6, 1)), int(rng.integers(4))) for _ in range(40)]  # 41 subnormal guards
    compiled = check(accuracy_of_many, [(w, data)] * 3)
    assert pyfront.explain(compiled).compiled_calls == 2, str(pyfront.explain(compiled))


def sum_of_products_of_extremes(xs):
    return sum(float(x.max()) * float(x.min()) for x in xs)


MAXIMA = [np.random.default_rng(i).standard_normal((6, 1)) for i in range(40)]


def test_unrelated_single_element_ops_are_cut_into_dispatches_that_load():
    """IREE grouped the single-element ops of the 80 extremes with the running sum into one dispatch
    of 78 buffers (FormScalarDispatches; the next test); bound-dispatch-inputs cuts the group."""
    assert pyfront.explain(check(sum_of_products_of_extremes, [(MAXIMA,)] * 3)).compiled_calls == 2


def test_a_dispatch_of_too_many_buffers_is_refused_naming_the_limit(monkeypatch):
    from pyfront.passes import bound_dispatch_inputs

    monkeypatch.setenv("PYFRONT_CACHE_DIR", "off")  # (the lowering differs from the real pass's)
    monkeypatch.setattr(bound_dispatch_inputs, "_bound_single_element_groups", lambda block: None)
    report = str(pyfront.explain(check(sum_of_products_of_extremes, [(MAXIMA,)] * 3)))
    assert "more buffers than its runtime binds (dispatch requiring" in report and "internal" not in report, report


@IREE_313_BUG
def test_a_loop_carrying_a_counter_beside_an_array_compiles():
    """Bug 6: stream partitioning fails with "circular dependency" (isolate-loop-scalars works around it)."""
    _run("loop_scalar_partition_cycle.mlir", "a6", [np.zeros((300, 4)), np.zeros(300, np.int64)])


@IREE_313_BUG
def test_a_carried_flag_read_through_a_barrier_stays_true():
    """Bug 7: guard flags a loop carries, read through barriers, come back false."""
    rng = np.random.default_rng(0)
    images, labels = rng.random((300, 4)), np.eye(4)[rng.integers(0, 4, 300)]
    w01, w12 = 0.2 * rng.random((4, 4)) - 0.1, 0.2 * rng.random((4, 4)) - 0.1
    *_, flags = _run("loop_flag_barrier.mlir", "f3", [images, labels, w01, w12])
    assert np.all(np.asarray(flags) == 1), flags


@IREE_313_BUG
def test_branches_yielding_flags_computed_in_a_side_run():
    """IREE issue #24753: the call fails with OUT_OF_RANGE in hal.command_buffer.dispatch."""
    scores, y = np.array([[0.5, 2.0, -1.0], [3.0, 0.0, 0.25]]), np.array([1, 0])
    (flags,) = _run("branch_results_binding.mlir", "f", [scores, y])
    assert flags.tolist() == [1, 1, 1, 1, 0, 1, 1, 1]  # its fifth guard fails: the loss is a Python float
