"""`pyfront.explain(fn)`: what the compiler did with a function, and why.

The report's integer attributes (`calls`, `compiled_calls`,
`interpreted_calls`, `deopts`, `compilations`, `verified_calls`) are a stable
contract that tests rely on; `verify_failures` lists each compiled variant that
disagreed with the interpreter on a verified call (pyfront/verification.py);
`blockers` lists every construct a compile attempt found that keeps the
function from compiling (`Blocker`: site, construct, reason, hint, the chain of
inlined calls). `str(report)` is for people: the counts, the function's
source annotated with what ran compiled, where the interpreter took over and
where the guards are, the variants, the reasons, and what to change in the
code to compile more (`HINTS`).
"""

from __future__ import annotations

import linecache
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from pyfront.bounded import BoundedCounter
from pyfront.errors import describe_chain

# "file:line: reason" (an interpreter reason) or "file:line:col: [kind] reason" (a deopt).
_SITE = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::\d+)?: (?P<rest>.*)$", re.DOTALL)

# What to change in the code, for reasons that send calls to the interpreter:
# (substring of the reason, hint). The first match wins.
HINTS: tuple[tuple[str, str], ...] = (
    ("keyword arguments at the call", "pass the arguments positionally: f(x, 1.0) rather than f(x, t=1.0)"),
    ("keyword-only parameters: not compiled", "make them ordinary parameters: def f(x, t=1.0) rather than def f(x, *, t=1.0)"),
    ("*args", "name the parameters: def f(x, t=1.0) rather than def f(x, *args, **kwargs)"),
    ("Python scalar operation", ("compute on NumPy arrays (np.exp(a), a * b) rather than on Python "
     "scalars taken out of them (math.exp(float(a)))")),
    ("compilation disabled", "unset PYFRONT_DISABLE"),
    ("variant limit reached", ("call with fewer distinct dtypes, ranks or Python int values, or raise "
     "max_variants: pyfront.compile(max_variants=16)")),
    ("an argument cannot be specialized", "pass arrays, Python scalars, tuples or plain objects"),
    ("writing into an array whose shape varies", ("call it with one shape per array it writes into (each "
     "shape compiles a variant of its own)")),
    ("that a compile-time view or container also", ("keep views of an array the function writes into in "
     "local variables rather than in containers built outside the function")),
    ("generators (yield)", "return an array or a tuple instead of yielding"),
    ("print inside a branch", "print outside branches on computed values"),
    ("inside a branch on a computed value", ("move the statement out of the branch on a computed value, "
     "or make the condition a compile-time value")),
    ("call to '", ("call NumPy functions on arrays (np.exp(a) rather than math.exp(a)), or make this "
     "call outside the compiled function")),
    ("IREE could not compile", ("IREE rejected the module this function lowers to: this is a pyfront or IREE "
     "bug, please report it with the function; set PYFRONT_DUMP_DIR to see the IR")),
    ("does not run", "see the backend's restrictions in README's Backends section, or use backend='cpu'"),
    ("arrays of dtype", "use arrays of bool, int8-64, float32 or float64"),
    ("underflow is not 'ignore'", ("call with NumPy's default for underflow, np.errstate(under='ignore'); "
     "divide, over and invalid may be set to anything")),
    ("floating-point", ("NumPy reported a floating-point error here (see the RuntimeWarning): guard the "
     "inputs (np.clip, np.maximum(x, tiny) before np.log) so that no inf or NaN is made; if NumPy reported "
     "none, a result here was subnormal (below np.finfo(dtype).tiny), which IREE's CPU code flushes to zero, "
     "so such calls run in the interpreter (dialects/primitives/subnormal.py)")),
    ("compiled code suspended", ("a guard kept failing on the data (see 'deoptimized because'): make its "
     "assumption hold, e.g. no integer division by zero; the variant is tried again after the suspension")),
    ("internal compiler error", "this is a pyfront bug: please report it with the function"),
    ("try/except is not supported", "move try/except out of the compiled function"),
    ("text made from values computed at run time", ("f-strings, str.format, % and str() of computed arrays "
     "and numbers, joined with +, compile when the text is printed, returned or stored; work on the text "
     "(len, methods, comparisons) outside the compiled function")),
    ("formatting", ("format arrays and numbers (not objects or containers) with a spec their type always "
     "accepts, e.g. f\"{loss:.4f}\", or format outside the compiled function")),
    ("a with block is not supported", "move the with block out of the compiled function"),
    ("is not supported", ("see docs/what-compiles.md for what compiles; move this code out of the "
     "compiled function or rewrite it with supported NumPy operations")),
)


def hint_for(reason: str) -> str | None:
    """What to change in the code so that calls sent to the interpreter for `reason` compile."""
    for needle, hint in HINTS:
        if needle in reason:
            return hint
    return None


def split_site(text: str) -> tuple[str, int, str] | None:
    """`("file", line, rest)` of a "file:line[:col]: rest" string, else None."""
    m = _SITE.match(text)
    return (m["file"], int(m["line"]), m["rest"]) if m else None


@dataclass(frozen=True)
class Blocker:
    """One construct that keeps a function from compiling, found by a compile attempt."""

    site: str  # "file:line", the innermost (inside an inlined callee, its line)
    construct: str  # that source line, as the user wrote it
    reason: str  # what the compiler cannot do there
    hint: str | None  # what to change in the code (never a change of what it computes)
    chain: tuple[str, ...] = ()  # ("im2col line 11", "forward line 30"): the inlined calls that led there

    @classmethod
    def of(cls, error) -> Blocker:
        """The blocker an `Unsupported` describes."""
        line = linecache.getline(error.filename, error.lineno).strip() if error.filename and error.lineno else ""
        return cls(error.site, line, error.reason, hint_for(error.reason), error.chain)

    def __str__(self) -> str:
        where = describe_chain(self.chain) if len(self.chain) > 1 else self.site
        text = f"{where}: {self.reason}"
        if self.construct:
            text += f"\n      {self.construct}"
        return text + (f"\n      hint: {self.hint}" if self.hint else "")


@dataclass
class VariantReport:
    signature: str
    calls: int
    compile_seconds: float
    cache_hit: bool
    guards: list[str]
    guard_sites: list[tuple[str, str, int]] = field(default_factory=list)  # (site, kind, failures)
    # How close its float values are to NumPy's: primitives.approximate_dtype of its graph.
    approximate_dtype: np.dtype | None = None


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
    # Bounded: reasons may name values (a key, a changed constant), which calls bring without end.
    interpreter_reasons: Counter = field(default_factory=BoundedCounter)
    deopt_reasons: Counter = field(default_factory=BoundedCounter)
    relaxations: list[str] = field(default_factory=list)
    evictions: int = 0  # variants evicted, least recently used first, to stay within max_variants
    verified_calls: int = 0  # compiled calls checked against the interpreter (Config.verify), agreeing
    verify_failures: list[str] = field(default_factory=list)  # "<signature>: <first difference>"
    blockers: list[Blocker] = field(default_factory=list)  # program order; see Blocker
    profile_lines: list[str] = field(default_factory=list)
    filename: str = ""
    source: list[tuple[int, str]] = field(default_factory=list)  # (line number, text) of the function
    # A function split around its collective statements (segments.py): (lines, that part's report or None)
    parts: list[tuple[str, Any]] = field(default_factory=list)
    compiling: list[str] = field(default_factory=list)  # keys whose variant compiles in the background
    # (seconds its calls spent in the interpreter, seconds that make it hot) while it warms up
    # (Config.compile_after, pyfront/hotness.py); None once hot, or before its threshold is known.
    warming_up: tuple[float, float] | None = None

    def line_notes(self) -> dict[int, list[str]]:
        """Source line -> what happened there (interpreter reasons, guards and their failures)."""
        notes: dict[int, list[str]] = {}
        for reason, n in self.interpreter_reasons.items():
            where = split_site(reason)
            if where and where[0] == self.filename:
                notes.setdefault(where[1], []).append(f"interpreter ({n} calls): {where[2]}")
        failures: Counter = Counter()
        guards: dict[int, set[str]] = {}
        for site, n in self.deopt_reasons.items():
            where = split_site(site)
            if where and where[0] == self.filename:
                failures[where[1]] += n
                kind = re.match(r"\[(\w+)\]", where[2])
                if kind:
                    guards.setdefault(where[1], set()).add(kind[1])
        for v in self.variants:
            for site, kind, _ in v.guard_sites:
                where = split_site(site + ": ")
                if where and where[0] == self.filename:
                    guards.setdefault(where[1], set()).add(kind)
        for b in self.blockers:
            where = split_site(b.site + ": ")
            here = notes.setdefault(where[1], []) if where and where[0] == self.filename else None
            if here is not None and not any(b.reason in n for n in here):
                here.append(f"interpreter: {b.reason}")
        for line in sorted(set(guards) | set(failures)):
            kinds = "/".join(sorted(guards.get(line, ()))) or "guard"
            notes.setdefault(line, []).append(f"guard [{kinds}] failed {failures[line]}x")
        return notes

    def source_lines(self) -> list[str]:
        """The function's source, marked: C compiled, I where the interpreter took over, G a guard."""
        if not self.source:
            return []
        notes = self.line_notes()
        compiled = bool(self.variants) or self.compiled_calls > 0
        width = max(len(text.rstrip()) for _, text in self.source)
        width = min(width, 60)
        out = ["  source (C: ran compiled, I: keeps calls in the interpreter, G: a guard):"]
        in_body = False
        for lineno, text in self.source:
            here = notes.get(lineno, [])
            in_body = in_body or not text.lstrip().startswith("@")  # decorators never run compiled
            mark = ("I" if any(n.startswith("interpreter") for n in here) else "C" if compiled and in_body
                    else " ")
            mark += "G" if any(n.startswith("guard") for n in here) else " "
            body = text.rstrip()
            line = f"    {mark} {lineno:4d}  {body}"
            if here:
                line = f"    {mark} {lineno:4d}  {body:<{width}}  # " + "; ".join(here)
            out.append(line.rstrip())
        return out

    def summary(self) -> str:
        """One sentence: how much ran compiled, and the main reason for the rest."""
        ran = f"{self.compiled_calls} of {self.calls} calls ran compiled"
        if self.interpreter_reasons:
            reason, n = self.interpreter_reasons.most_common(1)[0]
            return f"{ran}; {n} ran in the interpreter because {reason}"
        if self.deopts:
            return f"{ran}; {self.deopts} left compiled code because a guard failed"
        if self.profiled_calls == self.interpreted_calls and self.interpreted_calls:
            return f"{ran}; the other {self.interpreted_calls} were profiled in the interpreter"
        return ran

    def hints(self) -> list[str]:
        """One "to compile more" hint per interpreter reason that has one."""
        out: list[str] = []
        for reason, _ in self.interpreter_reasons.most_common():
            where = split_site(reason)
            self._add_hint(out, f"line {where[1]}: " if where else "", hint_for(reason))
        for b in self.blockers:
            inlined = len(b.chain) > 1
            self._add_hint(out, f"{b.chain[0] if inlined else 'line ' + b.site.rpartition(':')[2]}: ", b.hint)
        if self.deopts and self.compiled_calls < self.deopts:
            out.append("guards fail more often than compiled calls succeed: see 'deoptimized because'")
        return out

    @staticmethod
    def _add_hint(hints: list[str], at: str, hint: str | None) -> None:
        if hint is not None and at + hint not in hints:
            hints.append(at + hint)

    def __str__(self) -> str:
        lines = [
            f"pyfront report for {self.name}",
            (
                f"  calls: {self.calls} (compiled {self.compiled_calls}, interpreted {self.interpreted_calls}"
                f" of which profiled {self.profiled_calls}), deopts: {self.deopts}, compilations: {self.compilations}"
            ),
        ]
        lines.append(f"  {self.summary()}")
        lines.extend(self.source_lines())
        for i, v in enumerate(self.variants):
            origin = "disk cache" if v.cache_hit else "compiled"
            lines.append(f"  variant {i}: {v.signature}")
            lines.append(f"    {v.calls} calls; {origin} in {v.compile_seconds:.2f}s")
            lines.extend(f"    guard {g}" for g in v.guards)
        lines.extend(f"  compiling in the background: {k}" for k in self.compiling)
        if self.warming_up is not None:
            spent, hot_after = self.warming_up
            lines.append(f"  warming up: its calls spent {spent:.3f} s in the interpreter; its first variant is "
                         f"prepared at {hot_after:.3f} s (Config.compile_after)")
        if self.interpreter_reasons:
            lines.append("  ran in the interpreter because:")
            lines.extend(f"    {n}x {reason}" for reason, n in self.interpreter_reasons.most_common())
        if self.blockers:
            lines.append(f"  blockers ({len(self.blockers)}: what keeps this function from compiling, in program order):")
            lines.extend(f"    {b}" for b in self.blockers)
        if self.deopt_reasons:
            lines.append("  deoptimized because:")
            lines.extend(f"    {n}x {reason}" for reason, n in self.deopt_reasons.most_common())
        if self.evictions:
            lines.append(f"  evicted {self.evictions} variants (the least recently used, to stay within "
                         "max_variants; a key evicted and compiled again doubles the calls a new key needs)")
        if self.verify_failures:
            lines.append("  compiled code disagreed with the interpreter (variant retired; a compiler bug):")
            lines.extend(f"    {f}" for f in self.verify_failures)
        if self.relaxations:
            lines.append("  relaxed assumptions:")
            lines.extend(f"    {r}" for r in self.relaxations)
        if self.profile_lines:
            lines.append("  profile:")
            lines.extend(f"    {line}" for line in self.profile_lines)
        hints = self.hints()
        if hints:
            lines.append("  to compile more:")
            lines.extend(f"    {h}" for h in hints)
        if self.parts:
            lines.append("  compiled in parts around its collective statements:")
            for where, part in self.parts:
                lines.append(f"    part {where}")
                lines.extend(f"      {line}" for line in ([] if part is None else str(part).splitlines()))
        return "\n".join(lines)
