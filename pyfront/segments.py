"""A function that calls collectives, compiled in parts around them.

A top-level statement that calls a collective of pyfront.distributed
(`grads = dist.allreduce(grads, op="mean")`) talks to the other ranks, which
compiled code cannot do mid-call. So such a function is split at those
statements: each run of statements between them becomes a function of its
own (a part), compiled like any function (profiled, speculated, guarded,
deoptimized), and each collective statement runs in the interpreter. A part
takes the names the statements after its start read that earlier statements
bound, and returns those that later parts read; a call runs the parts in
order and passes the names on.

Why this keeps CPython's semantics: each part is the statements it holds, run
from the values the earlier ones left; a compiled part that deoptimizes re-runs
in the interpreter from its own start, after the earlier parts completed (and
committed their state), which is what CPython does when it reaches those
statements. And every rank calls each collective exactly once per call,
whether its parts ran compiled or not: the collective statements are the
caller's, outside any compiled part. (A part that raises before a collective
leaves the other ranks waiting in it, as the interpreter would: the failure
policy of pyfront.distributed applies.)

Split only when that is the whole story (`split` returns None otherwise, and
the function compiles whole, so the collective keeps it in the interpreter):
the collective statements are at the function's top level (not in a loop,
branch, with or try); the function has no free variables, defines no function,
lambda or class, is not a generator, deletes no local name and returns only in
its last part;
and every local name a part reads that an earlier part may have bound, an
earlier part binds for certain (a parameter, or a top-level assignment).
"""

from __future__ import annotations

import ast
import builtins
import inspect
import types
from dataclasses import dataclass
from typing import Any

from pyfront import source

COLLECTIVE_ATTRIBUTE = "__pyfront_collective__"  # set by pyfront.distributed on its collectives


@dataclass(frozen=True)
class Part:
    """A run of the function's statements (lines `first_line` to `last_line`): `fn` takes the names they
    read that earlier statements bound, and returns those that later statements read (the last part
    returns what the function returns)."""

    fn: types.FunctionType
    collective: bool  # the statement calls a collective: it runs in the interpreter
    first_line: int
    last_line: int


def split(fn: types.FunctionType) -> list[Part] | None:
    """`fn`'s parts around its top-level collective statements, or None (see the module docstring)."""
    code = fn.__code__
    if code.co_freevars or code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE):
        return None
    try:
        node = source.live_def(fn)
    except Exception:  # noqa: BLE001 - no source: the function compiles whole (and says why)
        return None
    # A function or class made in one part could keep a cell of another's: only comprehensions,
    # which run where they are made, may have cells here.
    if _has(node.body, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        return None
    cuts = [i for i, stmt in enumerate(node.body) if _calls_collective(stmt, fn.__globals__)]
    if not cuts or any(not _is_simple(node.body[i]) for i in cuts):
        return None
    groups: list[tuple[bool, list[ast.stmt]]] = []
    for i, stmt in enumerate(node.body):
        collective = i in cuts
        if collective or not groups or groups[-1][0]:
            groups.append((collective, [stmt]))
        else:
            groups[-1][1].append(stmt)
    if any(_has(stmts, (ast.Return,)) for _, stmts in groups[:-1]) or _has(node.body, (ast.Delete, ast.Nonlocal)):
        return None
    locals_ = set(code.co_varnames)
    params = list(inspect.signature(fn, follow_wrapped=False).parameters)  # callables.positional's order
    reads = [_loaded(stmts) & locals_ for _, stmts in groups]
    certain, maybe = set(params), set(params)
    live: list[list[str]] = []  # names passed from each part to the next
    for k, (_, stmts) in enumerate(groups):
        if k and any(name in maybe and name not in certain for name in reads[k]):
            return None  # bound on some paths of an earlier part only: passing it would change the error
        certain |= _bound_for_certain(stmts)
        maybe |= _stored(stmts) & locals_
        later = set().union(*reads[k + 1:])
        live.append(sorted(later & certain))
    declared = [stmt for stmt in ast.walk(node) if isinstance(stmt, ast.Global)]
    parts, inputs = [], params
    for k, (collective, stmts) in enumerate(groups):
        last = k == len(groups) - 1
        parts.append(_part(fn, k, stmts, inputs, None if last else live[k], declared, collective))
        inputs = live[k]
    return parts


def _calls_collective(stmt: ast.stmt, namespace: dict) -> bool:
    return any(isinstance(n, ast.Call) and getattr(_resolved(n.func, namespace), COLLECTIVE_ATTRIBUTE, False)
               for n in ast.walk(stmt))


def _resolved(expr: ast.expr, namespace: dict) -> Any:
    """What a name or a dotted name through modules refers to now (None when it cannot tell)."""
    if isinstance(expr, ast.Name):
        return namespace.get(expr.id, getattr(builtins, expr.id, None))
    if isinstance(expr, ast.Attribute):
        base = _resolved(expr.value, namespace)
        if isinstance(base, types.ModuleType):
            return getattr(base, expr.attr, None)
    return None


def _is_simple(stmt: ast.stmt) -> bool:
    """A statement that is not compound: a collective in it runs once when the statement runs."""
    return isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return))


def _has(stmts: list[ast.stmt], kinds: tuple) -> bool:
    return any(isinstance(n, kinds) for stmt in stmts for n in ast.walk(stmt))


def _loaded(stmts: list[ast.stmt]) -> set[str]:
    return {n.id for stmt in stmts for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stored(stmts: list[ast.stmt]) -> set[str]:
    return {n.id for stmt in stmts for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _bound_for_certain(stmts: list[ast.stmt]) -> set[str]:
    """Names the top-level statements bind whatever path they take (assignments, not loops or branches)."""
    bound = set()
    for stmt in stmts:
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and getattr(stmt, "value", None) is not None:
            targets = [stmt.target]
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
            continue
        else:
            continue
        for target in targets:
            bound |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return bound


def _part(fn: types.FunctionType, k: int, stmts: list[ast.stmt], inputs: list[str], outputs: list[str] | None,
          declared: list[ast.Global], collective: bool) -> Part:
    """Part k as a function of its inputs (all positional: the caller binds the call to `fn` first)."""
    first, last = stmts[0], stmts[-1]
    body = [*declared, *stmts]
    if outputs is not None:
        body.append(ast.Return(ast.Tuple([ast.Name(n, ast.Load()) for n in outputs], ast.Load())))
    args = ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in inputs], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    name = f"{fn.__name__}__part{k}"
    node = ast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None, type_comment=None,
                           lineno=first.lineno, col_offset=first.col_offset,
                           end_lineno=last.end_lineno, end_col_offset=last.end_col_offset)
    for new in ast.walk(node):  # the statements keep their lines in the user's file; what is added gets the last
        if not hasattr(new, "lineno") and "lineno" in new._attributes:
            new.lineno, new.col_offset = last.lineno, last.col_offset
            new.end_lineno, new.end_col_offset = last.end_lineno, last.end_col_offset
    code = fn.__code__
    module = ast.Module([node], type_ignores=[])
    top = compile(module, code.co_filename, "exec", flags=code.co_flags & source.FUTURE_FLAGS, dont_inherit=True)
    namespace: dict = {}
    exec(top, fn.__globals__, namespace)  # noqa: S102 - the user's own statements, in the user's module
    part = namespace[name]
    source.register_def(part.__code__, node)
    return Part(part, collective, first.lineno, last.end_lineno or last.lineno)
