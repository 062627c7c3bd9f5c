"""What a Python expression is while the graph generator compiles it.

- `Known`: a value fixed at compile time (a constant, a module, a function, a
  value-specialized argument); operations on Known values are evaluated by
  Python itself, so they have exactly Python's semantics.
- `Tensor`: an array or scalar computed by the graph: an SSA value plus the
  Python type the interpreter would produce (`np.ndarray`, a NumPy scalar type
  such as `np.float32`, or Python `float`/`bool`).
- `Obj`: a Python object referenced by identity (e.g. `self`), whose attributes
  are read through deferred-state ops.
- `Seq`: a tuple or list of values.
- `BoundMethod`: `x.sum`, `self.helper`: a callable with its receiver.
- `Iter`: a one-shot iterator (`zip`, `enumerate`, `reversed`, a generator
  expression) over values known when compiling; it may be iterated once.
- `DictView`: `d.keys()`/`d.values()`/`d.items()` of a dict (a computed `Seq`
  of kind dict, or an `Obj` dict); what it holds is read when it is iterated.
- `Text`: an f-string of values computed at run time, formatted on the host
  where it is printed, returned or stored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pyfront.dialects.mlir import ir
from pyfront.dialects.types import shape_of, tensor_dtype


@dataclass(frozen=True, eq=False)
class Known:
    value: Any
    # Where the compiled function's runtime finds the value (a module, class or function
    # reached through its globals or cells): its attributes that may change are read there.
    path: Any = None


@dataclass(frozen=True, eq=False)
class View:
    """How a Tensor aliases another one in the interpreter (NumPy views share memory)."""

    base: Tensor
    # Applies the same view operation to the base on the host; None when the host cannot
    # (a row picked by a computed index): such a view is never returned, printed or stored.
    replay: Callable[[Any], Any] | None
    # In the graph (pyfront/buffers.py): `derive(base)` is the view's value for a new value of
    # the base (after a write into it); `write_back(base, v)` the base's value after the view's
    # elements became `v`. None where a write cannot be followed (the write is refused).
    derive: Callable[[Tensor], Tensor] | None = None
    write_back: Callable[[Tensor, Tensor], Tensor] | None = None
    # What the host replays on, where not `base`: the view's own value, for a reshape that NumPy
    # may or may not have made a copy of an array the call made (semantics.reshape).
    host: Tensor | None = None


@dataclass(frozen=True, eq=False)
class Either:
    """Which object a value merged out of a branch on a computed value is: `then` where the 0-d
    bool `taken` holds, `orelse` where not. Each is a Tensor read from the caller's objects (an
    argument or state: that very object), or None where that branch computed a new array (`merged`,
    the merged value itself, is that array)."""

    taken: Tensor
    then: Tensor | None
    orelse: Tensor | None
    merged: Tensor


@dataclass(frozen=True, eq=False)
class Tensor:
    value: ir.Value
    pytype: type
    view: View | None = None
    source: Any = None  # an access path or argument this tensor is read from, if any
    either: Either | None = None  # the caller's object on some paths of a branch, a new array on others

    @property
    def has_identity(self) -> bool:
        """Whether this is (on some path) an object the caller can see: an argument or state, a view
        of one, or such an object merged out of a branch. A copy of it would be another object."""
        return self.source is not None or self.view is not None or self.either is not None

    @property
    def dtype(self) -> np.dtype:
        return tensor_dtype(self.value.type)

    @property
    def shape(self) -> tuple[int, ...]:
        return shape_of(self.value.type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_python_scalar(self) -> bool:
        return self.pytype in (float, int, bool)


@dataclass(frozen=True, eq=False)
class BoundedInt(Tensor):
    """A computed Python int known to lie in [lower, upper): a compiled loop's counter, and
    arithmetic on it with constants (semantics.python_int_op), e.g. `t - 1`: no overflow or
    bounds guard is needed for it."""

    lower: int = 0
    upper: int = 0


@dataclass(frozen=True, eq=False)
class Obj:
    value: ir.Value
    example: Any  # the object seen at compile time; only its type is relied on (guarded)
    path: Any = None  # where the runtime finds it (dialects.state_path.Path)


@dataclass(frozen=True, eq=False)
class Seq:
    items: tuple
    kind: type = tuple  # tuple or list
    source: Any = None  # the access path when the caller passed this list (mutations are visible)


@dataclass(frozen=True, eq=False)
class BoundMethod:
    receiver: Any
    name: str
    function: Any = None  # the Python function for methods of user classes


@dataclass(eq=False)
class Iter:
    items: tuple
    consumed: bool = False  # Python would find it exhausted: a second iteration is refused
    steps: range | None = None  # `reversed(range(...))`: the range it runs through, for a real loop


@dataclass(frozen=True, eq=False)
class DictView:
    mapping: Seq | Obj
    kind: str  # "keys" | "values" | "items"


@dataclass(frozen=True, eq=False)
class FloatOrFloat64:
    """A Python float on some paths through the branches before it and a NumPy float64 on others
    (`loss = 0.0`, then `if margin > 0: loss += margin` with a NumPy margin): one number, whose
    type `is_numpy` (a 0-d bool computed value) tells. Arithmetic keeps it so (graphgen's
    `_float_or_float64_op`); any other use first guards that it is a NumPy float64
    (`resolve_float_or_float64`), the type it keeps once it has it."""

    number: Tensor  # pytype np.float64
    is_numpy: Tensor  # pytype np.bool_


def float_or_float64(number: Tensor, is_numpy: Any) -> Tensor | FloatOrFloat64:
    """`number` as a FloatOrFloat64, or as the one type `is_numpy` says when it is a constant."""
    if isinstance(is_numpy, Known):
        return Tensor(number.value, np.float64 if is_numpy.value else float)
    return FloatOrFloat64(number, is_numpy)


@dataclass(frozen=True, eq=False)
class LocalFunction:
    """A `lambda` or nested `def` the compiled code makes: inlined where it is called. Its free
    names are read in `frame`, the frame that made it, when it is called (as a Python closure reads
    its cells); its default values were evaluated when it was made."""

    node: Any  # ast.Lambda | ast.FunctionDef
    frame: Any
    defaults: tuple
    kw_defaults: dict

    def __repr__(self) -> str:
        return f"<{getattr(self.node, 'name', 'lambda')} at line {self.node.lineno}>"


@dataclass(frozen=True)
class Unavailable:
    """What a name holds where compiled code does not keep its value (`reason` says why): reading it
    does not compile."""

    reason: str


Value = Known | Tensor | Obj | Seq | BoundMethod | Iter | DictView


def is_python_scalar_const(v: Any) -> bool:
    return isinstance(v, Known) and type(v.value) in (int, float, bool)


@dataclass
class Env:
    """Local variables of one inlined frame."""

    names: dict[str, Value] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Text:
    """`f"loss {loss:.4f}"`, `"{:.4f}".format(loss)`, `"%.4f" % loss`, `str(loss)` of a computed
    value: literal strs and `(value, render)` parts, `render` giving the value's text as Python
    does. Each value is the one read when the text was made (a Tensor of its own, so a later write
    into the array it came from does not change the text)."""

    parts: tuple
