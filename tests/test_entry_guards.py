"""guards.first_changed: identity guards read in batches report exactly what one-by-one checks report."""

import types

import pytest

from pyfront.guards import MISSING, IdentityGuard, first_changed


def _guards(container, kind: str, names: list[str]) -> list[IdentityGuard]:
    get = (lambda n: container.get(n, MISSING)) if kind == "item" else (lambda n: getattr(container, n, MISSING))
    return [IdentityGuard(kind, container, n, get(n), f"site-{n}") for n in names]


def _one_by_one(guards):
    return next((g for g in guards if not g.holds()), None)


def test_batched_identity_checks_report_the_first_failing_guard_in_order():
    module = types.SimpleNamespace(a=object(), b=object(), c=object())
    namespace = {"x": object(), "y": object()}
    guards = _guards(module, "attr", ["a", "b"]) + _guards(namespace, "item", ["x", "y"])
    guards += _guards(module, "attr", ["c"])  # the same container again, after others
    check = first_changed(guards)
    assert check() is None
    for change in (lambda: setattr(module, "c", object()), lambda: namespace.__setitem__("y", 1),
                   lambda: delattr(module, "b"), lambda: namespace.pop("x")):
        change()
        assert check() is _one_by_one(guards) is not None
    module.a = None  # now the first guard fails
    assert check() is guards[0]


def test_an_exception_while_reading_is_raised_as_by_the_guard_that_reads():
    class Raises:
        @property
        def p(self):
            raise ValueError("read")

    obj = Raises()
    guards = [IdentityGuard("attr", obj, "q", MISSING, "s1"), IdentityGuard("attr", obj, "p", None, "s2")]
    obj.q = 1  # the first guard fails before the property is read one by one
    assert first_changed(guards)() is guards[0]
    del obj.q
    with pytest.raises(ValueError, match="read"):
        first_changed(guards)()


def test_guarded_absences_hold_without_the_one_by_one_fallback():
    class Globals(dict):  # counts the one-by-one reads (IdentityGuard "item" checks use .get)
        gets = 0

        def get(self, key, default=None):
            Globals.gets += 1
            return super().get(key, default)

    namespace = Globals(x=object(), y=object())
    guards = _guards(namespace, "item", ["x", "y", "isinstance"])  # 'isinstance' is absent: MISSING expected
    check = first_changed(guards)
    Globals.gets = 0
    assert check() is None
    assert Globals.gets == 1  # only the absence is checked on its own: x and y held as one batch
    namespace["isinstance"] = isinstance
    assert check() is guards[2]
