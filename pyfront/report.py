"""`pyfront.explain(fn)`: what the compiler did with a function, and why.

The report's integer attributes (`calls`, `compiled_calls`,
`interpreted_calls`, `deopts`, `compilations`) are a stable contract that
tests rely on; `str(report)` is for people.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class VariantReport:
    signature: str
    calls: int
    compile_seconds: float
    cache_hit: bool
    guards: list[str]


@dataclass
class Report:
    name: str
    calls: int = 0
    compiled_calls: int = 0
    interpreted_calls: int = 0
    profiled_calls: int = 0
    deopts: int = 0
    compilations: int = 0
    variants: list[VariantReport] = field(default_factory=list)
    interpreter_reasons: Counter = field(default_factory=Counter)
    deopt_reasons: Counter = field(default_factory=Counter)
    relaxations: list[str] = field(default_factory=list)
    profile_lines: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [
            f"pyfront report for {self.name}",
            (
                f"  calls: {self.calls} (compiled {self.compiled_calls}, interpreted {self.interpreted_calls}"
                f" of which profiled {self.profiled_calls}), deopts: {self.deopts}, compilations: {self.compilations}"
            ),
        ]
        for i, v in enumerate(self.variants):
            origin = "disk cache" if v.cache_hit else "compiled"
            lines.append(f"  variant {i}: {v.signature}")
            lines.append(f"    {v.calls} calls; {origin} in {v.compile_seconds:.2f}s")
            lines.extend(f"    guard {g}" for g in v.guards)
        if self.interpreter_reasons:
            lines.append("  ran in the interpreter because:")
            lines.extend(f"    {n}x {reason}" for reason, n in self.interpreter_reasons.most_common())
        if self.deopt_reasons:
            lines.append("  deoptimized because:")
            lines.extend(f"    {n}x {reason}" for reason, n in self.deopt_reasons.most_common())
        if self.relaxations:
            lines.append("  relaxed assumptions:")
            lines.extend(f"    {r}" for r in self.relaxations)
        if self.profile_lines:
            lines.append("  profile:")
            lines.extend(f"    {line}" for line in self.profile_lines)
        return "\n".join(lines)
