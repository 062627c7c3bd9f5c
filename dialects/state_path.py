"""Access paths: where a compiled function's inputs come from and its outputs go.

A path is a root followed by attribute and subscript steps, written as text in
the IR (`pyfront.inputs` / `pyfront.outputs` on a lowered function):

    arg0            the first argument of the call
    arg0.W          attribute W of the first argument
    global:model.b  attribute b of the module global `model`
    cell:count      the closure cell `count`
    arg1['h']       item 'h' of the second argument (a dict)
    return0         the function's first returned leaf (outputs only)
    guards          the guard flags (outputs only)
    draw:2          the third random draw of the call, made on the host
                    before it (inputs only; runtime/host_draws.py)

The runtime resolves paths against the call (`resolve`) and commits stores
(`assign`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

_STEP = re.compile(r"\.([A-Za-z_][A-Za-z_0-9]*)|\[((?:'[^']*')|(?:\"[^\"]*\")|(?:-?\d+))\]")


@dataclass(frozen=True)
class Path:
    root: str  # "arg<i>", "global:<name>", "cell:<name>", "return<i>", "guards" or "draw:<k>"
    steps: tuple[tuple[str, Any], ...] = ()  # ("attr", name) | ("item", key)

    def attr(self, name: str) -> Path:
        return Path(self.root, self.steps + (("attr", name),))

    def item(self, key: Any) -> Path:
        return Path(self.root, self.steps + (("item", key),))

    def __str__(self) -> str:
        out = self.root
        for kind, v in self.steps:
            out += f".{v}" if kind == "attr" else f"[{v!r}]"
        return out

    @staticmethod
    def parse(text: str) -> Path:
        m = re.match(r"(arg\d+|return\d+|guards|draw:\d+|global:[A-Za-z_]\w*|cell:[A-Za-z_]\w*)", text)
        if not m:
            raise ValueError(f"bad access path {text!r}")
        pos, steps = m.end(), []
        while pos < len(text):
            s = _STEP.match(text, pos)
            if not s:
                raise ValueError(f"bad access path {text!r} at {text[pos:]!r}")
            steps.append(("attr", s.group(1)) if s.group(1) else ("item", ast.literal_eval(s.group(2))))
            pos = s.end()
        return Path(m.group(1), tuple(steps))

    @property
    def arg_index(self) -> int | None:
        return int(self.root[3:]) if self.root.startswith("arg") else None


DRAW = "draw:"


def draw_path(index: int) -> str:
    """The input path of a call's random draw number `index` (in program order)."""
    return f"{DRAW}{index}"


def draw_index(path: str) -> int | None:
    """The draw number of a `draw:<k>` input path, None for any other path."""
    return int(path[len(DRAW):]) if path.startswith(DRAW) else None
