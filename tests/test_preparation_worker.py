"""The preparation worker (runtime/preparation_worker.py): a variant compiled in the background has its
module lowered in a child process, with the record lowering here would give."""

from __future__ import annotations

import copy
import json
import os
import sys

import numpy as np
import pytest
from pyfront.runtime import jit, preparation_worker
from pyfront.runtime.lowered_cache import code_versions
from pyfront.runtime.preparation_worker import LoweringFailed

import pyfront
from pyfront.config import Config
from pyfront.errors import Unsupported
from tests.differential import assert_same

pytestmark = pytest.mark.iree


@pytest.fixture(autouse=True)
def every_module_to_the_worker(monkeypatch):
    monkeypatch.setenv("PYFRONT_CACHE_DIR", "off")
    monkeypatch.setattr(jit, "WORKER_MIN_LINES", 0)
    assert preparation_worker.ready(timeout=120)


@pytest.fixture
def fake_worker(monkeypatch):
    """Replaces the worker by a Python program (source) that reads nothing and answers as it says."""
    def replace(program: str) -> None:
        with preparation_worker._lock:
            preparation_worker._stop()
        monkeypatch.setattr(preparation_worker, "_command", lambda: [sys.executable, "-c", program])

    yield replace
    with preparation_worker._lock:
        preparation_worker._stop()
    preparation_worker._unusable = False


class Cell:
    def __init__(self):
        self.w = np.linspace(-0.5, 0.5, 12).reshape(4, 3)
        self.steps = 0


def unrolled_step(cell, xs):
    h = np.zeros(3)
    for x in xs:
        h = np.tanh(x @ cell.w + h)
    cell.w -= 0.1 * np.outer(xs[0], h)
    cell.steps += 1
    return h.sum(), h


def summed_transposed_cube(x):
    return np.transpose(x, (2, 0, 1)).sum(axis=0)  # an order NumPy keeps but the compiler cannot know


XS = np.linspace(-1, 1, 12).reshape(3, 4)


def prepared(fn, args: tuple, background: bool) -> jit.PreparedVariant:
    return jit.prepare_variant(fn, "key", args, {}, Config(), None, background=background)


def lowered_facts(p: jit.PreparedVariant) -> str:
    """What the record gave the variant, as comparable text."""
    fields = {k: p.fields[k] for k in ("input_paths", "output_paths", "storage", "merged_stores", "pyfront_ir",
                                       "relayouts", "approximate_dtype")}
    guards = [(vars(info), repr(guard)) for info, guard in p.fields["hoisted_guards"]]
    return repr((p.lowered, p.in_place, fields, [vars(g) for g in p.fields["graph_guards"]], guards))


TABLE = np.array([[1.5, -np.inf], [np.nan, 2.0 ** -1074]])  # a constant with every kind of float


def constants_and_masks(x, i):
    y = np.where(x > 0, x, TABLE[0, 1]) + TABLE
    y[i] = 2**40 + 0.5
    if (x > 1).any():
        y = y * 2.0
    print("largest", y.max())
    return y.sum(axis=0), (y < 0).astype(np.int64)


@pytest.mark.parametrize("fn, args", [(unrolled_step, (Cell(), XS)),
                                      (constants_and_masks, (np.ones((2, 2)) * 3, 1))],
                         ids=["state and a loop", "constants, a branch and a print"])
def test_the_worker_lowers_a_module_as_this_process_does(fn, args):
    here = prepared(fn, copy.deepcopy(args), background=False)
    there = prepared(fn, copy.deepcopy(args), background=True)
    assert here.lowering is None and there.lowering is not None and there.lowered == ""
    there.take(preparation_worker.lower(there.lowering))
    assert lowered_facts(there) == lowered_facts(here)


def test_the_worker_lowers_with_the_callers_pass_settings(monkeypatch):
    default = prepared(unrolled_step, (Cell(), XS), background=False)
    monkeypatch.setenv("PYFRONT_UNROLL_BUDGET", "0")  # set here after the worker started
    monkeypatch.setenv("PYFRONT_POOL_MAX_ELEMENTS", "0")
    here = prepared(unrolled_step, (Cell(), XS), background=False)
    there = prepared(unrolled_step, (Cell(), XS), background=True)
    there.take(preparation_worker.lower(there.lowering))
    assert lowered_facts(there) == lowered_facts(here) != lowered_facts(default)
    assert "scf.for" in here.lowered and "scf.for" not in default.lowered


def test_an_unsupported_module_raises_the_same_error_from_the_worker():
    x = np.ones((2, 3, 4))
    with pytest.raises(Unsupported) as here:
        prepared(summed_transposed_cube, (x,), background=False)
    there = prepared(summed_transposed_cube, (x,), background=True)
    with pytest.raises(Unsupported) as raised:
        preparation_worker.lower(there.lowering)
    assert "another memory order" in str(raised.value)
    assert (str(raised.value), raised.value.lineno) == (str(here.value), here.value.lineno)


def test_a_module_the_worker_cannot_lower_is_an_internal_error():
    lowering = copy.copy(prepared(unrolled_step, (Cell(), XS), background=True).lowering)
    lowering.func_name = "no_such_function"
    with pytest.raises(LoweringFailed, match="in the preparation worker"):
        preparation_worker.lower(lowering)


def test_a_worker_that_dies_fails_the_compile_and_the_next_request_starts_another(fake_worker, monkeypatch):
    lowering = prepared(unrolled_step, (Cell(), XS), background=True).lowering
    real = preparation_worker._command
    fake_worker(f"print({json.dumps(list(code_versions()))!r}, flush=True); import os; os._exit(3)")
    with pytest.raises(LoweringFailed, match="died"):
        preparation_worker.lower(lowering)
    monkeypatch.setattr(preparation_worker, "_command", real)
    assert preparation_worker.lower(lowering)["lowered"]


def test_a_module_is_lowered_on_the_calling_thread_while_the_worker_starts(fake_worker):
    fake_worker("import time; time.sleep(600)")  # never ready
    assert not preparation_worker.ready()
    here = prepared(unrolled_step, (Cell(), XS), background=True)
    assert here.lowering is None and here.lowered


def test_a_worker_running_other_code_is_never_used(fake_worker):
    fake_worker("print('[\"other\"]', flush=True); import time; time.sleep(600)")
    assert not preparation_worker.ready(timeout=120)
    assert preparation_worker._unusable and preparation_worker._process is None
    here = prepared(unrolled_step, (Cell(), XS), background=True)
    assert here.lowering is None
    assert lowered_facts(here) == lowered_facts(prepared(unrolled_step, (Cell(), XS), background=False))


def test_a_function_compiled_in_the_background_runs_the_module_the_worker_lowered(monkeypatch):
    requests = []
    lower = preparation_worker.lower
    monkeypatch.setattr(preparation_worker, "lower", lambda lowering: requests.append(lowering) or lower(lowering))
    f = pyfront.compile(unrolled_step, profile_calls=1, wait_for_compile="never", compile_after=0)
    plain, compiled = Cell(), Cell()
    for _ in range(3):
        assert_same(unrolled_step(plain, XS), f(compiled, XS))
    assert pyfront.wait(f, timeout=600)
    for _ in range(2):
        assert_same(unrolled_step(plain, XS), f(compiled, XS))
    assert_same(plain.w, compiled.w)
    assert plain.steps == compiled.steps
    assert len(requests) == 1 and pyfront.explain(f).compiled_calls == 2


def test_a_forked_child_does_not_use_its_parents_worker():
    preparation_worker.start()
    assert preparation_worker._process is not None
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 iff it forgot the worker
        os._exit(0 if preparation_worker._process is None else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert preparation_worker._process is not None and preparation_worker._process.poll() is None


def test_turned_off_a_large_module_is_lowered_on_the_calling_thread(monkeypatch):
    monkeypatch.setenv("PYFRONT_PREPARATION_WORKER", "off")
    monkeypatch.setattr(preparation_worker, "lower", lambda lowering: pytest.fail("lowered in the worker"))
    prepared_here = prepared(unrolled_step, (Cell(), XS), background=True)
    assert prepared_here.lowering is None and prepared_here.lowered
