"""Python state in compiled code, as a mixin of the graph generator (JANUS §4.2.3).

Reads: an attribute, global, closure cell or dict/list item that holds an
array is read at call time (a `load_*` op, lowered to a function input); one
that holds an immutable value becomes a constant protected by a guard; one
that holds an object is followed further. Modules, classes and functions are
constants, but their attributes that may change in place (arrays, lists,
objects) are read at call time through the path that reached them
(`_namespace_attr`), and a method found on an object's class is guarded
against an instance attribute that would shadow it. Writes: storing an array to an
attribute, global (`global g`), cell (`nonlocal c`) or dict item emits a
`store_*` op; later reads in the same call see the stored value, and the
runtime commits every store only after every guard held, keeping the
identities the interpreter would give. Objects written through different
paths must alias as they did at compile time (an AliasGuard checks it).
"""

from __future__ import annotations

import ast
import enum
import inspect
import types
from typing import Any

import numpy as np

from pyfront import indexing
from pyfront import semantics as S
from pyfront.dialects import core
from pyfront.dialects.mlir import ir
from pyfront.dialects.state_path import Path
from pyfront.dialects.types import object_type, tensor_type
from pyfront.callables import uncompiled
from pyfront.errors import Unsupported
from pyfront.layout import REASON as LAYOUT_REASON
from pyfront.layout import c_ordered
from pyfront.grad_calls import grad_function_type
from pyfront.guards import MISSING, AliasGuard, IdentityGuard, StateGuard, container_type, has_plain_attr
from pyfront.draws import generator_spec
from pyfront.runtime.host_draws import is_generator
from pyfront.specialize import (ArraySpec, ConstSpec, HasAttrSpec, KeysSpec, LengthSpec, ObjectSpec, OwnAttrSpec,
                                ScalarSpec, is_constant)
from pyfront.values import BoundMethod, Known, Obj, Seq, Tensor, Text


class RuntimeState(Exception):
    """Python scalars at these paths change every call (the function stores new values there):
    generate the graph again reading them at run time (graphgen.generate)."""

    def __init__(self, paths: frozenset):
        super().__init__(", ".join(sorted(paths)))
        self.paths = paths


class StateMixin:
    def _assign_attribute(self, target: ast.Attribute, value: Any) -> None:
        self._store_attr(self.visit(target.value), target.attr, value, target)

    def _store_attr(self, obj: Any, name: str, value: Any, node: ast.AST) -> None:
        """`obj.name = value` (also `setattr(obj, "name", value)`): a deferred store_attr."""
        if not isinstance(obj, Obj):
            raise Unsupported(f"assigning attribute {name!r} of {S.describe(obj)}", node)
        self._check_plain_object(obj.example, setting=True)
        if (id(obj.example), name) in self.carried_slots:  # in a real loop: the loop stores it after
            self.stored_attrs[(id(obj.example), name)] = value
            return
        path = obj.path.attr(name)
        self._check_storable(value, f"attribute {name!r}", node)
        if isinstance(value, Tensor):
            core.STORE_ATTR.build([obj.value, value.value], [], name=name)
        self.stored_attrs[(id(obj.example), name)] = value
        self._record_store(path, value, obj, ("attr", name), node)

    def _assign_item(self, target: ast.Subscript, value: Any) -> None:
        self._store_item(self.visit(target.value), self.visit(target.slice), value, target)

    def _store_item(self, base: Any, key: Any, value: Any, target: ast.Subscript) -> None:
        """`base[key] = value`, `base` and `key` evaluated."""
        if isinstance(base, Tensor) or isinstance(base, Known) and type(base.value) is np.ndarray:
            self._write_local_array(target, base, key, value)
            return
        if isinstance(base, Seq) and base.kind is dict:
            self._set_local_item(base, key, value, target)
            return
        if isinstance(base, Seq) and base.kind is list and base.source is None:
            self._set_list_item(base, key, value, target)
            return
        if not isinstance(base, Obj) or container_type(base.example) not in (dict, list):
            raise Unsupported(f"assigning an item of {S.describe(base)} is not supported yet "
                              "(only items of dicts and lists the caller passed or Python state holds)", target)
        if not isinstance(key, Known):
            raise Unsupported("a dict key or list index must be a compile-time value", target)
        attr = self._item_key(key.value, base.example, target)
        if container_type(base.example) is list:
            if key.value >= self._state_len(base, target):
                raise Unsupported(f"{base.path}[{key.value!r}] = ...: list assignment index out of range", target)
            if key.value >= len(base.example):
                raise Unsupported(f"assigning {base.path}[{key.value!r}], an item appended in this call, is not "
                                  "supported yet", target)
        self._check_not_iterating(id(base.example), container_type(base.example) is dict and key.value not in
                                  base.example, target, key.value)
        self._check_storable(value, f"{base.path}[{key.value!r}]", target)
        if isinstance(value, Tensor):
            core.STORE_ITEM.build([base.value, value.value], [], key=attr)
        self.stored_items[(id(base.example), key.value)] = value
        self._record_store(base.path.item(key.value), value, base, ("item", key.value), target)

    def _write_local_array(self, target: ast.Subscript, base: Tensor | Known, key: Any, value: Any) -> None:
        """`a[key] = value` for an array `a` (buffers.py: every name, view and caller sees the write)."""
        self._write_item(base, indexing.as_key(key), value, target)

    def _ufunc_at(self, ufunc: np.ufunc, args: list, kwargs: dict, node: ast.Call) -> Known:
        """`np.add.at(a, key, v)` (unbuffered: repeated indices accumulate), a write into `a`."""
        if kwargs or len(args) != 3 or len(node.args) != 3:
            raise Unsupported(f"np.{ufunc.__name__}.at is supported with three positional arguments", node)
        base = args[0]
        target = self._writable(base, node)
        self._write_array(base, indexing.add_at(target, indexing.as_key(args[1]), args[2], ufunc), node)
        return Known(None)

    def _append_to_state_list(self, lst: Obj, args: list, kwargs: dict, node: ast.AST) -> Known:
        """`lst.append(v)` on a list in Python state: deferred, committed with the stores (after
        every guard held) in program order, to the list object the path held when the call began
        (where `lst` was read). Later reads in the call see the list's items, then the appended ones
        (`_appended_to`: numpy-ml's layers append their inputs in `forward` and read them in `backward`)."""
        if kwargs or len(args) != 1:
            raise Unsupported("list.append takes exactly one argument (Python raises TypeError)", node)
        self._note_object(lst, node)
        self._check_storable(args[0], f"an item appended to {lst.path}", node)
        self._check_not_iterating(id(lst.example), True, node)
        self.appends.append((lst.path, args[0]))
        self.appended_items.setdefault(id(lst.example), []).append(args[0])
        return Known(None)

    def _appended_to(self, obj: Obj) -> list:
        """The items this call appended so far to the list in state that `obj` is."""
        return self.appended_items.get(id(obj.example), [])

    def _check_storable(self, value: Any, what: str, node: ast.AST) -> None:
        """Stores commit what the interpreter would have stored: computed arrays and scalars (a
        Python int or float that changes every call is read back at run time, `runtime_state`),
        constants, the objects the call read, and tuples, lists and dicts of those."""
        if not _storable(value):
            raise Unsupported(f"storing {S.describe(value)} to {what} is not supported yet", node)
        if self.hoist_points:
            raise Unsupported(f"storing to {what} inside a branch or loop on a computed value is not supported yet",
                              node)

    def _store_root(self, name: str, value: Any, node: ast.AST) -> None:
        """`g = value` after `global g` / `nonlocal g`: a deferred store_global / store_cell."""
        frame = self.frame
        what = f"{frame.declared[name]} {name!r}"
        if frame.declared[name] == "global":
            path = self._root_path("item", frame.fn.__globals__, name)
        else:
            cell = frame.fn.__closure__[frame.fn.__code__.co_freevars.index(name)]
            path = self._root_path("cell", cell, name)
        if path is None:
            raise Unsupported(f"assigning {what} of another module or function is not supported yet", node)
        self._check_storable(value, what, node)
        if isinstance(value, Tensor):
            op = core.STORE_GLOBAL if path.root.startswith("global:") else core.STORE_CELL
            op.build([value.value], [], name=path.root.split(":", 1)[1])
        self.stored_roots[str(path)] = value
        self._record_store(path, value, None, None, node)

    def _stored_root(self, kind: str, container: Any, name: str) -> Tensor | None:
        path = self._root_path(kind, container, name) if self.stored_roots else None
        return self.stored_roots.get(str(path)) if path is not None else None

    def _root_path(self, kind: str, container: Any, name: str) -> Path | None:
        """The path of a global or closure cell as the compiled function's runtime resolves it."""
        if kind == "item":
            return Path(f"global:{name}") if container is self.fn.__globals__ else None
        for var, cell in zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ()):
            if cell is container:
                return Path(f"cell:{var}")
        return None

    def _record_store(self, path: Path, value: Tensor, obj: Obj | None, slot: tuple | None,
                      node: ast.AST) -> None:
        if obj is not None:
            self._note_object(obj, node)
            # One object slot written through two paths would be committed twice, in the wrong order.
            owner = self._store_slots.setdefault((id(obj.example),) + slot, str(path))
            if owner != str(path):
                raise Unsupported(f"{path} and {owner} are one object written through two paths", node)
        self.stores[str(path)] = (path, value)

    def _note_object(self, obj: Obj, node: ast.AST | None = None) -> None:
        if obj.path is None:
            raise Unsupported("state of an object without an access path", node)
        self.objects.setdefault(str(obj.path), (obj.path, obj.example))

    def _finish_stores(self, node: ast.AST) -> None:
        """What each store commits (after every guard held), and the alias guard its objects need."""
        changed = {key for key, (_, value) in self.stores.items() if key in self.scalar_reads and not (
            isinstance(value, Known) and type(value.value) is type(self.scalar_reads[key])
            and value.value == self.scalar_reads[key])}
        if changed:
            raise RuntimeState(frozenset(changed))
        self.commits = [(key, self._result_tree(value, self.leaves)) for key, (_, value) in self.stores.items()]
        self.append_commits = [(str(path), self._result_tree(value, self.leaves)) for path, value in self.appends]
        self._finish_buffers(f"{self.fn.__code__.co_filename}:{node.lineno}")
        if self._store_slots and len(self.objects) > 1:
            ids: dict[int, int] = {}
            groups = tuple(ids.setdefault(id(example), len(ids)) for _, example in self.objects.values())
            self.state_guards.append(AliasGuard(tuple(p for p, _ in self.objects.values()), groups,
                                                f"{self.fn.__code__.co_filename}:{node.lineno}"))

    def _item_key(self, key: Any, container: Any, node: ast.AST) -> ir.Attribute:
        """The `key` attribute of load_item/store_item; keys must round-trip through access paths."""
        if type(key) is str and not any(c in key for c in "'\"\\"):
            return ir.StringAttr.get(key)
        if type(key) is int and -2**63 <= key < 2**63 and (container_type(container) is dict or key >= 0):
            return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), key)
        raise Unsupported(f"subscript key {key!r} of a {type(container).__name__} in Python state is not "
                          "supported yet (only str and int, non-negative for lists)", node)

    def _state_root(self, value: Any, path: Path, where: tuple, node: ast.AST) -> Any:
        """A global or closure variable: a guarded constant, or state read at call time."""
        kind, container, name = where
        root = self._root_path(kind, container, name)
        if root is not None and self._runtime_scalar(root, value, node):
            self._state_guard(root, ScalarSpec(type(value)), node)
            op = core.LOAD_GLOBAL if kind == "item" else core.LOAD_CELL
            t = op.build([], [tensor_type((), np.dtype(type(value)))], name=name, ip=self._state_ip()).result
            return Tensor(t, type(value))
        seen = self.profile.site(node) if self.profile is not None and self.frame.fn is self.fn else None
        if seen is not None and not seen.stable and is_constant(value):
            # Specializing on a value that changed between profiled calls would recompile every call.
            raise Unsupported(f"{path} changed between profiled calls ({seen.summary()})", node)
        if uncompiled(value) is not value or type(value) is grad_function_type():  # inlined when called
            self._guard(IdentityGuard(kind, container, name, value, self._site(node)))
            return Known(value)
        if not is_constant(value) and not isinstance(value, np.generic):
            # Read at call time through the compiled function's own globals and cells.
            root = self._root_path(kind, container, name)
            if root is None and is_generator(value):  # drawn from as the constant it is (draws.py)
                self._guard(IdentityGuard(kind, container, name, value, self._site(node)))
                return Known(value)
            if root is None:
                raise Unsupported(f"{path} (of another module or function) holds an array or object; "
                                  "reading it at call time is not supported yet", node)
            path, name = root, root.root.split(":", 1)[1]
        if type(value) is np.ndarray:
            S.check_dtype(value.dtype)
            if not c_ordered(value):
                raise Unsupported(f"{path} is an array that is not C-ordered: {LAYOUT_REASON}", node)
            self._state_guard(path, ArraySpec(value.dtype, value.shape), node)
            op = core.LOAD_GLOBAL if kind == "item" else core.LOAD_CELL
            t = op.build([], [tensor_type(value.shape, value.dtype)], name=name, ip=self._state_ip()).result
            return self._input_array(Tensor(t, np.ndarray, source=path), value)
        op = core.LOAD_GLOBAL if kind == "item" else core.LOAD_CELL
        if is_generator(value):  # read at call time: another generator bound there needs no recompilation
            self._state_guard(path, generator_spec(value), node)
            return Obj(op.build([], [object_type()], name=name, ip=self._state_ip()).result, value, path)
        self._guard(IdentityGuard(kind, container, name, value, self._site(node)))
        if is_constant(value) or isinstance(value, np.generic):
            return Known(value, self._root_path(kind, container, name))
        self._check_plain_object(value)
        return Obj(op.build([], [object_type()], name=name, ip=self._state_ip()).result, value, path)

    def _object_attr(self, obj: Obj, name: str, node: ast.AST) -> Any:
        self._note_object(obj, node)
        stored = self.stored_attrs.get((id(obj.example), name))
        if stored is not None:
            return stored
        example = obj.example
        cls = type(example)
        class_attr = inspect.getattr_static(cls, name, MISSING)
        instance_dict = getattr(example, "__dict__", {})
        if isinstance(class_attr, property) and isinstance(class_attr.fget, types.FunctionType):
            # A property wins over the instance dict: its getter runs, inlined, whatever the instance holds.
            self._guard(IdentityGuard("attr", cls, name, class_attr, self._site(node)))
            return self._inline(class_attr.fget, [obj], {}, node)
        if class_attr is not MISSING and hasattr(type(class_attr), "__set__"):
            raise Unsupported(f"attribute {name!r} of {cls.__name__} is a data descriptor (e.g. a property)", node)
        if name in instance_dict:
            value = instance_dict[name]
        elif isinstance(class_attr, (types.FunctionType, staticmethod, classmethod)):
            # getattr of a classmethod is a new bound method each time: compare what the class stores.
            kind = "attr" if isinstance(class_attr, types.FunctionType) else "static"
            self._guard(IdentityGuard(kind, cls, name, class_attr, self._site(node)))
            self._state_guard(obj.path, OwnAttrSpec(name, False), node)  # no instance attribute shadows it
            if isinstance(class_attr, staticmethod):
                return Known(class_attr.__func__)
            if isinstance(class_attr, classmethod):
                return BoundMethod(Known(cls), name, class_attr.__func__)
            return BoundMethod(obj, name, class_attr)
        elif class_attr is not MISSING and not hasattr(type(class_attr), "__get__"):
            value = class_attr
        elif callable(class_attr):  # a method of a builtin type: list.append, dict.update
            raise Unsupported(f"calling .{name}() of a {cls.__name__} in Python state is not supported yet", node)
        else:
            raise Unsupported(f"attribute {name!r} of {cls.__name__} is not a plain attribute", node)
        return self._read_state(obj, obj.path.attr(name), value, node, core.LOAD_ATTR, name=name)

    def _namespace_attr(self, base: Known, name: str, node: ast.AST) -> Any:
        """`base.name` of a module, class or function known at compile time.

        Immutable values and callables become constants under an identity guard. What may
        change in place (an array, a list, a dict, an object) is read at call time, like a
        global, through the access path of `base` (a global or closure variable of the
        compiled function, or attributes of one); without a path it is not compiled.
        """
        attr = getattr(base.value, name, MISSING)
        if attr is MISSING:
            raise Unsupported(f"{getattr(base.value, '__name__', base.value)} has no attribute {name!r}", node)
        if is_constant(attr) or isinstance(attr, (np.generic, enum.Enum)) or callable(attr):
            self._guard(IdentityGuard("attr", base.value, name, attr, self._site(node)))
            return Known(attr, base.path.attr(name) if base.path is not None else None)
        if base.path is None:
            raise Unsupported(f"{getattr(base.value, '__name__', 'the object')}.{name} holds a {type(attr).__name__}, "
                              "which may change in place: reading it at call time needs it to be reached through "
                              "a global or closure variable of the compiled function's own module", node)
        obj = self._path_object(base)
        self._note_object(obj, node)
        return self._read_state(obj, base.path.attr(name), attr, node, core.LOAD_ATTR, name=name)

    def _path_object(self, known: Known) -> Obj:
        """`known` (a module, class or function) as an object loaded at call time from its path."""
        root, ip = known.path.root, self._state_ip()
        op = core.LOAD_GLOBAL if root.startswith("global:") else core.LOAD_CELL
        value = op.build([], [object_type()], name=root.split(":", 1)[1], ip=ip).result
        for kind, step in known.path.steps:  # attributes of modules, classes and functions (_namespace_attr)
            value = core.LOAD_ATTR.build([value], [object_type()], name=step, ip=ip).result
        return Obj(value, known.value, known.path)

    def _read_state(self, obj: Obj, path: Path, value: Any, node: ast.AST, load, **attrs) -> Any:
        """A value found at `path` in Python state: an array read at call time (`load`), a
        guarded constant, or an object whose own attributes may be read in turn."""
        if type(value) is np.ndarray:
            S.check_dtype(value.dtype)
            if not c_ordered(value):
                raise Unsupported(f"{path} is an array that is not C-ordered: {LAYOUT_REASON}", node)
            self._state_guard(path, ArraySpec(value.dtype, value.shape), node)
            t = load.build([obj.value], [tensor_type(value.shape, value.dtype)], ip=self._state_ip(), **attrs)
            return self._input_array(Tensor(t.result, np.ndarray, source=path), value)
        if isinstance(value, np.generic) and value.dtype in S.SUPPORTED_DTYPES:
            # A NumPy scalar (a tree leaf's word id, a step counter) is a runtime value, like
            # a NumPy scalar argument: specializing on it would compile once per value.
            self._state_guard(path, ScalarSpec(type(value)), node)
            t = load.build([obj.value], [tensor_type((), value.dtype)], ip=self._state_ip(), **attrs)
            return Tensor(t.result, type(value), source=path)
        if self._runtime_scalar(path, value, node):
            self._state_guard(path, ScalarSpec(type(value)), node)
            t = load.build([obj.value], [tensor_type((), np.dtype(type(value)))], ip=self._state_ip(), **attrs)
            scalar = Tensor(t.result, type(value))
            self.runtime_scalars[id(scalar)] = (scalar, path)  # (a seed the host reads at the call: draws.py)
            return scalar
        if is_constant(value) or isinstance(value, np.generic):
            self._state_guard(path, ConstSpec(value), node)
            return Known(value)
        if is_generator(value):
            self._state_guard(path, generator_spec(value), node)
            return Obj(load.build([obj.value], [object_type()], ip=self._state_ip(), **attrs).result, value, path)
        self._check_plain_object(value)
        self._state_guard(path, ObjectSpec(type(value)), node)
        return Obj(load.build([obj.value], [object_type()], ip=self._state_ip(), **attrs).result, value, path)

    def _object_item(self, obj: Obj, key: Any, node: ast.AST) -> Any:
        """`d['k']` / `lst[0]` on a dict or list in Python state: read at call time (load_item)."""
        example = obj.example
        kind = container_type(example)
        if kind not in (dict, list, tuple):
            raise Unsupported(f"subscript of a {type(example).__name__} object is not supported yet", node)
        if kind is not dict and type(key) is slice:  # `self.Ws[:-1]`: a new list of the same objects
            return Seq(tuple(self._state_elements(obj, node)[key]), list if kind is list else tuple)
        if kind is not dict and type(key) is int and key < 0:  # `self.Ws[-1]`, under the length's guard
            key += self._state_len(obj, node)
        if kind is list and type(key) is int and key >= len(example) and self._appended_to(obj):
            appended = self._appended_to(obj)
            if key - len(example) >= len(appended):
                raise Unsupported(f"{obj.path}[{key!r}] raises IndexError", node)
            self._state_len(obj, node)  # (the list's own items are as long as when compiling)
            return appended[key - len(example)]
        attr = self._item_key(key, example, node)
        self._note_object(obj, node)
        stored = self.stored_items.get((id(example), key))
        if stored is not None:
            return stored  # written earlier in this call
        try:
            value = example[key]
        except (KeyError, IndexError) as e:
            raise Unsupported(f"{obj.path}[{key!r}] raises {type(e).__name__}", node) from None
        return self._read_state(obj, obj.path.item(key), value, node, core.LOAD_ITEM, key=attr)

    def _runtime_scalar(self, path: Path, value: Any, node: ast.AST) -> bool:
        """Whether the Python int or float at `path` is read at run time rather than specialized on:
        it changed between profiled calls, or this function stores a new value there (`self.t += 1`),
        either of which would otherwise compile one variant per value. Notes the other reads."""
        if type(value) not in (int, float) or type(value) is int and not -2 ** 63 <= value < 2 ** 63:
            return False
        seen = self.profile.site(node) if self.profile is not None and self.frame.fn is self.fn else None
        if str(path) in self.runtime_state or seen is not None and not seen.stable:
            return True
        self.scalar_reads[str(path)] = value
        return False

    def _state_ip(self) -> ir.InsertionPoint | None:
        """State loads are hoisted above branches on computed values (see branches.py)."""
        return self.hoist_points[0] if self.hoist_points else None

    def _state_guard(self, path: Path, spec, node: ast.AST) -> None:
        # One guard per path and aspect: the value's type/shape, its length, keys, or an attribute's presence.
        aspect = f"{type(spec).__name__}:{spec.name}" if isinstance(spec, (HasAttrSpec, OwnAttrSpec)) \
            else type(spec).__name__ \
            if isinstance(spec, (LengthSpec, KeysSpec)) else "value"
        key = ("state", str(path), aspect)
        if key not in self._guarded:
            self._guarded.add(key)
            self.state_guards.append(StateGuard(path, spec, self._site(node)))

    # The shape of containers in state: guarded so compile-time iteration and unpacking stay right.

    def _state_len(self, obj: Obj, node: ast.AST) -> int:
        """len() of a list, tuple or dict the caller passed or Python state holds (guarded)."""
        example = obj.example
        if container_type(example) is dict:
            return len(self._state_keys(obj, node))
        if container_type(example) not in (list, tuple):
            raise Unsupported(f"len() of a {type(example).__name__} object is not supported yet", node)
        self._note_object(obj, node)
        self._state_guard(obj.path, LengthSpec(len(example)), node)
        return len(example) + len(self._appended_to(obj))

    def _state_keys(self, obj: Obj, node: ast.AST) -> tuple:
        """The keys of a dict the caller passed or Python state holds, in order (guarded)."""
        example = obj.example
        self._note_object(obj, node)
        keys = tuple(example)
        for k in keys:
            self._item_key(k, example, node)  # only keys that access paths can name
        if any(owner == id(example) and k not in example for owner, k in self.stored_items):
            raise Unsupported(f"keys of {obj.path} after adding a key in this call are not supported yet", node)
        self._state_guard(obj.path, KeysSpec(keys), node)
        return keys

    def _state_elements(self, obj: Obj, node: ast.AST) -> list:
        """What iterating a list, tuple or dict in Python state gives: items read at call time, or keys."""
        if container_type(obj.example) is dict:
            return [Known(k) for k in self._state_keys(obj, node)]
        return [self._object_item(obj, i, node) for i in range(self._state_len(obj, node))]

    def _has_attr(self, obj: Obj, name: str, node: ast.AST) -> Known:
        """`hasattr(obj, name)` folded under a guard that the attribute is (not) there at call time."""
        self._check_plain_object(obj.example)
        if (id(obj.example), name) in self.stored_attrs:
            return Known(True)
        present = has_plain_attr(obj.example, name)
        if present is None:
            raise Unsupported(f"hasattr of {name!r}: a data descriptor (e.g. a property) decides it", node)
        self._note_object(obj, node)
        self._state_guard(obj.path, HasAttrSpec(name, present), node)
        return Known(present)

    def _check_plain_object(self, value: Any, setting: bool = False) -> None:
        cls = type(value)
        if (container_type(value) in (dict, list) or cls is tuple) and not setting:
            return  # items are read with load_item (see _object_item); no attributes
        if cls.__getattribute__ is not object.__getattribute__ or hasattr(cls, "__getattr__"):
            raise Unsupported(f"objects of {cls.__name__} customize attribute access")
        if setting and cls.__setattr__ is not object.__setattr__:
            raise Unsupported(f"objects of {cls.__name__} customize attribute assignment")
        if not hasattr(value, "__dict__"):
            raise Unsupported(f"{cls.__name__} objects have no __dict__")



def _storable(value: Any) -> bool:
    if isinstance(value, Known):
        return is_constant(value.value) or type(value.value) is np.ndarray or isinstance(value.value, np.generic)
    if isinstance(value, Seq):
        return value.source is not None or value.kind in (tuple, list, dict) and all(map(_storable, value.items))
    return isinstance(value, (Tensor, Obj, Text))
