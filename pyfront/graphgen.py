"""The speculative graph generator: Python AST -> `func.func` in the pyfront dialect.

One `visit_<Node>` per Python construct (Triton's code generator is the
model). Values are front-end values (values.py); NumPy semantics live in
semantics.py and the NumPy API table in numpy_api.py. Every op carries the
user's file:line as its location, and every `Unsupported` names it.

The generator specializes on the call it compiles for (specialize.py):
arrays by dtype and shape, Python scalars by value, objects by type. Globals,
closure cells and module attributes that hold immutable values become
constants protected by identity guards; arrays and objects in Python state
(also attributes of modules, classes and functions) are read at call time
through deferred-state ops (dialects/core.py). Branches and loops on
compile-time values are resolved here; helper functions are inlined. The AST
compiled for a function is the source of its current code object
(source.live_def), whose identity every variant guards. The module is not
verified here: its users do (runtime/jit.py only when the disk cache has not
seen it, pyfront/aot.py always).
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import operator
import sys
import types
import warnings
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

import numpy as np

from pyfront import deep_ast, indexing, numpy_api, text
from pyfront.callables import uncompiled
from pyfront import semantics as S
from pyfront.buffers import BufferMixin
from pyfront.branches import BranchMixin, FunctionReturn, LoopBreak, LoopContinue, returns, without_continues
from pyfront.containers import GENERATOR_CONSUMERS, ContainerMixin, make_dict, make_tuple
from pyfront.dialects.mlir import func, ir, new_context
from pyfront.dialects.state_path import Path
from pyfront.dialects.types import object_type, tensor_type
from pyfront.constructs import construct, symbol
from pyfront.draws import DrawMixin, is_draw_method
from pyfront.errstate import ErrstateMixin
from pyfront.errors import INTERPRETED_ATTRIBUTE, BranchTypeConflict, Unsupported
from pyfront.interrupts import reraise_if_asynchronous
from pyfront.grad_calls import GradMixin, grad_function_type
from pyfront.graph_budget import DEFAULT_MAX_NODES, GraphBudget
from pyfront.guards import MISSING, IdentityGuard, StateGuard, container_type
from pyfront.loops import LoopMixin
from pyfront.runtime.host_draws import is_generator
from pyfront.source import live_def
from pyfront.specialize import (
    ArraySpec,
    ObjectSpec,
    ScalarSpec,
    SeqSpec,
    is_constant,
    spec_of,
)
from pyfront.state import RuntimeState, StateMixin
from pyfront.survey import SurveyMixin, blockers_of
from pyfront.values import (BoundMethod, DictView, FloatOrFloat64, Iter, Known, LocalFunction, Obj, Seq, Tensor,
                            Text, Unavailable, float_or_float64)
from pyfront.warn_calls import WarnMixin

MAX_INLINE_DEPTH = 32
MAX_TAIL_DUPLICATION = 3  # statements an `if` may take into both branches (_visit_statement)

BINOPS = {
    ast.Add: (operator.add, np.add), ast.Sub: (operator.sub, np.subtract),
    ast.Mult: (operator.mul, np.multiply), ast.Div: (operator.truediv, np.true_divide),
    ast.FloorDiv: (operator.floordiv, np.floor_divide), ast.Mod: (operator.mod, np.remainder),
    ast.Pow: (operator.pow, np.power), ast.MatMult: (operator.matmul, np.matmul),
    ast.BitAnd: (operator.and_, np.bitwise_and), ast.BitOr: (operator.or_, np.bitwise_or),
    ast.BitXor: (operator.xor, np.bitwise_xor), ast.LShift: (operator.lshift, np.left_shift),
    ast.RShift: (operator.rshift, np.right_shift),
}
UNARYOPS = {
    ast.USub: (operator.neg, np.negative), ast.UAdd: (operator.pos, None),
    ast.Invert: (operator.invert, np.invert), ast.Not: (operator.not_, None),
}
CMPOPS = {
    ast.Eq: (operator.eq, np.equal), ast.NotEq: (operator.ne, np.not_equal),
    ast.Lt: (operator.lt, np.less), ast.LtE: (operator.le, np.less_equal),
    ast.Gt: (operator.gt, np.greater), ast.GtE: (operator.ge, np.greater_equal),
    ast.Is: (operator.is_, None), ast.IsNot: (operator.is_not, None),
    ast.In: (lambda a, b: a in b, None), ast.NotIn: (lambda a, b: a not in b, None),
}
# Builtins whose call has no effect: an operand of and/or made of them and of operators may be
# evaluated whether or not Python evaluates it (graphgen._short_circuit).
_PURE_CALL_NAMES = frozenset({"len", "abs", "min", "max", "int", "float", "bool", "round", "isinstance"})
# Builtins evaluated at compile time when all their arguments are constants.
PURE_BUILTINS = {
    abs, all, any, bool, divmod, float, int, isinstance, len, max, min, pow, range, round, str,
    sum, tuple, type, zip, enumerate, reversed, sorted, list, slice,
}


@dataclass
class Graph:
    """What graph generation produced for one variant."""

    module: ir.Module
    func_name: str
    result: Any  # result tree (runtime/results.py interprets it)
    identity_guards: list[IdentityGuard]
    state_guards: list[StateGuard]
    context: ir.Context
    effects: list = field(default_factory=list)  # deferred prints and warnings: (args tree, options or warning)
    commits: list = field(default_factory=list)  # deferred stores: (path, value tree), program order
    appends: list = field(default_factory=list)  # deferred list.append to lists in state: (path, item tree)
    mutations: list = field(default_factory=list)  # written inputs: (path, tree of the new contents)
    draws: list = field(default_factory=list)  # random draws made on the host before the call, program order
    draw_taken: dict = field(default_factory=dict)  # draw index -> result tree: did its branch run (draws in branches)
    inlined_frames: int = 0  # the deepest nesting of inlined Python calls below the function (call_depth.has_room)


class _Stdout:
    """`sys.stdout` in compiled code: the stream the deferred prints write to at call time."""

    def __repr__(self) -> str:
        return "sys.stdout"


STDOUT = _Stdout()


@dataclass
class _Frame:
    fn: types.FunctionType
    filename: str
    env: dict[str, Any] = field(default_factory=dict)
    local_names: frozenset = frozenset()
    declared: dict[str, str] = field(default_factory=dict)  # name -> "global" | "nonlocal"
    call_line: int | None = None  # the caller's line that called this frame's function
    enclosing: _Frame | None = None  # a lambda's or nested def's: the frame that made it (its free names)


def _assigned_names(node: ast.FunctionDef | ast.Lambda) -> frozenset:
    """Local variables of a function: parameters and every name bound in its body (a nested def's
    name, not the names its own body binds)."""
    names = {a.arg for a in node.args.args + node.args.posonlyargs + node.args.kwonlyargs}
    for extra in (node.args.vararg, node.args.kwarg):
        if extra:
            names.add(extra.arg)
    declared_nonlocal = set()
    # Comprehension variables are local to the comprehension (containers.py scopes them).
    scoped = {id(n) for c in _own_nodes(node) if isinstance(c, ast.comprehension) for n in ast.walk(c.target)}
    for sub in _own_nodes(node):
        if isinstance(sub, (ast.Global, ast.Nonlocal)):
            declared_nonlocal.update(sub.names)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and id(sub) not in scoped:
            names.add(sub.id)
        elif isinstance(sub, ast.FunctionDef) and sub is not node:
            names.add(sub.name)
    return frozenset(names - declared_nonlocal)


def _own_nodes(node: ast.FunctionDef | ast.Lambda):
    """The nodes of a function's body, not those of the lambdas and defs nested in it."""
    todo = list(node.body) if isinstance(node.body, list) else [node.body]
    while todo:
        sub = todo.pop()
        yield sub
        if isinstance(sub, (ast.FunctionDef, ast.Lambda)):
            todo.extend(sub.args.defaults + [d for d in sub.args.kw_defaults if d is not None])
            continue  # (its own scope)
        todo.extend(ast.iter_child_nodes(sub))


class GraphGenerator(GradMixin, WarnMixin, ErrstateMixin, BranchMixin, LoopMixin, StateMixin, BufferMixin, ContainerMixin, DrawMixin,
                     SurveyMixin, ast.NodeVisitor):
    """Compiles one call signature of `fn` into a pyfront-dialect module (with `survey`: lists
    every construct that keeps it from compiling instead, survey.py)."""

    def __init__(self, fn: types.FunctionType, args: tuple, kwargs: dict, profile=None,
                 relaxed: dict | None = None, max_nodes: int = DEFAULT_MAX_NODES,
                 runtime_state: frozenset = frozenset(), survey: bool = False):
        self.fn = fn
        self.budget = GraphBudget(max_nodes)
        self.profile = profile
        self.relaxed = relaxed or {}  # argument position -> relaxation (see specialize.spec_of)
        # State paths of Python scalars read at run time (state.py `_runtime_scalar`), and the
        # ones read as constants (path -> value).
        self.runtime_state = runtime_state
        self.scalar_reads: dict[str, Any] = {}
        self.runtime_scalars: dict[int, tuple] = {}  # id -> (Tensor, the path each call reads it at)
        self.appended_items: dict[int, list] = {}  # id(list in state) -> the items this call appended
        self.comprehensions = 0  # comprehensions being unrolled (their variables live in the frame meanwhile)
        self.args = args
        self.kwargs = kwargs
        self.identity_guards: list[IdentityGuard] = []
        self.state_guards: list[StateGuard] = []
        self._guarded: set = set()
        # Compiled outputs (tensors the call returns or prints); deferred prints and warnings
        # (print keyword arguments or a DeferredWarning), in program order.
        self.leaves: list[Tensor] = []
        self.effects: list[tuple[Any, Any]] = []
        self.frames: list[_Frame] = []
        self.call_sites: list[ast.Call] = []  # the call each inlined frame runs for (frames[1:])
        self.node: ast.AST | None = None
        # Loop counters of scf.for loops (id -> trip count): they may index arrays.
        self.loop_counters: dict[int, int] = {}
        # Attributes a real loop carries (loops.py): (id(object), name) -> the Obj; stores to them
        # inside the loop rebind the carried value, one store commits the last after the loop.
        self.carried_slots: dict[tuple[int, str], Any] = {}
        # Where state loads go while generating inside scf.if regions (hoisted above them).
        self.hoist_points: list[ir.InsertionPoint] = []
        # Attributes stored earlier in this call: later reads see the local copy.
        self.stored_attrs: dict[tuple[int, str], Tensor] = {}
        # The same for dict items ((id(dict), key)) and globals/cells (their path).
        self.stored_items: dict[tuple[int, Any], Tensor] = {}
        self.stored_roots: dict[str, Tensor] = {}
        # Every deferred store, last value per path, in first-store order; and the
        # objects read or written through a path (for the alias guard).
        self.stores: dict[str, tuple[Path, Tensor]] = {}
        self.objects: dict[str, Any] = {}
        self._tree_nodes: dict[int, tuple[Any, Any]] = {}  # id(view tensor) -> (tensor, ViewOf)
        self._unrolled_bodies: dict[int, tuple] = {}  # id(loop node) -> (node, branches.without_continues of its body)
        self._store_slots: dict[tuple, str] = {}  # (id(object), "attr"|"item", name) -> path written
        self.commits: list[tuple[str, Any]] = []
        # `lst.append(v)` on lists in Python state, in program order: (the list's path, v).
        self.appends: list[tuple[Path, Any]] = []
        self.append_commits: list[tuple[str, Any]] = []
        # Dicts and lists that a loop is iterating (id -> "keys" | "values"; containers.py).
        self.iterating: dict[int, list] = {}  # id -> (how, progress) per loop going through it
        self._unrolling_attempts = 0  # range loops being unrolled on trial (loops.range_loop)
        self.draws: list = []  # HostDraws in program order (draws.py)
        self.for_loops: list = []  # the scf.for loops being built, outermost first (loops.ForLoop)
        self.draw_taken: dict[int, Any] = {}  # draw index -> whether it ran, for draws in branches (draws.py)
        self.deepest = 0  # most frames inlined at once (the function's own included)
        self._init_buffers()
        self._init_survey(survey)

    # Entry -----------------------------------------------------------------------

    def build(self) -> Graph:
        node = live_def(self.fn)
        filename = self.fn.__code__.co_filename
        try:
            with deep_ast.room_for(node, filename):
                return self._build(node)
        except Unsupported as e:  # e.g. about an argument: point at the def line
            raise e.located(node, filename) from None
        except RecursionError:  # deep_ast's room was not enough: never the user's error
            raise Unsupported(f"{self.fn.__qualname__} nests too deeply for the graph generator",
                              node, filename) from None

    def _build(self, node: ast.FunctionDef) -> Graph:
        fn = self.fn
        if self.kwargs:
            raise Unsupported("keyword arguments at the call are not supported yet", node)
        ctx = new_context()
        with ctx, ir.Location.file(fn.__code__.co_filename, node.lineno, node.col_offset):
            module = ir.Module.create()
            arg_specs = [spec_of(a, self.relaxed.get(i)) for i, a in enumerate(self.args)]
            input_types, input_paths = [], []
            for i, s in enumerate(arg_specs):
                self._flatten_inputs(s, Path(f"arg{i}"), input_types, input_paths)
            name = "".join(c if c.isalnum() else "_" for c in fn.__name__)
            ftype = ir.FunctionType.get(input_types, [])
            with ir.InsertionPoint(module.body):
                f = func.FuncOp(name, ftype)
            f.attributes["pyfront.inputs"] = ir.ArrayAttr.get([ir.StringAttr.get(p) for p in input_paths])
            block = f.add_entry_block()
            with ir.InsertionPoint(block):
                values = iter(block.arguments)
                params = [self._arg_value(s, values, Path(f"arg{i}"), a)
                          for i, (s, a) in enumerate(zip(arg_specs, self.args))]
                result = self._call_function(fn, node, params, {}, canonical=True)
                if self.survey:
                    raise self.survey[0]
                leaves = self.leaves
                tree = self._result_tree(result, leaves)
                taken = {k: self._result_tree(v, leaves) for k, v in self.draw_taken.items()}
                func.ReturnOp([t.value for t in leaves])
            f.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(input_types, [t.value.type for t in leaves])
            )
        return Graph(module, name, tree, self.identity_guards, self.state_guards, ctx, self.effects,
                     mutations=self.mutation_commits, draws=self.draws, draw_taken=taken,
                     inlined_frames=self.deepest - 1)

    def _flatten_inputs(self, spec, path: Path, types_: list, paths: list) -> None:
        if isinstance(spec, ArraySpec):
            types_.append(tensor_type(spec.shape, S.check_dtype(spec.dtype)))
            paths.append(str(path))
        elif isinstance(spec, ScalarSpec):
            types_.append(tensor_type((), S.check_dtype(np.dtype(spec.type))))
            paths.append(str(path))
        elif isinstance(spec, SeqSpec):
            for i, s in enumerate(spec.items):
                self._flatten_inputs(s, path.item(i), types_, paths)
        elif isinstance(spec, ObjectSpec):
            types_.append(object_type())
            paths.append(str(path))

    def _arg_value(self, spec, values, path: Path, example: Any) -> Any:
        if isinstance(spec, ArraySpec):
            return self._input_array(Tensor(next(values), np.ndarray, source=path), example)
        if isinstance(spec, ScalarSpec):
            return Tensor(next(values), spec.type, source=path)
        if isinstance(spec, SeqSpec):
            return Seq(tuple(self._arg_value(s, values, path.item(i), e)
                             for i, (s, e) in enumerate(zip(spec.items, example))), spec.kind, path)
        if isinstance(spec, ObjectSpec):
            if not is_generator(example):  # a generator is only drawn from (draws.py)
                self._check_plain_object(example)
            return Obj(next(values), example, path)
        return Known(spec.value)

    # Frames and inlining ---------------------------------------------------------

    @property
    def frame(self) -> _Frame:
        return self.frames[-1]

    def _call_function(self, fn: types.FunctionType, node: ast.FunctionDef, args: list, kwargs: dict,
                       canonical: bool = False) -> Any:
        """Inline a call of `fn`; `canonical`: `args` hold one value per parameter, in order, with
        `*args` as a tuple and `**kwargs` as a dict (the compiled function's own arguments)."""
        if len(self.frames) >= MAX_INLINE_DEPTH:
            raise Unsupported(f"call depth above {MAX_INLINE_DEPTH} (recursion) is not supported yet", node)
        declared = {}
        for construct in ast.walk(node):
            if isinstance(construct, (ast.Yield, ast.YieldFrom)):
                raise Unsupported("generators (yield) run in the interpreter", construct, whole_code=fn.__code__)
            if isinstance(construct, (ast.Global, ast.Nonlocal)):
                declared.update((n, type(construct).__name__.lower()) for n in construct.names)
        site = f"{fn.__code__.co_filename}:{node.lineno}"
        # `node` is the source of this code object (source.live_def): a new one (hot reload) is another function.
        self._guard(IdentityGuard("attr", fn, "__code__", fn.__code__, site))
        if "__signature__" in getattr(fn, "__dict__", {}):
            raise Unsupported(f"{fn.__qualname__} has a __signature__ that need not be its code's", node)
        signature = inspect.signature(fn, follow_wrapped=False)
        try:
            bound = (inspect.BoundArguments(signature, dict(zip(signature.parameters, args))) if canonical
                     else signature.bind(*args, **kwargs))
        except TypeError as e:
            raise Unsupported(f"calling {fn.__qualname__}: {e}", node) from None
        self._guard_defaults(fn, bound, site, node)
        bound.apply_defaults()
        frame = _Frame(fn, fn.__code__.co_filename, local_names=_assigned_names(node), declared=declared,
                       call_line=getattr(self.node, "lineno", None) if self.frames else None)
        for name, value in bound.arguments.items():
            kind = signature.parameters[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL and not canonical:
                value = make_tuple(v if _is_value(v) else Known(v) for v in value)
            elif kind is inspect.Parameter.VAR_KEYWORD and not canonical:
                value = make_dict({k: v if _is_value(v) else Known(v) for k, v in value.items()})
            frame.env[name] = Known(value) if not _is_value(value) else value
        result = self._in_frame(frame, lambda: self._visit_body(node.body, top=True))
        if self.frames:
            self._unpoisoned(result, self.node)  # a callee whose return did not compile (survey)
        if not self.frames:
            self._finish_stores(node)
        return result

    def visit_Lambda(self, node: ast.Lambda) -> LocalFunction:
        return self._local_function(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        """A nested def: its name holds the function, inlined where called."""
        if node.decorator_list:
            raise Unsupported("a decorated nested def is not supported yet", node)
        self._assign(ast.copy_location(ast.Name(node.name, ast.Store()), node), self._local_function(node))

    def _local_function(self, node: ast.Lambda | ast.FunctionDef) -> LocalFunction:
        if self.comprehensions:  # its variables are gone when the function is called: not compiled
            raise Unsupported("a lambda or nested def made inside a comprehension is not supported yet", node)
        for sub in _own_nodes(node):
            if isinstance(sub, (ast.Nonlocal, ast.Global, ast.Yield, ast.YieldFrom)):
                raise Unsupported(f"{construct(sub)} in a lambda or nested def is not supported yet", sub)
        defaults = tuple(self.visit(d) for d in node.args.defaults)
        kw_defaults = {a.arg: self.visit(d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults)
                       if d is not None}
        return LocalFunction(node, self.frame, defaults, kw_defaults)

    def _call_local(self, fn: LocalFunction, args: list, kwargs: dict, node: ast.AST) -> Any:
        """Inline a call of a lambda or nested def made by the compiled code."""
        if len(self.frames) >= MAX_INLINE_DEPTH:
            raise Unsupported(f"call depth above {MAX_INLINE_DEPTH} (recursion) is not supported yet", node)
        spec, P = fn.node.args, inspect.Parameter
        positional = [(a, P.POSITIONAL_ONLY) for a in spec.posonlyargs] + [(a, P.POSITIONAL_OR_KEYWORD)
                                                                            for a in spec.args]
        first_default = len(positional) - len(fn.defaults)
        params = [P(a.arg, kind, default=fn.defaults[i - first_default] if i >= first_default else P.empty)
                  for i, (a, kind) in enumerate(positional)]
        params += [P(spec.vararg.arg, P.VAR_POSITIONAL)] if spec.vararg else []
        params += [P(a.arg, P.KEYWORD_ONLY, default=fn.kw_defaults.get(a.arg, P.empty)) for a in spec.kwonlyargs]
        params += [P(spec.kwarg.arg, P.VAR_KEYWORD)] if spec.kwarg else []
        name = getattr(fn.node, "name", "<lambda>")
        try:
            bound = inspect.Signature(params).bind(*args, **kwargs)
        except TypeError as e:
            raise Unsupported(f"calling {name}: {e}", node) from None
        bound.apply_defaults()
        frame = _Frame(fn.frame.fn, fn.frame.filename, local_names=_assigned_names(fn.node),
                       call_line=getattr(self.node, "lineno", None), enclosing=fn.frame)
        for param, value in bound.arguments.items():
            kind = bound.signature.parameters[param].kind
            frame.env[param] = make_tuple(value) if kind is P.VAR_POSITIONAL else \
                make_dict(dict(value)) if kind is P.VAR_KEYWORD else value
        if isinstance(fn.node, ast.Lambda):
            return self._in_frame(frame, lambda: self.visit(fn.node.body))
        return self._in_frame(frame, lambda: self._visit_body(fn.node.body, top=True))

    def _in_frame(self, frame: _Frame, run: Callable[[], Any]) -> Any:
        """`run()` with `frame` as the innermost frame: what it returns, or what a `return` in it does
        (None when the body falls off its end)."""
        self.frames.append(frame)
        self.deepest = max(self.deepest, len(self.frames))
        try:
            result = run()
            return Known(None) if result is None else result
        except FunctionReturn as r:
            return r.value
        except Unsupported as e:
            e.located(self.node, frame.filename)
            e.chain = e.chain or self._call_chain(e.lineno)
            raise
        finally:
            self.frames.pop()

    def _guard_defaults(self, fn: types.FunctionType, bound: inspect.BoundArguments, site: str,
                        node: ast.AST) -> None:
        """Default values the call falls back to become constants: guard that they stay the same objects.

        Only immutable values may (an array or list default can change in place, keeping its
        identity); the compiled function's own positional defaults never get here, since
        the API passes them as arguments (api.CompiledFunction.__call__), read at call time.
        """
        for p in bound.signature.parameters.values():
            if p.name in bound.arguments or p.default is p.empty:
                continue
            if not is_constant(p.default) and not isinstance(p.default, np.generic):
                raise Unsupported(f"parameter {p.name!r} of {fn.__qualname__} falls back to its default value, "
                                  f"a {type(p.default).__name__} that may change in place; pass it explicitly",
                                  node)
            if p.kind is p.KEYWORD_ONLY:  # a dict: guard the dict and the item
                self._guard(IdentityGuard("attr", fn, "__kwdefaults__", fn.__kwdefaults__, site))
                self._guard(IdentityGuard("item", fn.__kwdefaults__, p.name, p.default, site))
            else:  # a tuple: immutable
                self._guard(IdentityGuard("attr", fn, "__defaults__", fn.__defaults__, site))

    def _visit_body(self, body: list[ast.stmt], top: bool = False) -> None:
        """Visit statements; `top` means the rest of `body` is the rest of the function."""
        i = 0
        while i < len(body):
            stmt = body[i]
            try:
                if top and isinstance(stmt, ast.If) and (returns(stmt.body) or returns(stmt.orelse)):
                    # A return inside a branch on a computed value: the rest of
                    # this body becomes the path on which the branch does not return.
                    self.node = stmt
                    with ir.Location.file(self.frame.filename, stmt.lineno, stmt.col_offset):
                        self._visit_if_returning(stmt, body[i + 1:])
                    return
                i += self._visit_statement(stmt, body[i + 1:])
            except Unsupported as e:
                if not self._surveying():
                    raise
                self._skip_statement(stmt, e)
                i += 1

    def _visit_statement(self, stmt: ast.stmt, rest: list[ast.stmt]) -> int:
        """Visit `stmt`; returns how many statements of `stmt` + `rest` that took.

        An `if` on a computed value after which a variable would have a different Python type
        on each path (`running = 0` on one, a NumPy float64 on the other) takes the statements
        after it into both branches, up to MAX_TAIL_DUPLICATION, until the paths agree again
        (`running = running * gamma + r[t]` is a float64 on both): the same statements in the
        same order on each path."""
        if not isinstance(stmt, ast.If) or not rest:
            self.visit(stmt)
            return 1
        first_error = None
        for taken in range(min(len(rest), MAX_TAIL_DUPLICATION) + 1):
            tail = rest[:taken]
            candidate = ast.copy_location(ast.If(stmt.test, stmt.body + tail, stmt.orelse + tail), stmt)
            error = self._attempt(lambda: self.visit(candidate))
            if error is None:
                return taken + 1
            first_error = first_error or error
            if not isinstance(error, BranchTypeConflict):
                break
        raise first_error

    def _attempt(self, build: Callable[[], Any]) -> Unsupported | None:
        """Run `build`; if it raises Unsupported, undo what it generated and return the error."""
        block = ir.InsertionPoint.current.block
        ops_before = {op.operation for op in block.operations}
        saved = {name: copy.copy(value) for name, value in vars(self).items() if isinstance(value, (list, dict, set))}
        envs = [(frame, dict(frame.env)) for frame in self.frames]
        spent = self.budget.spent
        self._speculating += 1  # its failures are the attempt's, not blockers (survey.py)
        try:
            build()
            return None
        except Unsupported as e:
            reraise_if_asynchronous(e)  # an interrupt is the caller's, not the attempt's
            for op in reversed([op.operation for op in block.operations]):
                if op not in ops_before:
                    op.erase()
            vars(self).update(saved)
            for frame, env in envs:
                frame.env = env
            self.budget.spent = spent  # what it generated is gone
            return e
        finally:
            self._speculating -= 1

    def visit(self, node: ast.AST) -> Any:
        self.node = node
        self.budget.charge(node)
        loc = ir.Location.file(self.frame.filename, getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        with loc:
            return super().visit(node)

    def generic_visit(self, node: ast.AST) -> Any:
        raise Unsupported(f"{construct(node)} is not supported by the compiler yet", node)

    # Statements ------------------------------------------------------------------

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant):
            return  # docstring or bare constant
        self.visit(node.value)

    def visit_Pass(self, node: ast.Pass) -> None:
        return None

    def visit_Global(self, node: ast.Global) -> None:
        return None  # declarations: _call_function recorded them in the frame

    visit_Nonlocal = visit_Global

    def visit_Return(self, node: ast.Return) -> None:
        raise FunctionReturn(self.visit(node.value) if node.value else Known(None))

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        for target in node.targets:
            self._assign(target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            return
        self._assign(node.target, self.visit(node.value))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        """`t op= v` in CPython's order: the target's parts, its current value, then `v`.

        On an array the operation is in place (buffers.py), and storing the same array
        back (`self.W -= g`, `params[k] -= g`) is the identity Python's setattr/setitem is."""
        op, target = type(node.op), node.target
        if isinstance(target, ast.Name):
            current = self._load_name(target.id, target, float_or_float64=True)
            if isinstance(current, Seq) and current.kind is list:
                if op is not ast.Add:
                    raise Unsupported(f"`{symbol(op)}=` on a list is not supported yet", node)
                self._replace_list(current, current.items + tuple(self._iterate(self.visit(node.value), node)), node)
                return
            new = self._augmented(op, current, self.visit(node.value), node)
            if not _is_array(current):  # an array was written in place: every name bound to it sees it
                self._assign(target, new)
        elif isinstance(target, ast.Attribute):
            obj = self.visit(target.value)
            current = self._attribute(obj, target.attr, target)
            new = self._augmented(op, current, self.visit(node.value), node)
            instance_attr = isinstance(obj, Obj) and (target.attr in getattr(obj.example, "__dict__", {})
                                                      or (id(obj.example), target.attr) in self.stored_attrs)
            if not (_is_array(current) and instance_attr):  # else setattr binds the object it holds
                self._store_attr(obj, target.attr, new, target)
        elif isinstance(target, ast.Subscript):
            base, key = self.visit(target.value), self.visit(target.slice)
            if isinstance(base, Known) and type(base.value) is np.ndarray:
                base = self._as_computed(base)  # `a[k]` must be a view of `a`, not a folded copy
            current = self._subscript(base, key, target)
            new = self._augmented(op, current, self.visit(node.value), node)
            if not (isinstance(base, Obj) and _is_array(current)):  # else setitem binds the object it holds
                self._store_item(base, key, new, target)
        else:
            raise Unsupported(f"augmented assignment to {construct(target)} is not supported", node)

    def _augmented(self, op: type, current: Any, operand: Any, node: ast.AST) -> Any:
        if _is_array(current):
            return self._inplace(op, current, operand, node)
        return self._binop(op, current, operand)

    def _replace_list(self, old: Seq, items: tuple, node: ast.AST) -> None:
        self._check_not_iterating(id(old), True, node)
        self._replace_value(old, Seq(items, list), node)

    def _replace_value(self, old: Seq, new: Seq, node: ast.AST) -> None:
        """Mutate a list or dict created in this call: it is one object in Python, so every name,
        container, attribute or item it was stored into, and pending store refers to `new` now."""
        if old.source is not None:
            raise Unsupported(f"mutating a {old.kind.__name__} that the caller can see is not supported yet", node)
        if self.hoist_points:  # the new items live in the region; a range loop is unrolled instead
            raise Unsupported(f"mutating a {old.kind.__name__} inside a branch or loop on a computed value "
                              "is not supported yet", node)
        self._swap_buffer(lambda v: v is old, lambda v: new)

    def _assign(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            if target.id in self.frame.declared:
                self._store_root(target.id, value, target)
            else:
                self.frame.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = self._unpack(value, len(target.elts), target)
            for t, v in zip(target.elts, items):
                self._assign(t, v)
        elif isinstance(target, ast.Attribute):
            self._assign_attribute(target, value)
        elif isinstance(target, ast.Subscript):
            self._assign_item(target, value)
        else:
            raise Unsupported(f"assignment to {construct(target)} is not supported yet", target)

    def _unpack(self, value: Any, n: int, node: ast.AST) -> list:
        items = self._iterate(value, node)
        if len(items) != n:
            raise Unsupported(f"unpacking {len(items)} values into {n} targets raises ValueError", node)
        return items

    def visit_For(self, node: ast.For) -> None:
        zipped = self._zipped_arrays(node.iter)
        if zipped is not None and self.rows_loop(node, zipped, zipped=True):
            return
        iterable = self.visit(node.iter)
        if isinstance(iterable, Tensor) and iterable.ndim and iterable.shape[0] is None:
            self._for_rows(node, iterable)
            return
        if isinstance(iterable, Tensor) and iterable.ndim and self.rows_loop(node, [iterable]):
            return
        if node.orelse:
            raise Unsupported("for/else is not supported yet", node)
        if isinstance(iterable, Known) and type(iterable.value) is range and self.range_loop(node, iterable.value):
            return
        if isinstance(iterable, Iter) and iterable.steps is not None and not iterable.consumed:
            iterable.consumed = True  # `for t in reversed(range(n))`: the loop exhausts it
            if self.range_loop(node, iterable.steps):
                return
            iterable.consumed = False  # unrolled below, which consumes it
        self._unroll(node, iterable)

    def _unroll(self, node: ast.For, iterable: Any) -> None:
        """The loop's iterations, one after the other, over a compile-time iterable."""
        body = self._unrolled_bodies.setdefault(id(node), (node, without_continues(node.body)))[1]
        with self._iteration(iterable, node) as items:
            iterations = len(items) if hasattr(items, "__len__") else 1  # a generator: charged as it runs
            with self.budget.unrolling(iterations, node.body, node) as left:
                for done, item in enumerate(items):
                    left[0] = iterations - done  # this iteration and those after it
                    self._assign(node.target, item)
                    try:
                        self._visit_body(body)
                    except LoopContinue:
                        continue
                    except LoopBreak:
                        break

    def visit_Break(self, node: ast.Break) -> None:
        raise LoopBreak()

    def visit_Continue(self, node: ast.Continue) -> None:
        raise LoopContinue()

    def visit_Assert(self, node: ast.Assert) -> None:
        if not __debug__:  # python -O compiles asserts away, test and message included
            return
        test = self.visit(node.test)
        if isinstance(test, Known):
            if not S.fold(bool, test.value).value:
                raise Unsupported("an assert that fails (the interpreter raises AssertionError)", node)
            return
        # As `if not test: raise AssertionError(msg)`: a failure re-runs the call in the
        # interpreter, which evaluates the message and raises.
        S.guard(S.truth(test), "raise", f"the assert at line {node.lineno} holds")

    # Expressions -------------------------------------------------------------------

    def visit_Constant(self, node: ast.Constant) -> Known:
        return Known(node.value)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Known | Text:
        # Of values known while compiling (`params[f"W{i}"]` in an unrolled loop, `f"{x.shape}"`),
        # an f-string is a constant; of values computed at run time, text the host makes (text.py).
        return text.text_of([part.value if isinstance(part, ast.Constant) else self._field(part)
                             for part in node.values])

    def _field(self, node: ast.FormattedValue) -> str | tuple:
        spec = Known("") if node.format_spec is None else self.visit(node.format_spec)
        if not isinstance(spec, Known):
            raise Unsupported("an f-string whose format spec is computed at run time is not supported yet", node)
        convert = {-1: None, ord("s"): str, ord("r"): repr, ord("a"): ascii}[node.conversion]
        return text.rendered(self.visit(node.value), text.ReplacementField(convert, spec.value), node)

    def visit_Name(self, node: ast.Name) -> Any:
        return self._load_name(node.id, node)

    def _load_name(self, name: str, node: ast.AST, float_or_float64: bool = False) -> Any:
        """The value of `name`; a FloatOrFloat64 only where `float_or_float64` (an operand of arithmetic)."""
        frame = self.frame
        while name not in frame.local_names and frame.enclosing is not None:
            frame = frame.enclosing  # a free name of a lambda or nested def: its maker's, as it is now
        if name in frame.local_names:
            if name not in frame.env:
                raise Unsupported(f"local variable {name!r} referenced before assignment", node)
            value = self._unpoisoned(frame.env[name], node)
            if isinstance(value, FloatOrFloat64) and not float_or_float64:
                return S.resolve_float_or_float64(value, repr(name))
            return value
        fn = frame.fn
        code = fn.__code__
        if name in code.co_freevars:
            cell = fn.__closure__[code.co_freevars.index(name)]
            stored = self._stored_root("cell", cell, name)
            if stored is not None:
                return stored  # written earlier in this call
            try:
                value = cell.cell_contents
            except ValueError:
                raise Unsupported(f"free variable {name!r} referenced before assignment", node) from None
            return self._state_root(value, Path(f"cell:{name}"), ("cell", cell, name), node)
        stored = self._stored_root("item", fn.__globals__, name)
        if stored is not None:
            return stored  # written earlier in this call
        if name in fn.__globals__:
            return self._state_root(fn.__globals__[name], Path(f"global:{name}"),
                                    ("item", fn.__globals__, name), node)
        if hasattr(builtins, name):
            self._guard(IdentityGuard("item", fn.__globals__, name, MISSING, self._site(node)))
            return Known(getattr(builtins, name))
        raise Unsupported(f"name {name!r} is not defined", node)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        return self._unpoisoned_place(self._attribute(self.visit(node.value), node.attr, node), node)

    def _attribute(self, base: Any, name: str, node: ast.AST) -> Any:
        """`base.name` (also `getattr(base, "name")`)."""
        if isinstance(base, Tensor):
            return self._tensor_attr(base, name, node)
        if isinstance(base, Seq) and base.kind is list and name in LIST_METHODS:
            return BoundMethod(base, name)
        if name == "append" and isinstance(base, Obj) and _plain_list(base.example):
            return BoundMethod(base, name)
        if name == "copy" and _is_list(base):
            return BoundMethod(base, name)
        if name in DICT_METHODS and _is_dict(base):
            return BoundMethod(base, name)
        if isinstance(base, Obj):
            if is_generator(base.example):
                return self._generator_method(base, name, node)
            return self._object_attr(base, name, node)
        if isinstance(base, Known):
            value = base.value
            if value is sys and name == "stdout":  # `sys.stdout.write(text)`: a deferred print
                return Known(STDOUT)
            if value is STDOUT and name in ("write", "flush"):
                return BoundMethod(base, name)
            if isinstance(value, (types.ModuleType, type, types.FunctionType)):
                return self._namespace_attr(base, name, node)
            if type(value) is np.ndarray and name in numpy_api.ATTRIBUTES:
                return S.fold(getattr, value, name)  # `.T` of a folded array is NumPy's view of it
            if type(value) is np.ndarray and name in numpy_api.METHODS:
                return BoundMethod(base, name)  # handlers take folded arrays (numpy_api.views)
            if isinstance(value, (np.ndarray, np.generic)):
                return self._tensor_attr(S.to_tensor(base), name, node)
            return S.fold(getattr, value, name)
        if isinstance(base, Text):
            raise Unsupported(f"str.{name}: {text.ONLY_SHOWN}", node)
        raise Unsupported(f"attribute {name!r} of {S.describe(base)}", node)

    def _tensor_attr(self, t: Tensor, name: str, node: ast.AST) -> Any:
        if name in numpy_api.ATTRIBUTES:
            return numpy_api.ATTRIBUTES[name](t)
        if name in numpy_api.METHODS:
            return BoundMethod(t, name)
        raise Unsupported(f"ndarray attribute {name!r} is not supported yet", node)

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        return self._unpoisoned_place(self._subscript(self.visit(node.value), self.visit(node.slice), node), node)

    def _subscript(self, base: Any, key: Any, node: ast.Subscript) -> Any:
        if isinstance(key, Tensor) and isinstance(base, Tensor) and id(key) in self.loop_counters:
            return self._take_row(base, key, node)
        if isinstance(base, Tensor) or isinstance(base, Known) and type(base.value) is np.ndarray \
                and not isinstance(key, Known):
            base = S.to_tensor(base)
            if base.pytype is not np.ndarray:
                raise Unsupported("indexing a NumPy scalar is not supported", node)
            return indexing.getitem(base, indexing.as_key(key), self._profiled_shape(node))
        if not isinstance(key, Known):
            if S.is_sequence(base) and isinstance(key, Tensor) and key.ndim == 0 and key.dtype.kind in "iu":
                return self._sequence_item(base, key, node)
            raise Unsupported("indexing with a computed index is not supported yet", node)
        k = key.value
        if isinstance(base, Known):
            return S.fold(operator.getitem, base.value, k)
        if isinstance(base, Text):
            return text.sliced(base, k, node)
        if isinstance(base, Seq) and base.kind is dict:
            return self._dict_lookup(base, k, node)
        if isinstance(base, Seq):
            if isinstance(k, np.integer):
                k = int(k)
            return S.fold(operator.getitem, base.items, k).value if type(k) is int else Seq(base.items[k], base.kind)
        if isinstance(base, Obj):
            return self._object_item(base, k, node)
        raise Unsupported(f"subscript of {S.describe(base)} is not supported yet", node)

    def _sequence_item(self, seq: Seq | Known, index: Tensor, node: ast.AST) -> Tensor:
        """`seq[i]` for a computed int `i` (token ids: `tokens[position]`): an item of the array
        of a list or tuple of scalars of one Python type. An index out of range deopts, so the
        interpreter raises Python's IndexError. (Items that are arrays are refused: Python gives
        the item itself, an array the caller can see, not a copy.)"""
        items = [Known(v) for v in seq.value] if isinstance(seq, Known) else seq.items
        pytypes = {type(i.value) if isinstance(i, Known) else i.pytype for i in items}
        if len(pytypes) != 1 or not all(isinstance(i, Known) or i.ndim == 0 for i in items):
            raise Unsupported("indexing a list or tuple by a computed int is supported for items that are "
                              "scalars of one type", node)
        (pytype,) = pytypes
        if not (pytype in (int, float, bool) or issubclass(pytype, np.generic)):
            raise Unsupported(f"indexing a sequence of {pytype.__name__} by a computed int is not supported yet",
                              node)
        item = indexing.getitem(S.array_from_sequence(seq), indexing.as_key(index))
        return Tensor(item.value, pytype)

    def _profiled_shape(self, node: ast.AST) -> tuple | None:
        """The one shape profiling saw for the value of expression `node` of the compiled function, if any."""
        seen = self.profile.site(node) if self.profile is not None and self.frame.fn is self.fn else None
        if seen is None or not seen.stable:
            return None
        ((_, dtype, shape, _),) = seen.facts
        return shape if dtype is not None else None

    def visit_Slice(self, node: ast.Slice) -> Any:
        parts = [self.visit(p) if p is not None else Known(None) for p in (node.lower, node.upper, node.step)]
        if all(isinstance(p, Known) for p in parts):
            return Known(slice(*(p.value for p in parts)))
        if not all(isinstance(p, (Known, Tensor)) for p in parts):
            raise Unsupported("slice bounds must be integers", node)
        return indexing.ComputedSlice(*parts)

    def visit_Tuple(self, node: ast.Tuple) -> Any:
        return self._sequence(node.elts, tuple)

    def visit_List(self, node: ast.List) -> Any:
        return self._sequence(node.elts, list)

    def _sequence(self, elts: list[ast.expr], kind: type) -> Any:
        if any(isinstance(e, ast.Starred) for e in elts):
            raise Unsupported("starred expressions are not supported yet", elts[0])
        items = tuple(self.visit(e) for e in elts)
        if kind is tuple and all(isinstance(i, Known) for i in items):
            return Known(tuple(i.value for i in items))
        return Seq(items, kind)

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        return self._binop(type(node.op), self._arithmetic_operand(node.left), self._arithmetic_operand(node.right))

    def _arithmetic_operand(self, node: ast.expr) -> Any:
        return self._load_name(node.id, node, float_or_float64=True) if isinstance(node, ast.Name) else self.visit(node)

    def _binop(self, op: type, left: Any, right: Any) -> Any:
        if op not in BINOPS:
            raise Unsupported(f"operator {construct(op)} is not supported yet")
        if isinstance(left, FloatOrFloat64) or isinstance(right, FloatOrFloat64):
            return self._float_or_float64_op(op, left, right)
        pyop, uf = BINOPS[op]
        if isinstance(left, Known) and isinstance(right, Known):
            return S.fold(pyop, left.value, right.value)
        if op is ast.Mod and isinstance(left, Known) and type(left.value) is str:
            return text.percent_format(left.value, right, self.node)
        if isinstance(left, Text) or isinstance(right, Text):
            return self._text_operator(op, left, right)
        if isinstance(left, (Seq, Known)) and isinstance(right, (Seq, Known)) and op is ast.Add:
            a, b = (v if isinstance(v, Seq) else Seq(tuple(map(Known, v.value)), type(v.value))
                    for v in (left, right))
            if a.kind is not b.kind:
                raise Unsupported(f"can only concatenate {a.kind.__name__} to {a.kind.__name__}")
            return Seq(a.items + b.items, a.kind)
        if op is ast.Mult and (isinstance(left, Seq) and _python_int(right) or isinstance(right, Seq) and _python_int(left)):
            seq, count = (left, right) if isinstance(left, Seq) else (right, left)  # `[0.0] * n`: the same items n times
            return Seq(seq.items * count.value, seq.kind)
        left, right = _operator_operands(left, right, construct(op))
        if op is ast.MatMult:
            return S.matmul(left, right)
        if op is ast.Pow:
            return S.power(left, right)
        return S.operator(uf, left, right)

    @staticmethod
    def _text_operator(op: type, left: Any, right: Any) -> Text:
        """`"acc: " + str(acc)`: concatenating texts (or a str constant) is text too."""
        if op is not ast.Add or not all(isinstance(v, Text) or isinstance(v, Known) and type(v.value) is str
                                        for v in (left, right)):
            raise Unsupported(f"operator {construct(op)}: {text.ONLY_SHOWN}")
        return text.text_of([v if isinstance(v, Text) else v.value for v in (left, right)])

    def _float_or_float64_op(self, op: type, left: Any, right: Any) -> Any:
        """`+ - * /` with a FloatOrFloat64 x: with a Python number, Python's float and NumPy's float64
        give one number, a float64 exactly where x is one (dividing by zero, which raises for a
        float, is guarded); with a float64 scalar or array, a float64 either way. Other operators
        and operands need x's type: it must be a float64 (guarded)."""
        numbers = [v.number if isinstance(v, FloatOrFloat64) else v for v in (left, right)]
        others = [v for v in (left, right) if not isinstance(v, FloatOrFloat64)]
        if op in (ast.Add, ast.Sub, ast.Mult, ast.Div) and all(_python_number(v) for v in others):
            nonzero = S.ufunc(np.not_equal, numbers[1], Known(0)) if op is ast.Div else Known(True)
            why = "the divisor is not zero (a Python float raises ZeroDivisionError, a NumPy float64 warns)"
            if isinstance(nonzero, Known) and not nonzero.value:
                raise Unsupported(f"{why}: it is 0")
            if not isinstance(nonzero, Known):
                S.guard(nonzero.value, "value", why)
            flags = [v.is_numpy for v in (left, right) if isinstance(v, FloatOrFloat64)]
            is_numpy = flags[0] if len(flags) == 1 else S.ufunc(np.logical_or, *flags)
            return float_or_float64(self._binop(op, *numbers), is_numpy)
        if op in (ast.Add, ast.Sub, ast.Mult, ast.Div) and all(_float64_operand(v) for v in others):
            return self._binop(op, *numbers)
        return self._binop(op, *(S.resolve_float_or_float64(v, "an operand") if isinstance(v, FloatOrFloat64)
                                 else v for v in (left, right)))

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        operand = self.visit(node.operand)
        pyop, uf = UNARYOPS[type(node.op)]
        if isinstance(operand, Known):
            return S.fold(pyop, operand.value)
        if S.is_sequence(operand):
            raise Unsupported(f"{construct(node.op)} of a tuple or list (Python raises TypeError)", node)
        if isinstance(node.op, ast.UAdd) and isinstance(operand, Tensor):
            return Tensor(operand.value, operand.pytype)  # +x is a copy
        if isinstance(node.op, ast.Not):  # a Python bool; NumPy raises for arrays of several elements
            return Tensor(S.logical_not(S.truth(operand)), bool)
        return S.operator(uf, operand)

    def visit_Compare(self, node: ast.Compare) -> Any:
        return self._compare_chain(self.visit(node.left), node.ops, node.comparators, node)

    def _compare_chain(self, left: Any, ops: list, comparators: list, node: ast.Compare) -> Any:
        """`left op0 c0 op1 c1 ...`: as Python, each comparator is evaluated once, and only while
        the comparisons before it held (`a < b < c` is `a < b and b < c`, b evaluated once)."""
        right = self.visit(comparators[0])
        result = self._compare(ops[0], left, right, node)
        if len(ops) == 1:
            return result
        return self._short_circuit(result, False, comparators[1:],
                                   lambda: self._compare_chain(right, ops[1:], comparators[1:], node), node)

    def _compare(self, op: ast.cmpop, left: Any, right: Any, node: ast.Compare) -> Any:
        pyop, uf = CMPOPS[type(op)]
        if isinstance(left, Known) and isinstance(right, Known):
            return S.fold(pyop, left.value, right.value)
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (Seq, Obj, DictView, Iter)):
            found = self._contains(right, left, node).value
            return Known(found if isinstance(op, ast.In) else not found)
        if isinstance(op, (ast.Is, ast.IsNot)) and _never_none(left, right):
            return Known(isinstance(op, ast.IsNot))  # `self.m is None` where self.m holds a dict
        if uf is None:
            raise Unsupported(f"{construct(op)} on computed values is not supported yet", node)
        if isinstance(left, Text) or isinstance(right, Text):
            raise Unsupported(f"{construct(op)}: {text.ONLY_SHOWN}", node)
        return S.ufunc(uf, *_operator_operands(left, right, construct(op)))

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        return self._bool_op(node.values, isinstance(node.op, ast.Or), node)

    def _test(self, node: ast.expr) -> Any:
        """The value of an `if`, `while` or conditional expression's test, of which only the truth
        matters: `a and b` with a computed `a` is the truth of both (`while err > tol and it < 50`,
        an np.bool_ and a bool, compiles although its value's type depends on the path)."""
        if not isinstance(node, ast.BoolOp):
            return self.visit(node)
        is_or = isinstance(node.op, ast.Or)

        def truth(values: list[ast.expr]) -> Any:
            first = self._test(values[0])
            first = Known(np.bool_(S.fold(bool, first.value).value)) if isinstance(first, Known) \
                else Tensor(S.truth(first), np.bool_)
            if len(values) == 1:
                return first
            return self._short_circuit(first, is_or, values[1:], lambda: truth(values[1:]), node)
        return truth(node.values)

    def _bool_op(self, values: list[ast.expr], is_or: bool, node: ast.BoolOp) -> Any:
        first = self.visit(values[0])
        if len(values) == 1:
            return first
        return self._short_circuit(first, is_or, values[1:], lambda: self._bool_op(values[1:], is_or, node), node)

    def _short_circuit(self, value: Any, stops_on: bool, rest_nodes: list[ast.expr], rest: Callable[[], Any],
                       node: ast.AST) -> Any:
        """`value` if its truth is `stops_on`, else `rest()` (the value of `rest_nodes`): `or` stops
        on True; `and` and a comparison chain on False.

        For a computed `value`, `rest` is evaluated whatever the outcome when it has no effect
        (`_evaluates_purely`; a guard it needs fails only towards the interpreter), else on one
        side of an `scf.if`, where Python would evaluate it; `scf.if` merges the two."""
        if isinstance(value, Known):
            return value if S.fold(bool, value.value).value == stops_on else rest()
        if not isinstance(value, Tensor):
            raise Unsupported(f"and/or on {S.describe(value)} is not supported yet", node)
        if self._evaluates_purely(rest_nodes):
            other = self._without_effects(rest, node)
            go_on = lambda: [other]  # noqa: E731
        else:
            go_on = lambda: [rest()]  # noqa: E731
        stop = lambda: [value]  # noqa: E731
        (merged,) = self._region_if(S.truth(value), *((stop, go_on) if stops_on else (go_on, stop)), node)
        return merged

    def _evaluates_purely(self, nodes: list[ast.expr]) -> bool:
        """Whether evaluating `nodes` calls nothing but pure builtins (len, abs, min, ...): loads,
        operators and comparisons only, as in `0 <= i + k < len(xs)`."""
        frame = self.frame
        for n in (n for node in nodes for n in ast.walk(node)):
            if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in _PURE_CALL_NAMES
                                                and n.func.id not in frame.local_names
                                                and n.func.id not in frame.fn.__code__.co_freevars
                                                and n.func.id not in frame.fn.__globals__):
                return False
            if isinstance(n, (ast.NamedExpr, ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom)):
                return False
        return True

    def _without_effects(self, evaluate: Callable[[], Any], node: ast.AST) -> Any:
        """`evaluate()`, refused if it recorded a print, warning, draw or store (a property getter
        can make one): Python might not have evaluated it."""
        def effects() -> tuple:
            return len(self.effects), len(self.draws), len(self.appends), {k: id(v) for k, (_, v) in self.stores.items()}

        before = effects()
        value = evaluate()
        if effects() != before:
            raise Unsupported("an operand of and/or or of a comparison chain that Python evaluates only "
                              "sometimes has a side effect", node)
        return value

    def visit_Call(self, node: ast.Call) -> Any:
        callee = self.visit(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.GeneratorExp) and len(node.args) == 1 and isinstance(callee, Known) \
                    and _hashable(callee.value) and callee.value in GENERATOR_CONSUMERS:
                args.append(self._generator_argument(a))
            elif isinstance(a, ast.Starred):
                value = self.visit(a.value)
                if isinstance(value, Seq):
                    args.extend(value.items)
                elif isinstance(value, Known):
                    args.extend(Known(v) for v in value.value)
                else:
                    raise Unsupported("*args of a computed value", a)
            else:
                args.append(self.visit(a))
        kwargs = {}
        for kw in node.keywords:
            items = self._keyword_items(self.visit(kw.value), node) if kw.arg is None else {kw.arg: self.visit(kw.value)}
            if kwargs.keys() & items.keys():
                raise Unsupported("a keyword argument given twice (Python raises TypeError)", node)
            kwargs.update(items)
        return self._call(callee, args, kwargs, node)

    def _call(self, callee: Any, args: list, kwargs: dict, node: ast.AST) -> Any:
        if isinstance(callee, BoundMethod):
            if callee.name == "get" and _is_dict(callee.receiver):
                return self._dict_get(callee.receiver, args, kwargs, node)
            if callee.name == "setdefault" and _is_dict(callee.receiver):
                return self._dict_setdefault(callee.receiver, args, kwargs, node)
            if callee.name == "copy" and (_is_dict(callee.receiver) or _is_list(callee.receiver)):
                if args or kwargs:
                    raise Unsupported(f"{S.describe(callee.receiver)}.copy takes no arguments", node)
                return self._copied(callee.receiver, False, node)
            if callee.name in DICT_VIEWS and _is_dict(callee.receiver):
                if args or kwargs:
                    raise Unsupported(f"dict.{callee.name} takes no arguments", node)
                return DictView(callee.receiver, callee.name)
            if isinstance(callee.receiver, Known) and callee.receiver.value is STDOUT:
                return self._stdout_method(callee.name, args, kwargs, node)
            if isinstance(callee.receiver, Seq):
                return self._list_method(callee.receiver, callee.name, args, kwargs, node)
            if callee.name == "append" and isinstance(callee.receiver, Obj) and _plain_list(callee.receiver.example):
                return self._append_to_state_list(callee.receiver, args, kwargs, node)
            if isinstance(callee.receiver, Obj) and is_generator(callee.receiver.example):
                return self._draw(callee.receiver, callee.receiver.example, callee.name, args, kwargs, node)
            if callee.function is not None:
                return self._inline(callee.function, [callee.receiver] + args, kwargs, node)
            handler = numpy_api.METHODS[callee.name]
            if "out" in kwargs and callee.name in OUT_METHODS:
                return self._call_with_out(handler, [callee.receiver] + args, kwargs, f"ndarray.{callee.name}", node)
            return self._apply(handler, [callee.receiver] + args, kwargs, f"ndarray.{callee.name}")
        if isinstance(callee, LocalFunction):
            return self._call_local(callee, args, kwargs, node)
        if isinstance(callee, Obj) and not is_generator(callee.example):
            return self._call_object(callee, args, kwargs, node)
        if not isinstance(callee, Known):
            raise Unsupported(f"calling {S.describe(callee)} is not supported", node)
        fn = callee.value
        if fn is print:
            return self._print(args, kwargs, node)
        if fn is str and len(args) == 1 and not kwargs and not isinstance(args[0], Known):
            return text.text_of([text.rendered(args[0], text.ReplacementField(None, ""), node)])
        if getattr(fn, "__name__", None) == "format" and type(getattr(fn, "__self__", None)) is str:
            return text.str_format(fn.__self__, args, kwargs, node)
        if fn is warnings.warn:
            return self._warn(args, kwargs, node)
        if getattr(fn, "__name__", None) == "at" and isinstance(getattr(fn, "__self__", None), np.ufunc):
            return self._ufunc_at(fn.__self__, args, kwargs, node)
        if fn is isinstance and len(args) == 2 and not kwargs and not isinstance(args[0], Known):
            return self._isinstance(args[0], args[1], node)
        if isinstance(fn, grad_function_type()):
            return self._grad_call(fn, args, kwargs, node)
        if is_draw_method(fn):
            return self._draw_method(fn, args, kwargs, node)
        if self._is_grad_transform(fn) and all(isinstance(a, Known) for a in args + list(kwargs.values())):
            return S.fold(fn, *(a.value for a in args), **{k: v.value for k, v in kwargs.items()})
        fn = uncompiled(fn)  # a pyfront.compile'd helper is inlined like the plain function
        interpreted = getattr(fn, INTERPRETED_ATTRIBUTE, None) if isinstance(fn, types.FunctionType) else None
        if interpreted is not None:
            raise Unsupported(interpreted, node)
        handler = numpy_api.FUNCTIONS.get(fn) if _hashable(fn) else None
        if handler is not None:
            name = f"np.{getattr(fn, '__name__', fn)}"
            if "out" in kwargs and (isinstance(fn, np.ufunc) or fn is np.clip):
                return self._call_with_out(handler, args, kwargs, name, node)
            return self._apply(handler, args, kwargs, name)
        result = self._call_builtin(fn, args, kwargs, node)
        if result is not MISSING:
            return result
        if all(isinstance(a, Known) for a in args + list(kwargs.values())) and _is_pure(fn):
            return self._from_python(S.fold(fn, *(a.value for a in args), **{k: v.value for k, v in kwargs.items()}).value)
        if _hashable(fn) and len(args) == 1 and not kwargs and numpy_api.converts(fn):
            return numpy_api.convert(fn, args[0])
        if isinstance(fn, types.FunctionType):
            return self._inline(fn, args, kwargs, node)
        if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
            raise Unsupported(f"calling bound method {fn.__qualname__} of a constant object", node)
        raise Unsupported(f"call to {getattr(fn, '__qualname__', fn)!r} is not supported by the compiler", node)

    def _call_object(self, obj: Obj, args: list, kwargs: dict, node: ast.AST) -> Any:
        """`self.attn(x)`, `layer(x)`: Python runs the `__call__` of the object's class (an instance
        attribute of that name is never used), inlined like a method."""
        cls = type(obj.example)
        call = inspect.getattr_static(cls, "__call__", None)
        if not isinstance(call, types.FunctionType):
            raise Unsupported(f"calling {S.describe(obj)} is not supported", node)
        self._guard(IdentityGuard("attr", cls, "__call__", call, self._site(node)))
        return self._inline(call, [obj, *args], kwargs, node)

    def _list_method(self, lst: Seq, name: str, args: list, kwargs: dict, node: ast.AST) -> Any:
        """`lst.append(v)`, `.extend(it)`, `.insert(i, v)`, `.reverse()`, `.pop(i)` on a list this call made."""
        items, result = list(lst.items), Known(None)
        try:
            if kwargs:
                raise TypeError(f"list.{name}() takes no keyword arguments")
            if name == "append" and len(args) == 1:
                items.append(args[0])
            elif name == "extend" and len(args) == 1:
                items.extend(self._iterate(args[0], node))
            elif name == "insert" and len(args) == 2 and isinstance(args[0], Known):
                items.insert(operator.index(args[0].value), args[1])
            elif name == "reverse" and not args:
                items.reverse()
            elif name == "pop" and len(args) <= 1 and all(isinstance(a, Known) for a in args):
                result = items.pop(*(operator.index(a.value) for a in args))
            else:
                raise TypeError(f"list.{name} with these arguments")
        except (TypeError, IndexError) as e:
            raise Unsupported(f"list.{name}: {e} (not compiled)", node) from None
        self._replace_list(lst, tuple(items), node)
        return result

    def _print(self, args: list, kwargs: dict, node: ast.AST) -> Known:
        """`print` is deferred: the runtime prints after every guard held, before committing state."""
        if self.hoist_points:
            raise Unsupported("print inside a branch on a computed value is not supported yet", node)
        options = {}
        for k, v in kwargs.items():
            if not isinstance(v, Known) or not (k in ("sep", "end") and isinstance(v.value, (str, type(None)))
                                                or k == "flush" and type(v.value) is bool):
                raise Unsupported(f"print(..., {k}=...) is not supported yet (only constant sep, end and flush)", node)
            options[k] = v.value
        if any(isinstance(a, (Obj, BoundMethod)) for a in args):
            raise Unsupported("printing objects is not supported yet (their repr may read state)", node)
        self.effects.append((self._result_tree(Seq(tuple(self._by_value(a) for a in args)), self.leaves), options))
        return Known(None)

    def _stdout_method(self, name: str, args: list, kwargs: dict, node: ast.AST) -> Any:
        """`sys.stdout.write(text)` prints `text` as `print(text, end="")` does (deferred with the prints;
        it returns the text's length, known only for constant text); `sys.stdout.flush()` flushes then."""
        if kwargs or len(args) != (name == "write"):
            raise Unsupported(f"sys.stdout.{name} with these arguments (Python raises TypeError)", node)
        if name == "flush":
            self._print([], {"end": Known(""), "flush": Known(True)}, node)
            return Known(None)
        if not isinstance(args[0], Text) and not (isinstance(args[0], Known) and type(args[0].value) is str):
            raise Unsupported("sys.stdout.write of other than text (Python raises TypeError)", node)
        self._print(args, {"end": Known("")}, node)
        return Known(len(args[0].value)) if isinstance(args[0], Known) else \
            Unavailable("the length of text made from computed values")

    def _apply(self, handler, args: list, kwargs: dict, name: str) -> Any:
        try:
            inspect.signature(handler).bind(*args, **kwargs)
        except TypeError as e:
            raise Unsupported(f"{name}: unsupported arguments ({e})") from None
        return handler(*args, **kwargs)

    def _inline(self, fn: types.FunctionType, args: list, kwargs: dict, node: ast.AST) -> Any:
        if fn.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
            raise Unsupported(f"{fn.__qualname__} is a generator or coroutine", node)
        callee_node = live_def(fn)
        saved = self.node
        self.call_sites.append(node)
        try:
            with deep_ast.room_for(callee_node, fn.__code__.co_filename):
                return self._call_function(fn, callee_node, args, kwargs)
        finally:
            self.call_sites.pop()
            self.node = saved

    def _profiled_outcomes(self, test: ast.expr) -> Any:
        """The outcomes (a Counter) the profile saw for the branch test `test`, or None.

        Branches of the compiled function itself are profiled; so are those of
        functions being differentiated and their callees (profiler.py), where
        a branch must be speculated to be differentiated at all.
        """
        if self.profile is None:
            return None
        if self.frame.fn is self.fn:
            return self.profile.branch(test)
        callee = self.profile.callees.get(self.frame.fn.__code__) if self.differentiating else None
        return callee.branch(test) if callee is not None else None

    # Guards --------------------------------------------------------------------------

    def _site(self, node: ast.AST | None) -> str:
        return f"{self.frame.filename}:{getattr(node, 'lineno', '?')}"

    def _guard(self, g: IdentityGuard) -> None:
        key = (g.kind, id(g.container), g.name)
        if key not in self._guarded:
            self._guarded.add(key)
            self.identity_guards.append(g)

    # Results ---------------------------------------------------------------------------

    def _result_tree(self, value: Any, leaves: list[Tensor]) -> Any:
        from pyfront.runtime import results as R

        if isinstance(value, Known):
            if type(value.value) in (list, dict):  # a fresh container on every call
                return self._result_tree(self._from_python(value.value), leaves)
            return R.Const(value.value)
        if isinstance(value, Obj):
            return R.Input(value.path)
        if isinstance(value, Seq):
            if value.source is not None:
                return R.Input(value.source)  # the caller's own tuple or list (never mutated here)
            if value.kind not in (tuple, list, dict):
                raise Unsupported(f"returning or printing a {value.kind.__name__} view is not supported yet")
            return R.Node(value.kind, tuple(self._result_tree(v, leaves) for v in value.items))
        if isinstance(value, Text):
            return R.Format(tuple(p if isinstance(p, str) else (self._result_tree(p[0], leaves), p[1])
                                  for p in value.parts))
        if isinstance(value, Tensor):
            if value.source is not None:
                return R.Input(value.source)  # the very object the caller passed or stored
            if value.either is not None:
                e = value.either
                return R.Either(*(self._result_tree(v, leaves) for v in (e.taken, e.then or e.merged,
                                                                          e.orelse or e.merged)))
            if value.view is not None:
                return self._view_tree(value, leaves)
            for i, leaf in enumerate(leaves):
                if leaf is value:
                    return R.Output(i, value.pytype)
            leaves.append(value)
            return R.Output(len(leaves) - 1, value.pytype)
        raise Unsupported(f"returning {S.describe(value)} is not supported yet")

    def _view_tree(self, value: Tensor, leaves: list[Tensor]) -> Any:
        """One ViewOf per view tensor, so the result, prints and stores share one view object."""
        from pyfront.runtime import results as R

        if value.view.replay is None:
            raise Unsupported("returning, printing or storing a row picked by a computed index is not supported "
                              "yet (NumPy returns a view of the array)")
        cached = self._tree_nodes.get(id(value))
        if cached is None or cached[0] is not value:
            replayed_on = value.view.base if value.view.host is None else value.view.host
            cached = self._tree_nodes[id(value)] = (value, R.ViewOf(self._result_tree(replayed_on, leaves),
                                                                    value.view.replay))
        return cached[1]

    def _isinstance(self, value: Any, classes: Any, node: ast.AST) -> Known:
        """`isinstance` of a compiled value: its Python type is known at compile time."""
        if isinstance(value, Tensor):
            pytype = value.pytype
        elif isinstance(value, Seq):
            pytype = value.kind
        elif isinstance(value, Obj) and inspect.getattr_static(type(value.example), "__class__") is \
                object.__dict__["__class__"]:
            pytype = type(value.example)  # guarded: the argument key or a state guard fixes it
        else:
            raise Unsupported(f"isinstance of {S.describe(value)} is not supported yet", node)
        flat = classes.value if isinstance(classes, Known) and type(classes.value) is tuple else \
            (classes.value,) if isinstance(classes, Known) else None
        if flat is None or not all(isinstance(c, type) and type(c).__instancecheck__ is type.__instancecheck__
                                   for c in flat):
            raise Unsupported("isinstance with classes that are not plain compile-time types", node)
        return Known(issubclass(pytype, flat))


# ndarray methods whose `out=` is compiled as a write (buffers.py); functions: ufuncs and np.clip.
OUT_METHODS = ("clip",)

# Dicts computed by the graph (gradients of dict arguments, displays, comprehensions)
# are Seqs of kind dict holding (key, value) pairs, keys Known, in insertion order
# (containers.py). Their views are DictViews: they can be iterated, not returned.
DICT_VIEWS = ("keys", "values", "items")
DICT_METHODS = (*DICT_VIEWS, "get", "setdefault", "copy")


def _operator_operands(left: Any, right: Any, what: str) -> tuple[Any, Any]:
    """The operands of a Python operator. Beside an array or NumPy scalar, a list or tuple is the
    array NumPy makes of it (NumPy's operator runs first); otherwise Python's list and tuple
    operators apply (`n * [0.0]`, `[a] == [b]`), which compiled code does not do."""
    if not (S.is_sequence(left) or S.is_sequence(right)):
        return left, right
    if not (_is_numpy_value(left) or _is_numpy_value(right)):
        raise Unsupported(f"{what} on tuples/lists of arrays is not supported yet")
    return S.array_operand(left), S.array_operand(right)


def _is_numpy_value(v: Any) -> bool:
    """An array or NumPy scalar (not a Python int, float or bool)."""
    if isinstance(v, Tensor):
        return v.pytype not in (int, float, bool)
    return isinstance(v, Known) and isinstance(v.value, (np.ndarray, np.generic))


def _python_int(v: Any) -> bool:
    """A compile-time Python int (or bool): what repeats a list or tuple."""
    return isinstance(v, Known) and type(v.value) in (int, bool)


def _is_list(v: Any) -> bool:
    """A list the function built, or one the caller passed or Python state holds."""
    return isinstance(v, Seq) and v.kind is list or isinstance(v, Obj) and container_type(v.example) is list


def _is_dict(v: Any) -> bool:
    """A dict the function built, or one the caller passed or Python state holds."""
    return isinstance(v, Seq) and v.kind is dict or isinstance(v, Obj) and container_type(v.example) is dict
# Methods of lists the call made (Seq of kind list), run on the compile-time list of values.
LIST_METHODS = ("append", "extend", "insert", "reverse", "pop")


def _never_none(a: Any, b: Any) -> bool:
    """One side is None and the other a value whose (guarded) type is not NoneType: `is` is False."""
    def computed(v: Any) -> bool:
        return isinstance(v, (Tensor, Obj, Seq, BoundMethod))

    return any(isinstance(x, Known) and x.value is None and computed(y) for x, y in ((a, b), (b, a)))


def _is_array(v: Any) -> bool:
    """An ndarray: `v op= x` updates it in place (a NumPy scalar or Python number is rebound)."""
    return isinstance(v, Tensor) and v.pytype is np.ndarray or isinstance(v, Known) and type(v.value) is np.ndarray


def _python_number(v: Any) -> bool:
    """A Python int or float, known or computed."""
    if isinstance(v, Known):
        return type(v.value) in (int, float)
    return isinstance(v, Tensor) and v.pytype in (int, float)


def _float64_operand(v: Any) -> bool:
    """A NumPy float64 scalar or float64 array: with either a float or a float64, a float64 result."""
    if isinstance(v, Known):
        return type(v.value) is np.float64 or type(v.value) is np.ndarray and v.value.dtype == np.float64
    return isinstance(v, Tensor) and v.pytype in (np.float64, np.ndarray) and v.dtype == np.float64


def _is_value(v: Any) -> bool:
    return isinstance(v, (Known, Tensor, Obj, Seq, BoundMethod, LocalFunction))


def _nodes(v: Any):
    """`v` and, for tuples and lists, everything inside them."""
    yield v
    if isinstance(v, (Seq, Iter)):
        for i in v.items:
            yield from _nodes(i)
    elif isinstance(v, DictView):
        yield from _nodes(v.mapping)


def _is_pure(fn: Any) -> bool:
    """Builtins, `math` functions and NumPy scalar types that compute without side effects (safe to fold)."""
    return _hashable(fn) and (fn in PURE_BUILTINS or isinstance(fn, types.BuiltinFunctionType)
                              and getattr(fn, "__module__", None) == "math"
                              or isinstance(fn, type) and issubclass(fn, np.generic))


def _plain_list(v: Any) -> bool:
    """A list whose `append` is list.append (a subclass may override it)."""
    return isinstance(v, list) and inspect.getattr_static(type(v), "append") is list.append


def _hashable(v: Any) -> bool:
    try:
        hash(v)
        return True
    except TypeError:
        return False


def generate(fn: types.FunctionType, args: tuple, kwargs: dict, profile=None,
             relaxed: dict | None = None, max_nodes: int = DEFAULT_MAX_NODES) -> Graph:
    """The graph of `fn` for this call; `max_nodes`: the size budget (graph_budget.py).

    A Python int or float in state that the function stores anew (a step counter) is first
    read as a constant; then the graph is generated again reading it at run time."""
    if getattr(fn, INTERPRETED_ATTRIBUTE, None) is not None:  # `pyfront.compile(distributed.allreduce)`
        raise Unsupported(getattr(fn, INTERPRETED_ATTRIBUTE), whole_code=fn.__code__)
    runtime_state: frozenset = frozenset()
    while True:
        generator = GraphGenerator(fn, args, kwargs, profile, relaxed, max_nodes, runtime_state)
        try:
            graph = generator.build()
        except RuntimeState as e:
            if e.paths <= runtime_state:
                raise Unsupported(f"Python scalars at {e} change on every call") from None
            runtime_state |= e.paths
            continue
        except Unsupported as e:
            if e.whole_code is None:  # the other blockers too, for explain and strict mode
                found = blockers_of(GraphGenerator, fn, args, kwargs, profile, relaxed, max_nodes, runtime_state)
                e.also = [b for b in found if str(b) != str(e)]
            raise
        graph.commits, graph.appends = generator.commits, generator.append_commits
        return graph
