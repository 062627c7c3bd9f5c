"""Python containers at compile time, as a mixin of the graph generator.

Lists, tuples and dicts that the function builds are front-end values
(values.py): a `Seq` of kind list or tuple, or a `Seq` of kind dict holding
(key, value) pairs in insertion order, keys compile-time constants (str, int,
bool, None, bytes, floats other than NaN, tuples of those). Their length and
keys are known when compiling; their items may be computed arrays. A
returned or printed dict is built fresh on every call (runtime/results.py),
its values the interpreter's objects (a returned argument is the caller's).

What this module compiles, always by unrolling at compile time:
- dict displays `{"w": a, **d}` and dict/list comprehensions (their own
  scope, `if` filters on compile-time values), and generator expressions
  passed straight to a builtin that consumes them whole (`list`, `tuple`,
  `dict`, `sum`, `sorted`, `min`, `max`); elsewhere a generator expression
  runs in the interpreter (it is lazy).
- iteration (`_iterate`) over tuples, lists, dicts and their views, arrays of
  a known length, and lists, tuples and dicts the caller passed or Python
  state holds: their length or key set is guarded (state.py), their items
  read at call time. `zip`, `enumerate`, `reversed` and generator
  expressions are one-shot `Iter`s: iterating one twice is refused.
- builtins over those: `list, tuple, dict, len, sum, zip, enumerate,
  reversed, sorted, min, max, any, all`, and `getattr`/`setattr`/`hasattr`
  with compile-time names (the same as `obj.name`, `obj.name = v`, and a
  folded constant under a guard).
While a loop iterates a dict or list, storing into it is refused where Python
would see the change in a later step (values of a dict, any list growth) or
raise (a new dict key); storing to an existing key while iterating keys is fine.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import itertools
import sys
import operator
from typing import Any

import numpy as np

from pyfront import indexing, text
from pyfront import semantics as S
from pyfront.errors import Unsupported
from pyfront.guards import MISSING, AliasGuard, IdentityGuard, container_type
from pyfront.loops import MAX_STATIC_UNROLL as MAX_ITEMS
from pyfront.values import DictView, FloatOrFloat64, Iter, Known, Obj, Seq, Tensor, Text

# Builtins that consume a whole iterable at once: a generator expression passed
# to them may be evaluated eagerly, in order, with the same effects.
GENERATOR_CONSUMERS = frozenset({list, tuple, dict, sum, sorted, min, max})


def make_tuple(items) -> Any:
    items = tuple(items)
    return Known(tuple(i.value for i in items)) if all(isinstance(i, Known) for i in items) else Seq(items, tuple)


def make_dict(pairs: dict) -> Seq:
    """A computed dict from {key: value} (a Python dict keeps the first key object and the last value)."""
    return Seq(tuple(Seq((Known(k), v), tuple) for k, v in pairs.items()), dict)


def is_dict_key(key: Any) -> bool:
    t = type(key)
    if t is tuple:
        return all(is_dict_key(k) for k in key)
    return t in (str, int, bool, bytes, type(None)) or (t is float and key == key)


class ContainerMixin:
    # Displays and comprehensions ------------------------------------------------------

    def visit_Dict(self, node: ast.Dict) -> Seq:
        pairs: dict = {}
        for key_node, value_node in zip(node.keys, node.values):
            if key_node is None:  # {**other}
                pairs.update(self._dict_pairs(self.visit(value_node), value_node))
            else:
                key = self._dict_key(self.visit(key_node), key_node)
                pairs[key] = self.visit(value_node)
        return make_dict(pairs)

    def visit_ListComp(self, node: ast.ListComp) -> Seq:
        items: list = []
        self._comprehension(node, lambda: items.append(self.visit(node.elt)))
        return Seq(tuple(items), list)

    def visit_DictComp(self, node: ast.DictComp) -> Seq:
        pairs: dict = {}

        def add() -> None:
            key = self._dict_key(self.visit(node.key), node.key)
            pairs[key] = self.visit(node.value)

        self._comprehension(node, add)
        return make_dict(pairs)

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> Any:
        raise Unsupported("a generator expression is lazy: only one passed straight to "
                          "list/tuple/dict/sum/sorted/min/max compiles", node)

    def _generator_argument(self, node: ast.GeneratorExp) -> Iter:
        """A generator expression consumed whole by a builtin: its items, evaluated in order."""
        items: list = []
        self._comprehension(node, lambda: items.append(self.visit(node.elt)))
        return Iter(tuple(items))

    def _comprehension(self, node: ast.AST, emit) -> None:
        """Unroll the comprehension's `for`s and `if`s, calling `emit` for each element.

        The first iterable is evaluated in the enclosing scope; the targets are
        local to the comprehension (an outer variable of the same name is
        restored afterwards)."""
        frame = self.frame
        names = frozenset(n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name))
        if names & set(frame.declared):
            raise Unsupported("a comprehension variable also declared global or nonlocal", node)
        first = self.visit(node.generators[0].iter)
        outer_locals, saved = frame.local_names, {n: frame.env.pop(n) for n in names if n in frame.env}
        frame.local_names = outer_locals | names
        self.comprehensions += 1
        try:
            self._unroll_generators(node.generators, 0, first, emit)
        finally:
            self.comprehensions -= 1
            for n in names:
                frame.env.pop(n, None)
            frame.env.update(saved)
            frame.local_names = outer_locals

    def _unroll_generators(self, generators: list, i: int, iterable: Any, emit) -> None:
        gen = generators[i]
        if gen.is_async:
            raise Unsupported("async comprehensions are not supported", gen)
        with self._iteration(iterable, gen) as items:
            for item in items:
                self._assign(gen.target, item)
                if all(self._compile_time_truth(test) for test in gen.ifs):
                    if i + 1 < len(generators):
                        self._unroll_generators(generators, i + 1, self.visit(generators[i + 1].iter), emit)
                    else:
                        emit()

    def _compile_time_truth(self, test: ast.expr) -> bool:
        value = self.visit(test)
        if not isinstance(value, Known):
            raise Unsupported("a comprehension filter on a computed value is not supported yet", test)
        return S.fold(bool, value.value).value

    # Dicts ----------------------------------------------------------------------------

    def _dict_key(self, key: Any, node: ast.AST) -> Any:
        if not isinstance(key, Known) or not is_dict_key(key.value):
            raise Unsupported(f"dict key {S.describe(key)}: keys must be compile-time str, int, bool, None, "
                              "bytes, float or tuples of those", node)
        return key.value

    def _dict_pairs(self, value: Any, node: ast.AST) -> dict:
        """{key: value} of a dict value: computed, passed by the caller or in Python state."""
        if isinstance(value, Seq) and value.kind is dict:
            return {p.items[0].value: p.items[1] for p in value.items}
        if isinstance(value, Obj) and container_type(value.example) is dict:
            return {k: self._object_item(value, k, node) for k in self._state_keys(value, node)}
        raise Unsupported(f"{S.describe(value)} is not a dict this compiler can read", node)

    def _dict_lookup(self, d: Seq, key: Any, node: ast.AST) -> Any:
        """`d[key]` of a computed dict, with Python's key equality (1 == 1.0 == True)."""
        try:
            return self._dict_pairs(d, node)[key]
        except KeyError:
            raise Unsupported(f"key {key!r} of a computed dict (the interpreter raises KeyError)", node) from None
        except TypeError as e:
            raise Unsupported(f"dict key: {e}", node) from None

    def _set_local_item(self, d: Seq, key: Any, value: Any, node: ast.AST) -> None:
        """`d[k] = v` on a dict this call built (only one name may refer to it)."""
        pairs = self._dict_pairs(d, node)
        key = self._dict_key(key, node)
        self._check_not_iterating(id(d), key not in pairs, node, key)
        pairs[key] = value
        self._replace_value(d, make_dict(pairs), node)

    def _set_list_item(self, lst: Seq, key: Any, value: Any, node: ast.AST) -> None:
        """`lst[i] = v` or `lst[i:j] = iterable` on a list this call built."""
        if not isinstance(key, Known):
            raise Unsupported("a list index that is computed at run time is not supported yet when assigning "
                              "an item of a list", node)
        items = list(lst.items)
        try:
            if type(key.value) is slice:
                items[key.value] = self._iterate(value, node)
                self._check_not_iterating(id(lst), True, node)
            else:
                index = operator.index(key.value)
                items[index] = value
                self._check_not_iterating(id(lst), False, node, index)
        except (TypeError, IndexError, ValueError) as e:
            raise Unsupported(f"assigning an item of a list: Python raises {type(e).__name__}: {e}", node) from None
        self._replace_value(lst, Seq(tuple(items), list), node)

    def _view_items(self, view: DictView, node: ast.AST) -> list:
        pairs = self._dict_pairs(view.mapping, node)
        if view.kind == "keys":
            return [Known(k) for k in pairs]
        if view.kind == "values":
            return list(pairs.values())
        return [make_tuple((Known(k), v)) for k, v in pairs.items()]

    def _contains(self, container: Any, item: Any, node: ast.AST) -> Known:
        """`item in container` for a compile-time item: dict keys, or compile-time items."""
        if not isinstance(item, Known) or isinstance(container, Iter):
            raise Unsupported("`in` on a computed value or an iterator is not supported yet", node)
        if isinstance(container, Obj) and container_type(container.example) is dict:
            keys = dict.fromkeys(self._state_keys(container, node))
        elif isinstance(container, Seq) and container.kind is dict:
            keys = dict.fromkeys(p.items[0].value for p in container.items)
        else:
            items = self._iterate(container, node)
            if not all(isinstance(i, Known) for i in items):
                raise Unsupported("`in` over computed items is not supported yet", node)
            keys = [i.value for i in items]
        return S.fold(lambda a, b: a in b, item.value, keys)

    def _keyword_items(self, mapping: Any, node: ast.AST) -> dict[str, Any]:
        """The keyword arguments `f(**mapping)` passes (str keys, as CPython requires)."""
        items = {k: Known(v) for k, v in mapping.value.items()} if (
            isinstance(mapping, Known) and type(mapping.value) is dict) else self._dict_pairs(mapping, node)
        if not all(type(k) is str for k in items):
            raise Unsupported("** of a dict whose keys are not all str (Python raises TypeError)", node)
        return items

    def _dict_get(self, mapping: Seq | Obj, args: list, kwargs: dict, node: ast.AST) -> Any:
        """`d.get(key, default=None)`: the item when the key is there (for a dict in Python state,
        under the guard of its key set), else the default."""
        _arity("dict.get", args, kwargs, 1, 2)
        key, default = args[0], args[1] if len(args) > 1 else Known(None)
        if not isinstance(key, Known) or not is_dict_key(key.value):
            raise Unsupported("dict.get with a computed key is not supported yet", node)
        return self._dict_pairs(mapping, node).get(key.value, default)

    def _dict_setdefault(self, mapping: Seq | Obj, args: list, kwargs: dict, node: ast.AST) -> Any:
        """`d.setdefault(key, default=None)`: the item when the key is there, else `d[key] = default`
        (a store, deferred for a dict in Python state) and the default."""
        _arity("dict.setdefault", args, kwargs, 1, 2)
        key, default = args[0], args[1] if len(args) > 1 else Known(None)
        if not isinstance(key, Known) or not is_dict_key(key.value):
            raise Unsupported("dict.setdefault with a computed key is not supported yet", node)
        pairs = self._dict_pairs(mapping, node)
        if key.value in pairs:
            return pairs[key.value]
        self._store_item(mapping, key, default, node)
        return default

    # Iteration ------------------------------------------------------------------------

    def _iterate(self, value: Any, node: ast.AST) -> list:
        """The values iterating `value` gives, all known when compiling (at most MAX_ITEMS)."""
        if isinstance(value, Iter):
            if value.consumed:
                raise Unsupported("iterating an iterator a second time (Python finds it exhausted) "
                                  "is not supported", node)
            value.consumed = True
            items = list(value.items)
        elif isinstance(value, DictView):
            items = self._view_items(value, node)
        elif isinstance(value, Seq):
            items = [p.items[0] for p in value.items] if value.kind is dict else list(value.items)
        elif isinstance(value, Obj) and (container_type(value.example) in (list, dict) or type(value.example) is tuple):
            items = self._state_elements(value, node)
        elif isinstance(value, Tensor) and value.pytype is np.ndarray and value.ndim >= 1:
            n = S.static_shape(value, "iterating")[0]
            if n > MAX_ITEMS:
                raise Unsupported(f"iterating more than {MAX_ITEMS} rows at compile time is not supported yet", node)
            items = [indexing.getitem(value, i) for i in range(n)]
        elif isinstance(value, Known):
            try:
                iterator = iter(value.value)
            except TypeError as e:
                raise Unsupported(str(e), node) from None
            if iterator is value.value:
                raise Unsupported("iterating a compile-time iterator object is not supported", node)
            items = [Known(v) for v in itertools.islice(iterator, MAX_ITEMS + 1)]
        else:
            raise Unsupported(f"cannot iterate over {S.describe(value)}", node)
        if len(items) > MAX_ITEMS:
            raise Unsupported(f"iterating more than {MAX_ITEMS} items at compile time is not supported yet", node)
        return items

    @contextlib.contextmanager
    def _iteration(self, value: Any, node: ast.AST):
        """`_iterate` for a loop whose body runs between items: the dict or list iterated is
        watched (see `_check_not_iterating`) until the loop ends."""
        watched = self._iterated_container(value)
        items = self._iterate(value, node)
        if watched is None:
            yield items
            return
        key, what, mapping = watched
        progress = _Progress(items, list(self._dict_pairs(mapping, node)) if what == "values" else None)
        watches = self.iterating.setdefault(key, [])
        watches.append((what, progress))
        try:
            yield progress
        finally:
            watches.pop()
            if not watches:
                del self.iterating[key]

    @staticmethod
    def _iterated_container(value: Any) -> tuple[int, str, Any] | None:
        """(id of the dict or list a loop goes through, how, the container): "keys" of a dict,
        "values" (or items) of a dict, or "elements" of a list."""
        mapping, what = (value.mapping, "keys" if value.kind == "keys" else "values") \
            if isinstance(value, DictView) else (value, "keys")
        if isinstance(mapping, Seq) and mapping.kind in (dict, list):
            return id(mapping), "elements" if mapping.kind is list else what, mapping
        if isinstance(mapping, Obj) and container_type(mapping.example) in (dict, list):
            return id(mapping.example), "elements" if container_type(mapping.example) is list else what, mapping
        return None

    def _check_not_iterating(self, container_id: int, new_key: bool, node: ast.AST, slot: Any = None) -> None:
        """A store into slot `slot` (a key or list index) of a dict or list that a loop goes through:
        the items were read when compiling, so only a slot the loop has already passed may change
        (Python would see a later one; a new key or a size change raises or is seen)."""
        for what, progress in self.iterating.get(container_id, ()):
            if new_key or what != "keys" and not progress.passed(slot):
                raise Unsupported("changing a dict or list item that a loop has not reached yet (or its size) "
                                  "while the loop goes through it is not supported", node)

    # Builtins -------------------------------------------------------------------------

    def _call_builtin(self, fn: Any, args: list, kwargs: dict, node: ast.AST) -> Any:
        """Builtins over containers and objects; MISSING when `fn` is not one of them."""
        try:
            handler = BUILTIN_HANDLERS.get(fn)
        except TypeError:  # unhashable
            handler = None
        if handler is None:
            return MISSING
        return handler(self, args, kwargs, node)

    def _builtin_list(self, args, kwargs, node):
        _arity("list", args, kwargs, 0, 1)
        return Seq(tuple(self._iterate(args[0], node)) if args else (), list)

    def _builtin_tuple(self, args, kwargs, node):
        _arity("tuple", args, kwargs, 0, 1)
        if not args:
            return Known(())
        value = args[0]
        if isinstance(value, Known) and type(value.value) is tuple or isinstance(value, Seq) and value.kind is tuple \
                or isinstance(value, Obj) and type(value.example) is tuple:
            return value  # tuple(t) is t
        return make_tuple(self._iterate(value, node))

    def _builtin_dict(self, args, kwargs, node):
        _arity("dict", args, {}, 0, 1)
        pairs: dict = {}
        if args:
            source = args[0]
            if isinstance(source, (Seq, Obj)) and (getattr(source, "kind", None) is dict
                                                   or container_type(getattr(source, "example", None))
                                                   is dict):
                pairs.update(self._dict_pairs(source, node))
            else:
                for item in self._iterate(source, node):
                    key, value = self._unpack(item, 2, node)
                    pairs[self._dict_key(key, node)] = value
        for name, value in kwargs.items():
            pairs[name] = value
        return make_dict(pairs)

    def _builtin_copy(self, args, kwargs, node):
        _arity("copy.copy", args, kwargs, 1, 1)
        return self._copied(args[0], False, node)

    def _builtin_deepcopy(self, args, kwargs, node):
        _arity("copy.deepcopy", args, kwargs, 1, 1)
        return self._copied(args[0], True, node)

    def _copied(self, value: Any, deep: bool, node: ast.AST) -> Any:
        """`copy.deepcopy(value)` (deep) or `copy.copy(value)`, `d.copy()`, `lst.copy()`: new lists,
        dicts and arrays where Python's copy module makes new ones, the value itself where it is
        immutable. A deep copy copies an object reached twice once (its memo), so the copies share
        as the originals did; the caller's objects it reads must alias at call time as when
        compiling (an AliasGuard), or the copy would share differently."""
        memo: dict = {}
        inputs: dict[str, tuple] = {}  # path -> (path, the object there when compiling)

        def identity(v: Any) -> tuple:
            if isinstance(v, Obj):
                inputs.setdefault(str(v.path), (v.path, v.example))
                return ("object", id(v.example))
            seen = self._input_arrays.get(id(v)) if isinstance(v, Tensor) else None
            if seen is not None and seen[0] is v:
                inputs.setdefault(str(v.source), (v.source, seen[1]))
                return ("object", id(seen[1]))
            return ("known", id(v.value)) if isinstance(v, Known) else ("value", id(v))

        def copy_of(v: Any) -> Any:
            key = identity(v)
            if key not in memo:
                memo[key] = one_copy(v)
            return memo[key]

        def item(v: Any) -> Any:
            return copy_of(v) if deep else v

        def one_copy(v: Any) -> Any:
            if isinstance(v, Known) and type(v.value) in (list, dict, tuple):
                v = self._from_python(v.value) if type(v.value) is not tuple \
                    else Seq(tuple(Known(i) for i in v.value), tuple)
            if isinstance(v, Known):
                if type(v.value) is np.ndarray:
                    return Tensor(S.to_tensor(v).value, np.ndarray)
                if v.value is None or isinstance(v.value, (bool, int, float, complex, str, bytes, np.generic)):
                    return v
            elif isinstance(v, Tensor):
                # An ndarray or NumPy scalar is a new object; a Python number is itself.
                return Tensor(v.value, v.pytype) if v.pytype is np.ndarray or issubclass(v.pytype, np.generic) else v
            elif isinstance(v, (Text, FloatOrFloat64)):
                return v
            kind = v.kind if isinstance(v, Seq) else type(v.example) if isinstance(v, Obj) else None
            if deep and isinstance(v, Seq) and v.source is not None and any(
                    isinstance(i, Seq) and i.kind is not tuple for i in v.items):
                # A list the caller passed holds lists: which of them are one object is not known here.
                raise Unsupported("copy.deepcopy of lists or dicts inside a list the caller passed is not "
                                  "supported yet", node)
            if kind is dict:
                return make_dict({k: item(x) for k, x in self._dict_pairs(v, node).items()})
            if kind is list:
                return Seq(tuple(item(x) for x in self._iterate(v, node)), list)
            if kind is tuple:  # a tuple whose items a copy keeps is itself
                items = self._iterate(v, node)
                copies = [item(x) for x in items]
                return v if all(a is b for a, b in zip(copies, items)) else make_tuple(copies)
            raise Unsupported(f"copy.{'deepcopy' if deep else 'copy'} of {S.describe(v)} is not supported", node)

        result = copy_of(value)
        if len(inputs) > 1:
            ids: dict[int, int] = {}
            groups = tuple(ids.setdefault(id(example), len(ids)) for _, example in inputs.values())
            self.state_guards.append(AliasGuard(tuple(p for p, _ in inputs.values()), groups, self._site(node)))
        return result

    def _builtin_len(self, args, kwargs, node):
        _arity("len", args, kwargs, 1, 1)
        value = args[0]
        if isinstance(value, Known):
            return S.fold(len, value.value)
        if isinstance(value, Seq):
            return Known(len(value.items))
        if isinstance(value, DictView):
            return Known(len(self._dict_pairs(value.mapping, node)))
        if isinstance(value, Obj):
            return Known(self._state_len(value, node))
        if isinstance(value, Tensor) and value.pytype is np.ndarray and value.ndim:
            return S.shape(value).items[0] if value.shape[0] is None else Known(value.shape[0])
        if isinstance(value, Text):
            raise Unsupported(f"len(): {text.ONLY_SHOWN}", node)
        raise Unsupported(f"len() of {S.describe(value)} is not supported (Python raises TypeError)", node)

    def _builtin_sum(self, args, kwargs, node):
        _arity("sum", args, {}, 1, 2)
        if set(kwargs) - {"start"}:
            raise Unsupported(f"sum() got unexpected keyword arguments {sorted(kwargs)}", node)
        start = args[1] if len(args) > 1 else kwargs.get("start", Known(0))
        items = self._iterate(args[0], node)
        if isinstance(start, Known) and all(isinstance(i, Known) for i in items):
            return S.fold(sum, [i.value for i in items], start.value)
        if sys.version_info >= (3, 12) and any(isinstance(i, Tensor) and i.pytype is float for i in items):
            raise Unsupported("sum() of Python floats uses compensated summation since Python 3.12", node)
        total = start
        for item in items:
            total = self._binop(ast.Add, total, item)
        return total

    def _builtin_zip(self, args, kwargs, node):
        if kwargs:
            raise Unsupported("zip(..., strict=...) is not supported yet", node)
        columns = [self._iterate(a, node) for a in args]
        return Iter(tuple(make_tuple(row) for row in zip(*columns)))

    def _builtin_enumerate(self, args, kwargs, node):
        _arity("enumerate", args, {}, 1, 2)
        start = args[1] if len(args) > 1 else kwargs.get("start", Known(0))
        if not isinstance(start, Known) or type(start.value) is not int or set(kwargs) - {"start"}:
            raise Unsupported("enumerate() with a start other than a compile-time int", node)
        items = self._iterate(args[0], node)
        return Iter(tuple(make_tuple((Known(start.value + i), item)) for i, item in enumerate(items)))

    def _builtin_reversed(self, args, kwargs, node):
        _arity("reversed", args, kwargs, 1, 1)
        value = args[0]
        if isinstance(value, Known):
            steps = value.value[::-1] if type(value.value) is range else None
            return Iter(tuple(Known(v) for v in S.fold(lambda v: list(reversed(v)), value.value).value), steps=steps)
        if isinstance(value, Iter):
            raise Unsupported("reversed() of an iterator raises TypeError", node)
        return Iter(tuple(reversed(self._iterate(value, node))))

    def _builtin_sorted(self, args, kwargs, node):
        items = self._iterate(args[0], node) if len(args) == 1 else None
        if items is None or not all(isinstance(i, Known) for i in items) or \
                not all(isinstance(v, Known) for v in kwargs.values()):
            raise Unsupported("sorted() of computed values is not supported yet", node)
        return self._from_python(S.fold(sorted, [i.value for i in items],
                                        **{k: v.value for k, v in kwargs.items()}).value)

    def _builtin_reduce(self, fn, args, kwargs, node):
        """min/max/any/all: folded when every item is a compile-time value."""
        if len(args) == 1 and not isinstance(args[0], Known):
            items = self._iterate(args[0], node)
            if all(isinstance(i, Known) for i in items) and all(isinstance(v, Known) for v in kwargs.values()):
                return S.fold(fn, [i.value for i in items], **{k: v.value for k, v in kwargs.items()})
        if all(isinstance(a, Known) for a in args + list(kwargs.values())):
            return S.fold(fn, *(a.value for a in args), **{k: v.value for k, v in kwargs.items()})
        if fn in (min, max) and len(args) >= 2 and not kwargs:
            if len(args) == 2 and len({_python_type(a) for a in args}) == 2:
                return self._speculated_extreme(fn, *args, node)
            return _scalar_extreme(fn, args, node)
        raise Unsupported(f"{fn.__name__}() of computed values is not supported yet", node)

    def _speculated_extreme(self, fn, a: Any, b: Any, node: ast.AST) -> Any:
        """`min(1.0, max_norm / norm)` of two scalars of different types: Python returns one of the
        two objects, `b` where it is strictly smaller (greater for max), so the result's type
        depends on the data. The profile's result type says which one it returned; compiled code
        returns that one under a guard that the comparison still chooses it."""
        observed = self.profile.site(node) if self.profile is not None and self.frame.fn is self.fn else None
        types_seen = {fact[0] for fact in observed.facts} if observed is not None else set()
        scalars = all(isinstance(v, Tensor) and v.ndim == 0 and v.dtype.kind in "fiu" or isinstance(v, Known)
                      and type(v.value) in (float, int) and abs(v.value) < 2 ** 53 for v in (a, b))
        if len(types_seen) != 1 or not scalars or not S.can_guard():
            _scalar_extreme(fn, [a, b], node)  # raises, saying why
        (returned,) = types_seen
        if returned not in (_python_type(a), _python_type(b)):
            raise Unsupported(f"{fn.__name__}() returned a {returned.__name__} when profiled", node)
        later_wins = S.truth(S.ufunc(np.less if fn is min else np.greater, b, a))
        second = returned is _python_type(b)
        S.guard(later_wins if second else S.logical_not(later_wins), "branch",
                f"{fn.__name__}() returned its {'second' if second else 'first'} argument when profiled")
        return b if second else a

    def _builtin_abs(self, args, kwargs, node):
        """`abs(x)`: NumPy's absolute for arrays and NumPy scalars (their __abs__), fabs for a float."""
        _arity("abs", args, kwargs, 1, 1)
        (x,) = args
        if isinstance(x, Known):
            return S.fold(abs, x.value)
        if isinstance(x, Tensor) and x.pytype is float:
            return Tensor(S.ufunc(np.absolute, Tensor(x.value, np.float64)).value, float)
        if isinstance(x, Tensor) and x.pytype not in (int, bool):
            return S.ufunc(np.absolute, x)
        raise Unsupported(f"abs() of {S.describe(x)} is not supported yet", node)

    def _builtin_getattr(self, args, kwargs, node):
        _arity("getattr", args, kwargs, 2, 3)
        obj, name = args[0], _attribute_name(args[1], "getattr", node)
        if len(args) == 3:
            present = self._builtin_hasattr(args[:2], {}, node).value
            return self._attribute(obj, name, node) if present else args[2]
        return self._attribute(obj, name, node)

    def _builtin_setattr(self, args, kwargs, node):
        _arity("setattr", args, kwargs, 3, 3)
        self._store_attr(args[0], _attribute_name(args[1], "setattr", node), args[2], node)
        return Known(None)

    def _builtin_hasattr(self, args, kwargs, node):
        _arity("hasattr", args, kwargs, 2, 2)
        obj, name = args[0], _attribute_name(args[1], "hasattr", node)
        if isinstance(obj, Obj):
            return self._has_attr(obj, name, node)
        if isinstance(obj, Known) and isinstance(obj.value, (type(builtins), type)):
            attr = getattr(obj.value, name, MISSING)
            self._guard(IdentityGuard("attr", obj.value, name, attr, self._site(node)))
            return Known(attr is not MISSING)
        if isinstance(obj, Known):
            return S.fold(hasattr, obj.value, name)
        raise Unsupported(f"hasattr of {S.describe(obj)} is not supported yet", node)

    def _from_python(self, value: Any) -> Any:
        """A compile-time result as a front-end value: lists and dicts are fresh containers
        of every call (a Known list would be one object shared by all calls)."""
        if type(value) is list:
            return Seq(tuple(self._from_python(v) for v in value), list)
        if type(value) is dict:
            return make_dict({k: self._from_python(v) for k, v in value.items()})
        return Known(value)


def _python_type(v: Any) -> type:
    return v.pytype if isinstance(v, Tensor) else type(v.value) if isinstance(v, Known) else type(v)


def _scalar_extreme(fn, items: list, node: ast.AST) -> Tensor:
    """`max(a, b, ...)` / `min(...)` of scalars of one Python type (`max(lr * decay, 1e-4)`): as
    Python compares, left to right, keeping the earlier item unless a later one is strictly
    greater (smaller), so NaN and ties come out as in the interpreter."""
    pytypes = {i.pytype if isinstance(i, Tensor) else type(i.value) for i in items}
    if len(pytypes) != 1 or any(isinstance(i, Tensor) and i.ndim for i in items) or \
            any(isinstance(i, Known) and not isinstance(i.value, (int, float, np.generic)) for i in items):
        raise Unsupported(f"{fn.__name__}() of values of different types, or of arrays (the result's type "
                          "would depend on the data), is not supported yet", node)
    (pytype,) = pytypes
    if pytype is bool:
        raise Unsupported(f"{fn.__name__}() of computed bools is not supported yet", node)
    if any(isinstance(i, Tensor) and (i.source is not None or i.either is not None) for i in items):
        raise Unsupported(f"{fn.__name__}() of an argument or state value itself is not supported yet "
                          "(Python returns that very object)", node)
    beats = np.greater if fn is max else np.less
    best = items[0]
    for item in items[1:]:
        chosen = S.where(S.ufunc(beats, item, best), item, best)
        best = Tensor(chosen.value, pytype)
    return best


class _Progress:
    """The items a loop goes through (read when compiling) and how many it has reached."""

    def __init__(self, items: list, keys: list | None):
        self.items, self.keys, self.reached = items, keys, 0  # keys: a dict's, in order; None: a list's

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self):
        for i, item in enumerate(self.items):
            self.reached = i + 1
            yield item

    def passed(self, slot: Any) -> bool:
        """Whether the item at `slot` was read already (the current one included)."""
        if self.keys is not None:
            return slot in self.keys[:self.reached]
        return type(slot) is int and slot % len(self.items) < self.reached if self.items else False


def _arity(name: str, args: list, kwargs: dict, least: int, most: int) -> None:
    if kwargs or not least <= len(args) <= most:
        raise Unsupported(f"{name}() with these arguments is not supported (or raises TypeError)")


def _attribute_name(name: Any, fn: str, node: ast.AST) -> str:
    if not isinstance(name, Known) or type(name.value) is not str:
        raise Unsupported(f"{fn}() with an attribute name that is not a compile-time str", node)
    return name.value


BUILTIN_HANDLERS = {
    list: ContainerMixin._builtin_list,
    tuple: ContainerMixin._builtin_tuple,
    dict: ContainerMixin._builtin_dict,
    copy.copy: ContainerMixin._builtin_copy,
    copy.deepcopy: ContainerMixin._builtin_deepcopy,
    len: ContainerMixin._builtin_len,
    sum: ContainerMixin._builtin_sum,
    zip: ContainerMixin._builtin_zip,
    enumerate: ContainerMixin._builtin_enumerate,
    reversed: ContainerMixin._builtin_reversed,
    sorted: ContainerMixin._builtin_sorted,
    getattr: ContainerMixin._builtin_getattr,
    setattr: ContainerMixin._builtin_setattr,
    hasattr: ContainerMixin._builtin_hasattr,
    abs: ContainerMixin._builtin_abs,
    **{fn: (lambda self, args, kwargs, node, fn=fn: self._builtin_reduce(fn, args, kwargs, node))
       for fn in (min, max, any, all)},
}

