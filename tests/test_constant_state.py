"""Python state that compiled code must read at call time, not bake in as a constant.

Default argument values, attributes of modules, classes and functions that
hold arrays or lists, and an instance attribute that shadows a method: each
may change between calls, in place (an array keeps its identity) or by
rebinding. Differential against CPython (tests/differential.py): the state is
changed between the calls that `check` makes.
"""

from __future__ import annotations

import types
from unittest import mock

import numpy as np
import pytest
from differential import check

import pyfront

pytestmark = pytest.mark.iree

X = np.arange(3.0)


def compiled_ran(compiled) -> None:
    assert pyfront.explain(compiled).compiled_calls > 0, str(pyfront.explain(compiled))


def test_an_array_default_mutated_in_place_is_seen():
    W = np.ones(3)

    def f(x, w=W):
        return x * w

    def calls():
        yield from [(X,)] * 2
        W[...] *= 5
        yield from [(X,)] * 2

    compiled_ran(check(f, calls()))


def test_new_defaults_are_seen():
    def f(x, w=2.0):
        return x * w

    def calls():
        yield from [(X,)] * 2
        f.__defaults__ = (7.0,)
        yield from [(X,)] * 2

    compiled_ran(check(f, calls()))


def scaled(x, w=np.ones(3)):
    return x * w


def uses_scaled(x):
    return scaled(x) + scaled(x, 2.0)


def test_a_helper_falling_back_to_an_array_default_is_not_compiled_with_a_stale_one():
    def calls():
        yield from [(X,)] * 2
        scaled.__defaults__[0][...] *= 3
        yield from [(X,)] * 2

    check(uses_scaled, calls())


def power(x, p=2):
    return x ** p


def uses_power(x):
    return power(x)


def test_a_helper_falling_back_to_a_replaced_default_is_not_compiled_with_the_old_one():
    def calls():
        yield from [(X,)] * 2
        power.__defaults__ = (3,)
        yield from [(X,)] * 2

    try:
        compiled_ran(check(uses_power, calls()))
    finally:
        power.__defaults__ = (2,)


def shifted(x, *, by=1.0):
    return x + by


def uses_shifted(x):
    return shifted(x)


def test_a_helper_falling_back_to_a_changed_keyword_only_default_is_not_compiled_with_the_old_one():
    def calls():
        yield from [(X,)] * 2
        shifted.__kwdefaults__["by"] = 5.0
        yield from [(X,)] * 2
        shifted.__kwdefaults__ = {"by": 7.0}
        yield from [(X,)] * 2

    try:
        compiled_ran(check(uses_shifted, calls()))
    finally:
        shifted.__kwdefaults__ = {"by": 1.0}


cfgmod = types.ModuleType("cfgmod")
cfgmod.W = np.ones(3)
cfgmod.LAYERS = [np.ones(3)]


def uses_module_array(x):
    return x * cfgmod.W


def test_a_module_attribute_array_mutated_in_place_is_seen():
    def calls():
        yield from [(X,)] * 2
        cfgmod.W *= 3
        yield from [(X,)] * 2

    compiled_ran(check(uses_module_array, calls()))


def uses_module_list(x):
    for w in cfgmod.LAYERS:
        x = x * w
    return x


def test_a_module_attribute_list_appended_to_is_seen():
    def calls():
        yield from [(X,)] * 2
        cfgmod.LAYERS.append(np.full(3, 2.0))
        yield from [(X,)] * 2

    compiled_ran(check(uses_module_list, calls()))


class C:
    k = np.ones(3)


def uses_class_array(x):
    return x + C.k


def test_a_class_attribute_array_mutated_in_place_is_seen():
    def calls():
        yield from [(X,)] * 2
        C.k *= 5
        yield from [(X,)] * 2

    compiled_ran(check(uses_class_array, calls()))


def table(x):
    return x


table.scale = np.ones(3)


def uses_function_attribute(x):
    return x * table.scale


def test_a_function_attribute_array_mutated_in_place_is_seen():
    def calls():
        yield from [(X,)] * 2
        table.scale *= 4
        yield from [(X,)] * 2

    compiled_ran(check(uses_function_attribute, calls()))


class Layer:
    def act(self, z):
        return z * 2.0

    def __call__(self, x):
        return self.act(x) + 1.0


def replacement_act(z):
    return z * 10.0


def test_an_instance_attribute_that_shadows_a_method_is_seen():
    layer = Layer()

    def calls():
        yield from [(layer, X)] * 2
        layer.act = replacement_act
        yield from [(layer, X)] * 2
        layer.act = lambda z: z * 20.0
        yield from [(layer, X)] * 2

    compiled_ran(check(Layer.__call__, calls()))


def test_mock_patch_object_on_an_instance_is_seen():
    layer = Layer()

    def calls():
        yield from [(layer, X)] * 2
        with mock.patch.object(layer, "act", replacement_act):
            yield from [(layer, X)] * 2
        yield (layer, X)

    compiled_ran(check(Layer.__call__, calls()))
