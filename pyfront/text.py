"""Text made from computed values: f-strings, `str.format`, `%` formatting and `str()`.

The graph computes numbers, not text; a training loop's `print(f"loss
{loss:.4f}")` or `log.last = "step %d" % t` needs its values only to make
text. Such text is a `values.Text`: literal strs and `(value, render)` parts,
where `render` gives a value's text exactly as the Python code that made it
(`ReplacementField`: `format(convert(v), spec)`; `PercentField`: `spec % (v,)`).
The host renders it from the call's values where the call prints, returns or
stores it (runtime/results.py, `Format`), so the text is Python's own.

What is checked while compiling: each value is a computed array or scalar
(`Tensor`; an object's `__format__` could read state), and its renderer
accepts a value of its Python type, dtype and rank (a spec the type rejects,
`f"{x:d}"` of a float, raises in the interpreter: the call runs there). A
renderer whose success depends on the value itself (`c`, or `%d` of a float,
which a NaN makes raise) is refused. Texts join with `+`, and the text of
one value slices (`str(loss)[0:5]`); any other use of the text (`len`, a
dict key) is not supported, so what the host renders is only ever shown,
returned or stored.
"""

from __future__ import annotations

import ast
import re
import string
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyfront.errors import Unsupported
from pyfront.values import Known, Seq, Tensor, Text

RUNTIME_TEXT = "formatting an object or a container computed at run time"
ONLY_SHOWN = "text made from values computed at run time is only printed, returned or stored by compiled code"
# Values whose text is fixed by their value (so text made of them is a constant): not
# objects, whose __format__ could read state or differ per call.
_TEXT_BY_VALUE = (int, float, bool, str, complex, type(None), np.dtype)
_PERCENT_FIELD = re.compile(r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[#0\- +]*)(?P<width>\*|\d+)?"
                            r"(?:\.(?P<precision>\*|\d+))?[hlL]?(?P<kind>[diouxXeEfFgGcrsa%])")


@dataclass(frozen=True)
class ReplacementField:
    """A field of an f-string or `str.format`: `format(convert(v), spec)`."""

    convert: Any  # str, repr, ascii or None
    spec: str

    def decided_by_type(self, t: Tensor) -> bool:
        return not self.spec.endswith("c")  # (c takes some ints only)

    @property
    def keeps_text(self) -> bool:
        return self.convert in (None, str) and self.spec == ""

    def __call__(self, v: Any) -> str:
        return format(v if self.convert is None else self.convert(v), self.spec)


@dataclass(frozen=True)
class PercentField:
    """A `%` conversion (`%.3f`, `%5d`, `%s`): `spec % (v,)`."""

    spec: str

    def decided_by_type(self, t: Tensor) -> bool:
        kind = self.spec[-1]
        return kind != "c" and (kind not in "diouxX" or t.dtype.kind in "biu")  # (%d of a NaN raises)

    @property
    def keeps_text(self) -> bool:
        return self.spec == "%s"

    def __call__(self, v: Any) -> str:
        return self.spec % (v,)


@dataclass(frozen=True)
class SlicedField:
    """A field's text sliced (`str(loss)[0:5]`, as Grokking Deep Learning prints): `render(v)[part]`."""

    render: Any
    part: slice

    def decided_by_type(self, t: Tensor) -> bool:
        return self.render.decided_by_type(t)

    keeps_text = False

    def __call__(self, v: Any) -> str:
        return self.render(v)[self.part]


def sliced(text: Text, part: Any, node: ast.AST) -> Text:
    """`text[part]` for a compile-time slice of text made from one computed value."""
    if type(part) is not slice or len(text.parts) != 1 or isinstance(text.parts[0], str):
        raise Unsupported(f"indexing text other than one formatted value by a constant slice: {ONLY_SHOWN}", node)
    value, render = text.parts[0]
    return Text(((value, SlicedField(render, part)),))


def formats_alike(v: Any) -> bool:
    """Whether formatting `v` gives the same text at every call (see _TEXT_BY_VALUE)."""
    if type(v) is tuple:
        return all(formats_alike(item) for item in v)
    return type(v) in _TEXT_BY_VALUE or isinstance(v, np.generic)


def text_of(parts: list) -> Known | Text:
    """The text of `parts` (a Text among them spliced in): a constant when every part is a str."""
    parts = [q for p in parts for q in (p.parts if isinstance(p, Text) else (p,))]
    if all(isinstance(p, str) for p in parts):
        return Known("".join(parts))
    return Text(tuple(parts))


def rendered(value: Any, render, node: ast.AST) -> str | tuple | Text:
    """`render(value)` now for a value known while compiling; else (value, render), once a value of
    its type shows that `render` accepts it; text made at run time as it is, where `render` keeps it."""
    if isinstance(value, Text) and render.keeps_text:
        return value
    if isinstance(value, Known) and formats_alike(value.value):
        sample = value.value
    elif isinstance(value, Tensor) and render.decided_by_type(value):
        sample = _sample(value)
    elif isinstance(value, Tensor):
        raise Unsupported(f"formatting a computed {value.pytype.__name__} of {value.dtype} with {render.spec!r} is not "
                          "supported (whether it raises depends on the value)", node)
    else:
        raise Unsupported(f"{RUNTIME_TEXT} is not supported by the compiler", node)
    try:
        text = render(sample)
    except (ValueError, TypeError) as e:
        raise Unsupported(f"formatting the text raises {type(e).__name__}: {e}", node) from None
    if isinstance(value, Known):
        return text
    return Tensor(value.value, value.pytype), render  # the value now, not a later write's


def str_format(template: str, args: list, kwargs: dict, node: ast.AST) -> Known | Text:
    """`template.format(*args, **kwargs)`, fields by position, number or name."""
    parts, automatic = [], 0
    try:
        for literal, name, spec, conversion in string.Formatter().parse(template):
            parts.append(literal)
            if name is None:
                continue
            if "{" in spec or "." in name or "[" in name:
                raise Unsupported("str.format with nested fields, attributes or items is not supported yet", node)
            if name == "":
                name, automatic = automatic, automatic + 1
            value = args[int(name)] if str(name).isdigit() else kwargs[name]
            convert = {None: None, "s": str, "r": repr, "a": ascii}[conversion]
            parts.append(rendered(value, ReplacementField(convert, spec), node))
    except (ValueError, IndexError, KeyError) as e:
        raise Unsupported(f"str.format raises {type(e).__name__}: {e}", node) from None
    return text_of(parts)


def percent_format(template: str, values: Any, node: ast.AST) -> Known | Text:
    """`template % values`: one value, or a tuple of them (no `%(name)s` or `*` widths)."""
    items = list(values.items) if isinstance(values, Seq) and values.kind is tuple else [values]
    parts, end = [], 0
    for field in _PERCENT_FIELD.finditer(template):
        parts.append(_literal(template[end:field.start()], node))
        end = field.end()
        if field["kind"] == "%":
            parts.append("%")
            continue
        if field["key"] is not None or "*" in field.group(0):
            raise Unsupported("% formatting with named fields or * widths is not supported yet", node)
        if not items:
            raise Unsupported("% formatting: not enough arguments for format string (TypeError)", node)
        parts.append(rendered(items.pop(0), PercentField(field.group(0)), node))
    if items:
        raise Unsupported("% formatting: not all arguments converted during string formatting (TypeError)", node)
    parts.append(_literal(template[end:], node))
    return text_of(parts)


def _literal(text: str, node: ast.AST) -> str:
    if "%" in text:  # a conversion the pattern does not know: Python raises ValueError
        raise Unsupported(f"% formatting: unsupported format in {text!r} (ValueError)", node)
    return text


def _sample(t: Tensor) -> Any:
    """A value of `t`'s Python type (and dtype and rank), to try a renderer on."""
    if t.pytype is np.ndarray:
        return np.zeros(tuple(1 if d is None else d for d in t.shape), t.dtype)
    return t.pytype(0)
