"""The source of the code that runs: a function's `def`, checked against its code object.

The compiler works on source text, but Python runs `fn.__code__`. The two
disagree when a decorator's wrapper carries `__wrapped__` (which
`inspect.getsource(fn)` follows to the wrapped function), when the module's
file was edited after import (a notebook, an editor), or when `__code__` was
replaced (IPython autoreload, hot reload). So the source is looked up from the
code object itself (its file as linecache has it now, and its first line), the
whole file is compiled again (its scopes, imports and `__future__` flags shape
the bytecode), and the def is used only when the code object of the same
qualified name and first line equals `fn.__code__`: bytecode, constants
(nested code objects recursively), names, variables, argument counts, flags,
first line, line and exception tables (`same_code`). Otherwise `live_def`
raises `Unsupported` naming the file and function. Guarantee: a def returned
for `fn` is the source of `fn.__code__` (which callers guard per call, see
graphgen._call_function). `compile_in_scope` compiles a def (the profiler's
instrumented copy) in a scope like the function's own: its free variables
bound by an enclosing function, the class of a method for name mangling and
`super()`'s `__class__` cell, the same `__future__` flags.
A verified code object's source is remembered (it cannot change), so the check
runs once per code object. Private names in a class body come back mangled as
the bytecode has them (`self.__x` -> `self._C__x`).
"""

from __future__ import annotations

import __future__
import ast
import functools
import linecache
import threading
import types
import weakref

from pyfront import deep_ast
from pyfront.errors import Unsupported

# The compiler flags of `from __future__ import ...`; a code object's co_flags carry them.
FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag

_ENCLOSING = "__pyfront_enclosing__"
_CODE_FIELDS = ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals", "co_stacksize",
                "co_flags", "co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_name",
                "co_firstlineno", "co_linetable", "co_exceptiontable")

# code object -> the def it was checked to come from
_verified: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# CPython 3.11's AST conversion keeps its recursion depth in shared state: two threads parsing
# at once can fail with "SystemError: AST constructor recursion depth mismatch".
_PARSING = threading.Lock()


def live_def(fn: types.FunctionType) -> ast.FunctionDef:
    """A fresh AST of the `def` whose compiled code is `fn.__code__` (decorators included)."""
    code = fn.__code__
    node = _verified.get(code)
    if node is None:
        node = _checked_def(code, fn.__globals__)
        with deep_ast.room_for(node, code.co_filename):  # the mangler recurses per level
            node = _verified[code] = _mangled(code, node)
    with deep_ast.room_for(node, code.co_filename):
        return deep_ast.copy_tree(node)


def register_def(code: types.CodeType, node: ast.FunctionDef) -> None:
    """`code` was compiled from `node`, a def pyfront made (pyfront/segments.py): its source."""
    with deep_ast.room_for(node, code.co_filename):
        _verified[code] = _mangled(code, deep_ast.copy_tree(node))


def _checked_def(code: types.CodeType, module_globals: dict) -> ast.FunctionDef:
    """The def of `code` in its source file, as the file is now, if it compiles to `code`."""
    name = code.co_qualname
    lines = source_lines(code, module_globals)
    if not lines:
        raise _unsupported(code, f"source of {name} is not available (no file {code.co_filename!r})")
    try:
        tree, module = _compiled_file(code.co_filename, "".join(lines), code.co_flags & FUTURE_FLAGS)
    except (SyntaxError, ValueError) as e:
        raise _unsupported(code, f"the source file of {name} does not compile as it is now ({e})") from None
    node = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name == code.co_name and _first_line(n) == code.co_firstlineno), None)
    if node is None and code.co_name == "<lambda>":
        node = _lambda_def(tree, code)
    compiled = _find_code(module, lambda c: c.co_qualname == code.co_qualname
                          and c.co_firstlineno == code.co_firstlineno)
    if node is None or compiled is None or not same_code(compiled, code):
        raise _unsupported(code, f"the source of {name} on disk does not match its loaded code (was the file "
                                 "edited since import, or __code__ replaced?); it runs in the interpreter")
    if isinstance(node, ast.AsyncFunctionDef):
        raise Unsupported("async functions are not supported", node, code.co_filename, code)
    return node


def _lambda_def(tree: ast.Module, code: types.CodeType) -> ast.FunctionDef:
    """The lambda of `code` as the def it is equivalent to (`def <lambda>(args): return body`).

    Only a lambda alone on its first line with that qualname is taken: two on one line
    could not be told apart from the code object, which names none of its columns.
    """
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno]
    if len(found) != 1:
        raise _unsupported(code, f"{code.co_qualname} is not defined by a def statement and is not the only "
                                 "lambda on its line")
    lam = found[0]
    body = ast.Return(lam.body, lineno=lam.body.lineno, col_offset=lam.body.col_offset)
    return ast.FunctionDef(name="<lambda>", args=lam.args, body=[body], decorator_list=[], returns=None,
                           type_comment=None, lineno=lam.lineno, col_offset=lam.col_offset,
                           end_lineno=lam.end_lineno, end_col_offset=lam.end_col_offset)


def source_lines(code: types.CodeType, module_globals: dict | None = None) -> list[str]:
    """The lines of the file `code` was compiled from, as the file is now (empty if there is none).

    What `inspect.findsource(code)` reads, without its `inspect.getmodule` (which
    resolves the real path of every imported module's file on first use: 0.1 s
    of a warm process's first compile, measured). `module_globals` (the
    function's module) lets linecache ask the module's loader (a zip import).
    """
    filename = code.co_filename
    if not (filename.startswith("<") and filename.endswith(">")):
        linecache.checkcache(filename)  # the file as it is now, not as first read
    return linecache.getlines(filename, module_globals)


@functools.lru_cache(maxsize=8)
def _compiled_file(filename: str, text: str, flags: int) -> tuple[ast.Module, types.CodeType]:
    """A source file's AST (never mutated: callers get copies) and code, shared by the functions it defines."""
    with _PARSING:
        tree = ast.parse(text, filename)
        return tree, compile(tree, filename, "exec", flags=flags, dont_inherit=True)


def _unsupported(code: types.CodeType, reason: str) -> Unsupported:
    """`code` has no usable source: it cannot compile, whatever its arguments."""
    return Unsupported(reason, types.SimpleNamespace(lineno=code.co_firstlineno), code.co_filename, code)


def _find_code(code: types.CodeType, wanted) -> types.CodeType | None:
    """The first code object nested in `code` (breadth first: outer before inner) that is `wanted`."""
    pending = [code]
    while pending:
        c = pending.pop(0)
        for const in c.co_consts:
            if isinstance(const, types.CodeType):
                if wanted(const):
                    return const
                pending.append(const)
    return None


class _Mangle(ast.NodeTransformer):
    """Private names (`self.__x` in a class body) as the bytecode has them (`self._C__x`)."""

    def __init__(self, class_name: str):
        self.prefix = "_" + class_name.lstrip("_")

    def name(self, n: str) -> str:
        return self.prefix + n if n.startswith("__") and not n.endswith("__") and "." not in n else n

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.name(node.id)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.Attribute:
        node.attr = self.name(node.attr)
        return self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self.name(node.arg)
        return self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> ast.keyword:
        node.arg = node.arg and self.name(node.arg)
        return self.generic_visit(node)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> ast.stmt:
        node.names = [self.name(n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global


def _mangled(code: types.CodeType, node: ast.FunctionDef) -> ast.FunctionDef:
    """`node` (in place) with the private names of `code`'s class mangled; no-op on mangled names."""
    class_name = _scope(code)[0]
    if class_name is None or not class_name.strip("_"):
        return node
    mangle = _Mangle(class_name)
    node.body = [mangle.visit(stmt) for stmt in node.body]
    node.args = mangle.visit(node.args)
    return node


def _scope(code: types.CodeType) -> tuple[str | None, str | None]:
    """(the innermost class around the def, the class whose body holds it directly), from the qualname.

    In a qualname, a function's name is followed by "<locals>"; a class's name is not.
    """
    parents = code.co_qualname.split(".")[:-1]
    classes = [p for i, p in enumerate(parents) if p != "<locals>" and parents[i + 1:i + 2] != ["<locals>"]]
    return (classes[-1] if classes else None), (parents[-1] if parents and parents[-1] != "<locals>" else None)


def compile_in_scope(node: ast.FunctionDef, fn: types.FunctionType, extra_freevars: tuple = ()) -> types.CodeType:
    """The code object of `node` compiled in a scope like `fn`'s; `extra_freevars` are bound
    by the enclosing function too (the profiler's observers)."""
    code = fn.__code__
    class_name, direct_class = _scope(code)
    # A method's `__class__` cell (super()) comes from the class statement.
    binds = [v for v in code.co_freevars if not (v == "__class__" and class_name)] + list(extra_freevars)
    nested = "<locals>" in code.co_qualname or bool(binds)
    stmt: ast.stmt = node
    if direct_class is not None:
        stmt = ast.ClassDef(direct_class, [], [], [stmt], [])
    if nested:
        assigns = [ast.Assign([ast.Name(v, ast.Store())], ast.Constant(None)) for v in binds]
        stmt = ast.FunctionDef(_ENCLOSING, ast.arguments([], [], None, [], [], None, []), assigns + [stmt], [])
    if direct_class is None and class_name:  # nested in a method: names are mangled with that class's name
        stmt = ast.ClassDef(class_name, [], [], [stmt], [])
    module = ast.fix_missing_locations(ast.Module([stmt], type_ignores=[]))
    try:
        top = compile(module, code.co_filename, "exec", flags=code.co_flags & FUTURE_FLAGS, dont_inherit=True)
    except SyntaxError as e:
        raise Unsupported(f"source of {code.co_qualname} does not compile on its own ({e})") from None
    inner = _find_code(top, lambda c: c.co_name == node.name and c.co_firstlineno == _first_line(node))
    if inner is None:
        raise Unsupported(f"source of {code.co_qualname} did not compile to a function")
    return inner


def _first_line(node: ast.FunctionDef) -> int:
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


def same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """Two code objects do the same: every field the interpreter runs, constants recursively."""
    if any(getattr(a, f) != getattr(b, f) for f in _CODE_FIELDS):
        return False
    return len(a.co_consts) == len(b.co_consts) and all(map(_same_constant, a.co_consts, b.co_consts))


def _same_constant(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, types.CodeType):
        return same_code(a, b)
    if type(a) is tuple:
        return len(a) == len(b) and all(map(_same_constant, a, b))
    if type(a) is frozenset:
        return sorted(map(repr, a)) == sorted(map(repr, b))
    return repr(a) == repr(b)  # tells 0.0 from -0.0, and a NaN equals itself
