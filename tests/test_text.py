"""Text made from computed values (pyfront/text.py): f-strings, str.format, % and str() of arrays
and numbers compile when the text is printed, returned or stored; the host formats it from the
call's values, so it is Python's own text. Compared with the interpreter by `differential.check`
(printed output included)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from differential import check

import pyfront
from pyfront.text import ONLY_SHOWN

pytestmark = pytest.mark.iree


class Log:
    pass


def training_step(w, x, log, epoch):
    loss = float(((x @ w) ** 2).mean())
    print(f"epoch {epoch:3d}: loss {loss:.4f}, w[0]={w[0]!r}, |w| {np.linalg.norm(w):8.3f}, ok {loss < 9}")
    print("epoch %d loss %.3e %s" % (epoch, loss, x[0]))
    print("Epoch {}: {:>10.3f} {last}".format(epoch, loss, last=str(w.sum())))
    before = f"{w}"
    w[0] = 5.0  # the text made before keeps the values it read
    log.last = "done %d: %s (%5.1f%%)" % (epoch, loss, loss)
    return before, f"{w[0]}", [str(np.float32(loss)), f"{x.shape}"]


def test_text_of_computed_values_is_pythons():
    calls = [(np.arange(3.0), np.ones((4, 3)) * k, Log(), k) for k in range(4)]
    report = pyfront.explain(check(training_step, calls))
    assert report.compiled_calls > report.verified_calls, str(report)


def concatenated(p, y):
    print("Accuracy: " + str(np.sum((p == y) / p.size)))
    message = "first " + str(p[0])
    message += ", last " + f"{p[-1]:.1f}"
    return message + "."


def test_concatenated_text_compiles():
    calls = [(np.arange(4.0) * k, np.ones(4)) for k in range(4)]
    report = pyfront.explain(check(concatenated, calls))
    assert report.compiled_calls > 0, str(report)


def progress_line(x, j):
    sys.stdout.write("\r" + " I:" + str(j) + " Error:" + str(x.sum() / 3.0)[0:5] + " ok")  # Grokking DL's progress
    sys.stdout.flush()
    written = sys.stdout.write("\n")
    print("done", flush=True)
    return x * 2, written


def test_stdout_write_and_sliced_text_compile():
    calls = [(np.arange(3.0) * k + 0.123456, k) for k in range(4)]
    report = pyfront.explain(check(progress_line, calls))
    assert report.compiled_calls > 0, str(report)


def sliced_joined_text(x):
    return (str(x[0]) + "!")[0:3]


def integer_fields(i):
    return "%03d|%x|%o" % (i.sum(), i[0], i[1]), f"{i.sum():+05d}"


def test_integer_conversions_of_integer_values():
    report = pyfront.explain(check(integer_fields, [(np.arange(4),), (np.arange(4) * 7,), (-np.arange(4),)]))
    assert report.compiled_calls > 0, str(report)


def percent_d_of_a_float(x):
    return "%d" % x.sum()  # a NaN would raise ValueError: not compiled


def d_spec_of_a_float(x):
    return f"{x.sum():d}"  # ValueError for every float: the interpreter raises it


def spec_of_an_array(x):
    return "{:.2f}".format(x)  # TypeError for arrays of rank > 0


def repeated(x):
    return f"{x.sum()}" * 2


def compared(x):
    return f"{x.sum()}" == "3.0"


def method(x):
    return "{}".format(x.max()).upper()


@pytest.mark.parametrize("fn, reason", [
    (percent_d_of_a_float, "whether it raises depends on the value"),
    (d_spec_of_a_float, "Unknown format code 'd'"),
    (spec_of_an_array, "unsupported format string passed to numpy.ndarray.__format__"),
    (repeated, ONLY_SHOWN),
    (sliced_joined_text, ONLY_SHOWN),
    (compared, ONLY_SHOWN),
    (method, ONLY_SHOWN),
])
def test_text_that_may_raise_or_is_used_as_a_str_runs_in_the_interpreter(fn, reason):
    report = pyfront.explain(check(fn, [(np.ones(3),)] * 3))
    assert report.compiled_calls == 0 and reason in str(report), str(report)
