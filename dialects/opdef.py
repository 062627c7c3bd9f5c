"""Declarative op definitions for the unregistered `pyfront` dialect.

An `OpDef` names an op once: its operands, attributes, results and an extra
check. From it come the builder (`OpDef.build`), typed accessors
(`OpDef.view(op).<name>`) and verification (`verify_module`). The bindings
cannot register a dialect, so these definitions are the dialect.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyfront.dialects.mlir import ir, walk

_REGISTRY: dict[str, OpDef] = {}


class VerificationError(Exception):
    """A module violates an op definition; `errors` holds `(location, message)` pairs."""

    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = errors
        super().__init__("\n".join(f"{loc}: error: {msg}" for loc, msg in errors))


@dataclass(frozen=True)
class Attr:
    """An attribute of an op. `kind` is one of str, int, bool, i64s, strs, type, any."""

    name: str
    kind: str
    doc: str = ""
    optional: bool = False


def _to_mlir(kind: str, value: Any) -> ir.Attribute:
    if kind == "str":
        return ir.StringAttr.get(value)
    if kind == "int":
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))
    if kind == "bool":
        return ir.BoolAttr.get(bool(value))
    if kind == "i64s":
        return ir.DenseI64ArrayAttr.get([int(v) for v in value])
    if kind == "strs":
        return ir.ArrayAttr.get([ir.StringAttr.get(v) for v in value])
    if kind == "type":
        return ir.TypeAttr.get(value)
    if isinstance(value, ir.Attribute):
        return value
    raise TypeError(f"attribute of kind {kind!r} needs an ir.Attribute, got {value!r}")


def _from_mlir(kind: str, attr: ir.Attribute) -> Any:
    if kind == "str":
        return ir.StringAttr(attr).value
    if kind == "int":
        return ir.IntegerAttr(attr).value
    if kind == "bool":
        return ir.BoolAttr(attr).value
    if kind == "i64s":
        return tuple(ir.DenseI64ArrayAttr(attr))
    if kind == "strs":
        return tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(attr))
    if kind == "type":
        return ir.TypeAttr(attr).value
    return attr


class OpView:
    """Typed access to one op: operands, attributes and results by their declared names."""

    def __init__(self, opdef: OpDef, op: ir.Operation):
        self.opdef = opdef
        self.op = op

    def __getattr__(self, name: str) -> Any:
        d = self.opdef
        if name in d.operand_names:
            i = d.operand_names.index(name)
            if d.variadic_operands and i == len(d.operand_names) - 1:
                return list(self.op.operands)[i:]
            return self.op.operands[i]
        for a in d.attrs:
            if a.name == name:
                if a.name not in self.op.attributes:
                    return None
                return _from_mlir(a.kind, self.op.attributes[a.name])
        raise AttributeError(f"{d.name} has no operand or attribute {name!r}")

    @property
    def operands(self) -> list[ir.Value]:
        return list(self.op.operands)

    @property
    def results(self) -> list[ir.Value]:
        return list(self.op.results)

    @property
    def result(self) -> ir.Value:
        return self.op.results[0]

    @property
    def params(self) -> dict[str, Any]:
        """The declared attributes that are present, as Python values."""
        return {a.name: getattr(self, a.name) for a in self.opdef.attrs if a.name in self.op.attributes}


@dataclass(frozen=True)
class OpDef:
    """One op of the pyfront dialect.

    `operands` and `results` are names; a name ending in `*` is variadic (last
    position only). `check(view)` returns an error message or None.
    """

    name: str
    summary: str
    operands: tuple[str, ...] = ()
    attrs: tuple[Attr, ...] = ()
    results: tuple[str, ...] = ()
    check: Callable[[OpView], str | None] | None = None
    description: str = ""

    @property
    def operand_names(self) -> list[str]:
        return [o.rstrip("*") for o in self.operands]

    @property
    def variadic_operands(self) -> bool:
        return bool(self.operands) and self.operands[-1].endswith("*")

    @property
    def variadic_results(self) -> bool:
        return bool(self.results) and self.results[-1].endswith("*")

    def build(
        self,
        operands: list[ir.Value],
        result_types: list[ir.Type],
        *,
        loc: ir.Location | None = None,
        ip: ir.InsertionPoint | None = None,
        inferred: bool = False,
        **attrs: Any,
    ) -> OpView:
        """Create the op at `ip` (default: the current insertion point) and return its view.

        `inferred`: the caller computed `result_types` with the op's own type rules from these
        operands (Primitive.build), so the op's `check`, which would only repeat that, is skipped.
        """
        known = {a.name: a for a in self.attrs}
        unknown = set(attrs) - set(known)
        if unknown:
            raise TypeError(f"{self.name}: unknown attributes {sorted(unknown)}")
        mlir_attrs = {
            name: _to_mlir(known[name].kind, value) for name, value in attrs.items() if value is not None
        }
        op = ir.Operation.create(
            self.name,
            results=list(result_types),
            operands=list(operands),
            attributes=mlir_attrs,
            loc=loc,
            ip=ip,
        )
        view = OpView(self, op)
        error = self._verify_view(view, custom=not inferred)
        if error:
            op.erase()
            raise VerificationError([(str(loc or ir.Location.current), error)])
        return view

    def view(self, op: ir.Operation | ir.OpView) -> OpView:
        op = op.operation if hasattr(op, "operation") else op
        assert op.name == self.name, f"expected {self.name}, got {op.name}"
        return OpView(self, op)

    def verify(self, op: ir.Operation) -> str | None:
        return self._verify_view(OpView(self, op))

    def _verify_view(self, view: OpView, custom: bool = True) -> str | None:
        op = view.op
        n_ops, n_res = len(op.operands), len(op.results)
        fixed_ops = len(self.operands) - (1 if self.variadic_operands else 0)
        if n_ops < fixed_ops or (not self.variadic_operands and n_ops != fixed_ops):
            return f"'{self.name}' expects {len(self.operands)} operands, got {n_ops}"
        fixed_res = len(self.results) - (1 if self.variadic_results else 0)
        if n_res < fixed_res or (not self.variadic_results and n_res != fixed_res):
            return f"'{self.name}' expects {len(self.results)} results, got {n_res}"
        for a in self.attrs:
            if a.name not in op.attributes:
                if not a.optional:
                    return f"'{self.name}' requires attribute '{a.name}'"
                continue
            try:
                _from_mlir(a.kind, op.attributes[a.name])
            except (ValueError, TypeError):
                return f"'{self.name}' attribute '{a.name}' must be of kind {a.kind}"
        return self.check(view) if self.check and custom else None


def register(opdef: OpDef) -> OpDef:
    if opdef.name in _REGISTRY:
        raise ValueError(f"op {opdef.name} defined twice")
    _REGISTRY[opdef.name] = opdef
    return opdef


def lookup(name: str) -> OpDef:
    return _REGISTRY[name]


def registered_ops() -> list[OpDef]:
    return sorted(_REGISTRY.values(), key=lambda d: d.name)


def verify_module(module: ir.Module | ir.Operation) -> None:
    """Run MLIR's structural verifier, then check every pyfront op against its OpDef."""
    top = module.operation if hasattr(module, "operation") else module
    top.verify()
    errors: list[tuple[str, str]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        name = op.name
        if name.startswith("pyfront."):
            opdef = _REGISTRY.get(name)
            with op.location:  # checks may build types, which needs a location
                msg = f"unknown op '{name}'" if opdef is None else opdef.verify(op)
            if msg:
                errors.append((str(op.location), msg))
        return ir.WalkResult.ADVANCE

    walk(top, visit)
    if errors:
        raise VerificationError(errors)
