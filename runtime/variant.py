"""One compiled variant of a function, and the steps of a compiled call.

A call through a variant (JANUS Figure 2): check the entry guards on the host,
read the state inputs at call time, invoke the IREE function, check the
in-graph guard flags, and only then commit deferred stores and build the
result. Any failed check returns a `Deopt` before anything was mutated, so the
caller can re-run the call in the interpreter from its start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pyfront.dialects.state_path import Path
from pyfront.runtime.results import ResultBuilder, box, make_committer, make_resolver

from pyfront.guards import IdentityGuard, StateGuard


@dataclass(frozen=True)
class Deopt:
    """Why a compiled call gave up; `site` and `kind` name the failed assumption."""

    kind: str
    site: str
    reason: str


@dataclass
class GuardInfo:
    kind: str
    site: str
    reason: str
    failures: int = 0


@dataclass
class Variant:
    """A compiled specialization: its guards, how to feed it and how to read its results."""

    fn: Any
    key: Any
    func_name: str
    invoke: Callable[[list], list]
    input_paths: list[str]
    output_paths: list[str]
    result_tree: Any
    identity_guards: list[IdentityGuard]
    state_guards: list[StateGuard]
    graph_guards: list[GuardInfo]
    pyfront_ir: str
    compile_seconds: float
    cache_hit: bool
    effects: list = field(default_factory=list)  # deferred prints: (args tree, print keyword arguments)
    calls: int = 0
    _inputs: list = field(default_factory=list, repr=False)
    _state_checks: list = field(default_factory=list, repr=False)
    _commits: list = field(default_factory=list, repr=False)
    _result_index: list = field(default_factory=list, repr=False)
    _guard_index: int | None = None

    def __post_init__(self) -> None:
        fn = self.fn
        self._inputs = [make_resolver(Path.parse(p), fn) for p in self.input_paths]
        self._state_checks = [(make_resolver(g.path, fn), g) for g in self.state_guards]
        for i, p in enumerate(self.output_paths):
            if p == "guards":
                self._guard_index = i
            elif p.startswith("store:"):
                self._commits.append((i, make_committer(Path.parse(p[6:]), fn)))
            else:
                self._result_index.append(i)

    def run(self, args: tuple) -> Any:
        for g in self.identity_guards:
            if not g.holds():
                return Deopt("state", g.site, f"changed: {g.describe()}")
        for resolve, g in self._state_checks:
            try:
                value = resolve(args)
            except Exception as e:  # noqa: BLE001 - the interpreter will raise it properly
                return Deopt("state", g.site, f"reading {g.path} raised {type(e).__name__}")
            if not g.holds_for(value):
                return Deopt("state", g.site, f"assumption failed: {g.describe()}")
        # A function whose results are all inputs, views or constants needs no device call.
        outputs = self.invoke([resolve(args) for resolve in self._inputs]) if self.output_paths else []
        if self._guard_index is not None:
            flags = outputs[self._guard_index]
            if not flags.all():
                failed = [self.graph_guards[i] for i in np.flatnonzero(flags == 0)]
                for g in failed:
                    g.failures += 1
                g = failed[0]
                return Deopt(g.kind, g.site, g.reason)
        results = [outputs[i] for i in self._result_index]
        resolve = lambda path: make_resolver(path, self.fn)(args)
        # Prints see the state before this call's stores, as in the interpreter's order.
        for tree, options in self.effects:
            print(*ResultBuilder(tree, resolve).build(results), **options)
        for i, commit in self._commits:
            commit(args, box(outputs[i], np.ndarray))
        self.calls += 1
        return ResultBuilder(self.result_tree, resolve).build(results)

    def describe_guards(self) -> list[str]:
        lines = [f"{g.site}: {g.describe()}" for g in self.identity_guards]
        lines += [f"{g.site}: {g.describe()}" for g in self.state_guards]
        lines += [f"{g.site}: [{g.kind}] {g.reason} (in-graph, failed {g.failures}x)" for g in self.graph_guards]
        return lines
