"""Every blocker of a function in one compile attempt (the graph generator's survey mode).

Graph generation stops at the first construct it cannot compile. When that
happens, `generate` runs the generator once more in survey mode to find the
others, so that `explain` and strict mode list them all and porting a program
is not one edit-and-rerun round per blocker.

In survey mode a statement that raises `Unsupported` is recorded (once per
site and reason) and skipped; the generator goes on with the next statement.
What the skipped statement would have bound is *poisoned*: its local names,
and the attributes and subscripts it assigns (by their source text). A later
statement reading a poisoned value is skipped too, without a blocker of its
own, since its failure would be a consequence, not a construct to change. A
function whose `return` was skipped returns a poisoned value to its caller.

The survey's module is never used: it only collects reasons. Its guarantees
are therefore only about reasons: the first blocker is the one normal
generation stops at (both run the same code up to it); later ones are real
constructs the compiler rejected, each at its innermost site, with the chain
of inlined calls that led there. A speculative attempt whose failure the
generator handles itself (an `scf.for` that falls back to unrolling) is not
surveyed: its failures propagate to the attempt as in normal generation.
"""

from __future__ import annotations

import ast
from typing import Any

from pyfront.branches import FunctionReturn, assigned_names
from pyfront.errors import Poisoned, Unsupported
from pyfront.values import Unavailable

MAX_BLOCKERS = 20  # a function with more has enough to fix first

POISON = object()  # what a skipped statement would have computed


class SurveyMixin:
    """Graph generator methods of survey mode; `self.survey` is None outside it."""

    survey: list[Unsupported] | None
    _speculating: int  # depth of speculative attempts (loops.py's scf.for attempt)
    _poisoned_places: set[str]  # source text of attribute/subscript targets of skipped statements

    def _init_survey(self, survey: bool) -> None:
        self.survey = [] if survey else None
        self._speculating = 0
        self._poisoned_places = set()

    def _surveying(self) -> bool:
        return self.survey is not None and not self._speculating and self.budget.spent <= self.budget.limit

    def _skip_statement(self, stmt: ast.stmt, error: Unsupported) -> None:
        """Survey mode: record why `stmt` does not compile, poison what it binds, go on."""
        if not isinstance(error, Poisoned):
            self._record_blocker(error)
        for name in assigned_names([stmt]):
            self.frame.env[name] = POISON
        for target in _store_targets(stmt):
            self._poisoned_places.add(ast.unparse(target))
        if isinstance(stmt, ast.Return):
            raise FunctionReturn(POISON)

    def _record_blocker(self, error: Unsupported) -> None:
        error.located(self.node, self.frame.filename)
        if not error.chain:
            error.chain = self._call_chain(error.lineno)
        if len(self.survey) < MAX_BLOCKERS and all(str(b) != str(error) for b in self.survey):
            self.survey.append(error)

    def _call_chain(self, lineno: int | None) -> tuple[str, ...]:
        """("helper line 11", "forward line 30"): the frames, innermost first, at their lines."""
        lines = [lineno] + [f.call_line for f in reversed(self.frames[1:])]
        return tuple(f"{f.fn.__qualname__} line {line}" for f, line in zip(reversed(self.frames), lines))

    def _unpoisoned(self, value: Any, node: ast.AST) -> Any:
        """`value`, unless it is what a skipped statement would have computed."""
        if value is POISON:
            raise Poisoned("reads a value of a statement that does not compile", node)
        if isinstance(value, Unavailable):
            raise Unsupported(value.reason, node)
        return value

    def _unpoisoned_place(self, value: Any, node: ast.Attribute | ast.Subscript) -> Any:
        """The value read at an attribute or subscript, unless a skipped statement assigned it."""
        if self._poisoned_places and ast.unparse(node) in self._poisoned_places:
            raise Poisoned("reads a value of a statement that does not compile", node)
        return self._unpoisoned(value, node)


def _store_targets(stmt: ast.stmt) -> list[ast.expr]:
    """The attribute and subscript targets `stmt` assigns, at any depth."""
    return [sub for sub in ast.walk(stmt)
            if isinstance(sub, (ast.Attribute, ast.Subscript)) and isinstance(sub.ctx, ast.Store)]


def blockers_of(generator_type: type, *args: Any) -> list[Unsupported]:
    """Every blocker a survey-mode `generator_type(*args, survey=True)` finds, in program order."""
    generator = generator_type(*args, survey=True)
    try:
        generator.build()
    except Unsupported as e:  # one outside any statement (an argument, the signature)
        if not isinstance(e, Poisoned) and all(str(b) != str(e) for b in generator.survey):
            generator.survey.append(e)
    except Exception:  # noqa: BLE001 - a survey is best effort: keep what it found before
        pass
    return generator.survey
