"""One generated function per variant that reads its state once and checks its entry guards.

A compiled call reads the values at many access paths (`arg0.generator.params['W1']`):
the state guards' paths, to check their specs, then the inputs' paths, to pass
them. Paths share prefixes, and each guard as a closure over a generic reader
costs a few Python calls. `guarded_reader` writes, once per variant, the Python
source of one function that walks the union of those paths as a trie (each
prefix read once, the guards' conditions inlined right after the read they
test, after the identity guards of constants) and returns the input values, and compiles it.

What it assumes: reading an access path has no effect (the graph generator only
compiles plain attribute and item reads, guarded), so reading a prefix once
instead of once per path changes nothing observable.

What it guarantees: the function returns the inputs' values exactly when every
state and alias guard holds and every read succeeds; otherwise it returns None
and the caller asks the guards one by one (Variant.entry_failure) which one
failed, so the reported failure, and any exception, are those of the generic
path.

`path_writer` generates the other end of a call, from the same expressions:
one function that commits a variant's deferred stores, in order.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any

from pyfront.dialects.state_path import Path

from pyfront.interrupts import reraise_if_asynchronous


class SourceNames:
    """The objects generated source refers to, each by a name of its own (`name(obj)`)."""

    def __init__(self):
        self.namespace: dict[str, Any] = {}
        self._names: dict[int, str] = {}

    def __call__(self, obj: Any) -> str:
        name = self._names.get(id(obj))
        if name is None:
            name = self._names[id(obj)] = f"_k{len(self._names)}"
            self.namespace[name] = obj
        return name

    def compile(self, source: str, function: str, filename: str) -> Callable:
        """The function `function` that `source` defines, its globals the named objects."""
        exec(compile(source, filename, "exec"), self.namespace)  # noqa: S102 - source generated here
        return self.namespace[function]


def guard_lambda(condition: Callable[[str, SourceNames], str], filename: str) -> Callable[[Any], bool]:
    """`lambda v: <condition>` compiled, for a guard checked on its own (not in a generated reader)."""
    names = SourceNames()
    return names.compile(f"def holds(v):\n    return {condition('v', names)}\n", "holds", filename)


def guarded_reader(fn: Any, identity_guards: list, state_guards: list, alias_guards: list,
                   input_paths: list[Path | None]) -> Callable[[tuple], list | None]:
    """A function of the call's arguments: the value at each of `input_paths` (None where a path
    is None) if every guard holds, else None.

    `identity_guards`: objects with `.condition(names)` (guards.IdentityGuard); `state_guards`:
    objects with `.path` and `.condition(value, names)` (guards.StateGuard); `alias_guards`:
    (paths, holds_for) pairs, `holds_for` taking the paths' values as a list.
    """
    names = SourceNames()
    lines = [f"if not {g.condition(names)}: return None" for g in identity_guards]
    variables: dict[Path, str] = {}

    def read(path: Path) -> str:
        variable = variables.get(path)
        if variable is not None:
            return variable
        if path.steps:
            expr = step_expression(read(Path(path.root, path.steps[:-1])), *path.steps[-1], names)
        else:
            expr = root_expression(path.root, fn, names)
        variable = variables[path] = f"v{len(variables)}"
        lines.append(f"{variable} = {expr}")
        return variable

    for g in state_guards:
        lines.append(f"if not {g.condition(read(g.path), names)}: return None")
    for paths, holds_for in alias_guards:
        lines.append(f"if not {names(holds_for)}([{', '.join(map(read, paths))}]): return None")
    values = [read(p) if p is not None else "None" for p in input_paths]
    body = "\n".join(f"        {line}" for line in lines or ["pass"])
    source = (f"def read(args):\n    try:\n{body}\n"
              f"    except Exception as e:\n        {names(reraise_if_asynchronous)}(e)\n        return None\n"
              f"    return [{', '.join(values)}]\n")
    return names.compile(source, "read", f"<pyfront entry reads of {getattr(fn, '__qualname__', fn)}>")


def path_writer(paths: list[Path], fn: Any) -> Callable[[tuple, list], None]:
    """A function of the call's arguments and a list of values that assigns each value to its path, in order.

    Each assignment reads its target's parent afresh (an earlier one may have
    rebound a prefix) and does the one `setattr`, `[]=` or `cell_contents`
    write that `results.make_resolver`'s reads mirror, with no frame per path.
    """
    names = SourceNames()
    lines = []
    for i, path in enumerate(paths):
        if not path.steps:  # a global's or a cell's expression is assignable; an argument is not
            if path.root.startswith("arg"):
                raise ValueError(f"cannot assign to {path}")
            lines.append(f"{root_expression(path.root, fn, names)} = values[{i}]")
            continue
        parent = root_expression(path.root, fn, names)
        for kind, step in path.steps[:-1]:
            parent = step_expression(parent, kind, step, names)
        kind, step = path.steps[-1]
        if kind == "attr" and not _is_name(step):
            lines.append(f"setattr({parent}, {names(step)}, values[{i}])")
        else:
            lines.append(f"{step_expression(parent, kind, step, names)} = values[{i}]")
    body = "\n".join(f"    {line}" for line in lines or ["pass"])
    return names.compile(f"def write(args, values):\n{body}\n", "write",
                         f"<pyfront commits of {getattr(fn, '__qualname__', fn)}>")


def step_expression(parent: str, kind: str, step: Any, names: SourceNames) -> str:
    """The expression reading one step (`attr` or an item) of the value `parent` evaluates to."""
    if kind == "attr":
        return f"{parent}.{step}" if _is_name(step) else f"getattr({parent}, {names(step)})"
    return f"{parent}[{names(step)}]"


def _is_name(step: str) -> bool:
    return step.isidentifier() and not keyword.iskeyword(step)


def root_expression(root: str, fn: Any, names: SourceNames) -> str:
    """The expression reading a path's root (results.make_resolver reads it the same way)."""
    if root.startswith("arg"):
        return f"args[{int(root[3:])}]"
    if root.startswith("global:"):
        return f"{names(fn.__globals__)}[{names(root[7:])}]"
    if root.startswith("cell:"):
        return f"{names(fn.__closure__[fn.__code__.co_freevars.index(root[5:])])}.cell_contents"
    raise ValueError(f"path root {root} cannot be read")
