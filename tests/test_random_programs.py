"""Random Python + NumPy programs, compiled vs interpreted (differential fuzzing).

`program_gen.programs()` draws a function (NumPy expressions over 1-3 array
arguments of mixed dtypes and broadcast shapes (0-d arrays or NumPy scalars
among them), Python constants, ufuncs, constant-valued results, bool scalars,
operators, reductions, views and indexing, where/maximum/clip, helpers,
tuples, attribute reads and writes; writes into arrays the function made or
the caller passed (`a[i] = v`, `a[1:3] = v`, `a[:, j] = v`, `a[m] = 0`,
`a[idx] = v`), augmented assignment on subscripts, names and a state
object's attributes (`a[idx] -= v`, `box.w -= v`, `box.t += 1`), reads by
index arrays and masks (`x[np.arange(n), y]`, `x[:, idx]`, `np.take`,
`x[x > 0]`) with an int index array argument (out of range on one call, if
drawn), a Python int argument `i` in arithmetic and slices (`x[i:i + 2]`,
`k = i + 1`); and, for the interpreter, branches on computed values, loops,
`while`, global writes, `raise` and `print`). Each
program is written to its own module file (the compiler reads source with
`inspect.getsource`), imported, and checked with `differential.check` on
several calls: the same arguments (profiled, then compiled), new values, and
maybe new shapes and dtypes, or new dims for one argument only (its dims relax
to dynamic and meet the others' static ones, until NumPy rejects a size). The
check compares results, exceptions and the arguments after each call (arrays
written in place, the state object's attributes). A program built from
supported features only must also have run compiled code.

CI runs a few dozen deterministic examples (`derandomize=True`). To fuzz:

    PYFRONT_FUZZ_EXAMPLES=5000 python -m pytest -q tests/test_random_programs.py -k fuzz

(add `PYFRONT_FUZZ_SEED=<n>` for another random stream; failures print the
program's source); `python -m tests.fuzz --seeds 7 11 13 --examples 5000`
runs several streams. Known compiler divergences are pinned below as strict
xfail reproducers.
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import os
import sys
import warnings

import numpy as np
import pytest
from differential import check
from hypothesis import HealthCheck, assume, event, given, note, seed, settings
from program_gen import Program, programs

import pyfront

pytestmark = pytest.mark.iree

FUZZ_EXAMPLES = int(os.environ.get("PYFRONT_FUZZ_EXAMPLES", "0"))
# A resumed fuzz run (tests/fuzz.py --resume) skips the programs an earlier run of the
# same stream already checked, and counts the ones it checks in the progress file.
FUZZ_SKIP = int(os.environ.get("PYFRONT_FUZZ_SKIP", "0"))
FUZZ_PROGRESS = os.environ.get("PYFRONT_FUZZ_PROGRESS")
_fuzz_examples = itertools.count()
CI_EXAMPLES = 60
_modules = itertools.count()


def load(program: Program, directory) -> object:
    """Write the program into a fresh module file and import its function `f`."""
    name = f"random_program_{os.getpid()}_{next(_modules)}"
    path = directory / f"{name}.py"
    path.write_text(program.source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.f


def warns_in_interpreter(fn, program: Program) -> bool:
    """Would NumPy warn on some call? Compiled code does not reproduce warnings (a known gap)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise", divide="ignore" if program.int_div_zero else "raise"):
            for args in program.calls:
                try:
                    fn(*copy.deepcopy(args))
                except (FloatingPointError, RuntimeWarning):
                    return True
                except Exception:  # noqa: BLE001, S110 - compared by the differential check
                    pass
    return False


def run_program(program: Program, directory) -> None:
    note(program.source)
    note(f"features: {sorted(program.features)}")
    fn = load(program, directory)
    if warns_in_interpreter(fn, program):
        event("rejected: NumPy warns")
        assume(False)
    event("supported" if program.supported else "interpreter-only")
    for feature in program.features:
        event(feature)
    with warnings.catch_warnings(), np.errstate(divide="ignore" if program.int_div_zero else "warn"):
        compiled = check(fn, program.calls)
    report = pyfront.explain(compiled)
    note(str(report))
    if program.supported and not _backend_restricted(report):
        # A deopt means compiled code ran and found, e.g., an integer division by zero.
        assert report.compiled_calls + report.deopts > 0, str(report)


def _backend_restricted(report) -> bool:
    """The backend refused the program by one of its documented restrictions (PYFRONT_BACKEND=vulkan:
    float64 exp, ...): what compiles is decided for the CPU, the default."""
    return any("does not run" in reason and "backend '" in reason for reason in report.interpreter_reasons)


def _settings(examples: int, **kwargs):
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much], **kwargs)


@_settings(CI_EXAMPLES, derandomize=True)
@given(program=programs())
def test_random_programs(program, tmp_path_factory):
    run_program(program, tmp_path_factory.getbasetemp())


@pytest.mark.skipif(not FUZZ_EXAMPLES, reason="set PYFRONT_FUZZ_EXAMPLES to fuzz")
@seed(int(os.environ.get("PYFRONT_FUZZ_SEED", "0")))
@_settings(max(FUZZ_EXAMPLES, 1))
@given(program=programs())
def test_fuzz_random_programs(program, tmp_path_factory):
    index = next(_fuzz_examples)
    if index < FUZZ_SKIP:
        return
    run_program(program, tmp_path_factory.getbasetemp())
    if FUZZ_PROGRESS:
        with open(FUZZ_PROGRESS, "w") as progress:
            progress.write(f"{index + 1}\n")


# Reproducers of divergences the fuzzer found ------------------------------------------------


def scalar_transpose(x):
    return x.T


def test_transpose_of_numpy_scalar_argument_is_the_argument():
    check(scalar_transpose, [(np.float32(1.5),), (np.float32(1.5),)])


def scalar_index(x):
    return x[None]


def test_indexing_a_numpy_scalar_runs_interpreted():
    """Not a divergence: a compiler limitation the generator avoids (explain says why)."""
    compiled = check(scalar_index, [(np.float32(1.5),), (np.float32(1.5),)])
    assert "indexing a NumPy scalar" in str(pyfront.explain(compiled))


def halve_twice_with_raise(x):
    a = x * 1.0
    while a > 1:
        a = a * 0.5
    if a > 2:
        raise ValueError("too large")
    b = x * 1.0
    while b > 1:
        b = b * 0.5
    return b


def test_while_loops_around_raise_on_bool_scalar():
    """IREE 3.13 fails at run time on this module ('transient buffer has not been committed').
    Nothing was committed, so the interpreter answers, and the variant is retired."""
    compiled = check(halve_twice_with_raise, [(np.True_,)] * 3)
    report = str(pyfront.explain(compiled))
    assert "failed at run time" in report or pyfront.explain(compiled).compiled_calls == 2, report
