"""Dispatch keys of constant arguments: never the variant of another object at the same address.

Functions, modules and types are keyed by identity while the key holds them
alive; slices, ranges and dtypes by value (specialize.key_of). Each test makes
its constants per call and drops them, so CPython reuses their addresses, which
an `id()` key took for the same constant.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import pyfront
from differential import assert_same, check

pytestmark = pytest.mark.iree


def _make_scale(k):
    def scale(x):
        return x * k
    return scale


def _apply(x, f):
    return f(x)


def _per_call(make, values):
    """Argument tuples built lazily, collecting garbage in between so addresses get reused."""
    x = np.linspace(-1.0, 1.0, 5)
    for v in values:
        gc.collect()
        yield (x, make(v))


def test_closure_made_per_call_is_not_another_closures_variant():
    # Before: k = 3 and 4 landed at the dead k = 2 closure's address and returned x * 2.
    # (Not through check(): its copies keep the previous closures alive longer.)
    compiled = pyfront.compile(_apply, profile_calls=1)
    x = np.linspace(-1.0, 1.0, 5)
    for k in [2.0, 2.0, 3.0, 4.0, 5.0, 3.0]:
        gc.collect()
        assert_same(_apply(x, _make_scale(k)), compiled(x, _make_scale(k)), f"k = {k}")


def _sum_over(x, r):
    t = 0.0
    for i in r:
        t = t + x[i]
    return t


def test_ranges_are_keyed_by_value():
    # Before: range(3) got the range(2) variant's answer.
    check(_sum_over, _per_call(range, [2, 2, 3, 3, 4, 1, 0]))
    # Equal ranges that differ in what the code can read.
    check(lambda x, r: x[r.start], [(np.arange(6.0), range(0)), (np.arange(6.0), range(5, 5))])


def _take(x, s):
    return x[s]


def test_slices_are_keyed_by_value():
    check(_take, _per_call(lambda n: slice(0, n), [2, 2, 3, 3, 1, 4]))
    check(_take, _per_call(lambda n: slice(n, None, -1), [4, 4, 2, 3]))


def _cast(x, d):
    return x.astype(d) * 2


def test_dtypes_are_keyed_by_value():
    # dtype objects made per call (a byte order other than native is a new object each time).
    check(_cast, _per_call(lambda t: np.dtype(t).newbyteorder("="), ["f4", "f4", "i4", "f8", "i4", "f4"]))


class _Plain:
    pass


class _ClaimsAnotherClass:
    """An instance that may say its class is another (isinstance also asks `__class__`)."""

    claimed = _Plain

    @property
    def __class__(self):
        return self.claimed


def test_keys_of_types_decided_by_type_alone_are_remembered_per_type():
    from pyfront import specialize

    for value, key in [(_Plain(), ("object", _Plain)), (np.int64(3), (np.int64,)), (np.float32(2), (np.float32,))]:
        assert specialize.key_of(value) == key
        assert specialize._KEY_OF_TYPE[type(value)] == key
        assert specialize.key_of(value, True) == key  # (relaxing concerns Python numbers, sequences, arrays)
    claims = _ClaimsAnotherClass()
    assert specialize.key_of(claims) == ("object", _ClaimsAnotherClass)
    assert _ClaimsAnotherClass not in specialize._KEY_OF_TYPE  # its next instance may claim a function's class
    claims.claimed = type(_apply)
    assert specialize.key_of(claims)[0] is _ClaimsAnotherClass and specialize.key_of(claims)[1] != "object"
    for value in [3, 2.5, (1, 2), np.ones(2)]:  # keyed by value or shape: never by type alone
        specialize.key_of(value)
        assert type(value) not in specialize._KEY_OF_TYPE
