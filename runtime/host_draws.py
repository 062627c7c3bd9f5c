"""Random draws made on the host, in program order, just before a compiled call.

Compiled code never draws random numbers itself. The graph generator
(pyfront/draws.py) records each draw a function makes whose arguments are all
compile-time values, `np.random.rand(3, 4)`, `self.rng.normal(size=(B, nz))`,
`random.random()`, as a `HostDraw`; before invoking the compiled code, the
call makes every draw by calling that very method of the generator the call
reaches (through its access path, read at call time, or the generator object
itself when it is a constant such as NumPy's global RandomState) with the same
arguments, in program order. The values enter the compiled function as inputs
(paths `draw:<k>`). So the caller sees exactly NumPy's (or Python's) stream:
the same numbers, and the same generator state after the call.

Undoing (JANUS's deferred state, applied to generators): before its first
draw, every generator the call draws from is snapshotted (`snapshot`); when
the call does not complete compiled (a guard failed, compiled code failed, or
the call is verified: the interpreter then runs it for real), the snapshots
are restored, so the interpreter, re-running the call from its start, draws
the same numbers exactly once.

Draws in a branch on a computed value (epsilon-greedy exploration: `if
rng.random() < eps: a = rng.integers(n)`) are made too, whether or not the
branch will run; the generator's state before each is kept, and compiled code
says which branches ran. After the call, each generator goes back to where it
was before its first draw whose branch did not run (`Drawn.settle`). That is
right when no draw of the generator after it ran, as when the draw in the
branch is the call's last one; otherwise the call runs in the interpreter.

Draws in loops of a fixed trip count (scf.for: a dropout mask drawn per sample,
`for i in range(len(images)): mask = np.random.randint(2, size=...)`) are made
as the loops would make them: `HostDraw.loops` names the loops around a draw,
outermost first, and `take` runs the loop nest on the host, each iteration's
draws in program order, stacking a draw's values along one leading axis per
loop; compiled code reads iteration k's value at index k. NumPy's generators
give the same numbers as the interpreter's loop, since they are the same
calls in the same order.

Generators are `np.random.Generator`, `np.random.RandomState` (also the
global one behind `np.random.rand`, which `np.random.seed` re-seeds in place)
and `random.Random` (behind the `random` module's functions), of exactly
these types: a subclass may draw differently, and one like SystemRandom has
no state to restore. Snapshots cost about 2 us for a Generator on PCG64 and
about 50 us for an MT19937 (the legacy RandomState's 624-word state).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pyfront.dialects.state_path import Path
from pyfront.interrupts import reraise_if_asynchronous
from pyfront.runtime.results import make_resolver

GENERATOR_TYPES = (np.random.Generator, np.random.RandomState, random.Random)


def is_generator(value: Any) -> bool:
    """Whether `value` is a random generator whose draws the host can make and undo."""
    return type(value) in GENERATOR_TYPES


def bit_generator_type(generator: Any) -> type | None:
    """The type of the bit generator behind a NumPy generator (None for `random.Random`)."""
    if type(generator) is np.random.Generator:
        return type(generator.bit_generator)
    if type(generator) is np.random.RandomState:
        return type(generator._bit_generator)
    return None


def snapshot(generator: Any) -> Any:
    """The complete state of `generator` (a RandomState's cached Gaussian included)."""
    if type(generator) is np.random.Generator:
        return generator.bit_generator.state
    if type(generator) is np.random.RandomState:
        return generator.get_state(legacy=False)
    return generator.getstate()


def restore(generator: Any, state: Any) -> None:
    """Put `generator` back in a state `snapshot` took."""
    if type(generator) is np.random.Generator:
        generator.bit_generator.state = state
    elif type(generator) is np.random.RandomState:
        generator.set_state(state)
    else:
        generator.setstate(state)


@dataclass(frozen=True)
class Outcome:
    """What a draw gives, which its arguments fix: the Python type, and the dtype and shape."""

    pytype: type
    dtype: np.dtype
    shape: tuple[int, ...] = ()

    def matches(self, value: Any) -> bool:
        if type(value) is not self.pytype:
            return False
        if self.pytype is int:
            return -2 ** 63 <= value < 2 ** 63
        if self.pytype in (float, bool):
            return True
        return value.dtype == self.dtype and value.shape == self.shape


@dataclass(frozen=True)
class ReadAtCall:
    """An argument of a draw that each call reads where the code reads it (an argument or Python
    state at `path`): `np.random.seed(params["seed"])`."""

    path: Path


@dataclass(frozen=True, eq=False)
class HostDraw:
    """One draw of a compiled call: `<generator>.<method>(*args, **kwargs)`.

    The generator is read at call time from `source` (an access path: an
    argument, an attribute, a global), or, when `source` is None, it is
    `generator`, fixed at compile time (under an identity guard: the one
    behind `np.random.rand` or `random.random`).
    """

    source: Path | None
    generator: Any
    method: str
    args: tuple
    kwargs: dict
    outcome: Outcome | None  # None: a re-seeding (`np.random.seed(0)`), which gives None
    site: str  # file:line of the call in the user's code
    text: str  # what the code calls, for people: "np.random.rand", "Generator.normal"
    loops: tuple[tuple[int, int], ...] = ()  # (loop, trip count) of the loops around it, outermost first

    @property
    def stacked_shape(self) -> tuple[int, ...]:
        """The shape of its values in one call: one axis per loop around it, then one draw's."""
        return tuple(trips for _, trips in self.loops) + self.outcome.shape


class DrawFailed(Exception):
    """A draw did not give what the variant was compiled for (nothing is left drawn)."""

    def __init__(self, draw: HostDraw, reason: str):
        super().__init__(reason)
        self.draw = draw
        self.reason = reason


@dataclass
class Drawn:
    """The values of one call's draws (in program order), and the generators' states before them."""

    values: list = field(default_factory=list)
    snapshots: list = field(default_factory=list)  # (generator, state before the call's first draw)
    generators: list = field(default_factory=list)  # per draw, the generator it drew from
    before: dict = field(default_factory=dict)  # per draw in a branch: its generator's state before it

    def restore(self) -> None:
        """Undo the draws: the interpreter, running the call next, draws the same numbers."""
        for generator, state in reversed(self.snapshots):
            restore(generator, state)

    def settle(self, ran: dict[int, bool]) -> int | None:
        """Undo the draws of branches that did not run (`ran`: per draw in a branch, whether it did).

        Each generator is put back where it was before its first draw that did not run, which is
        right when no later draw of it ran: those used numbers meant for the one before them. The
        index of such a draw is returned (the call must run in the interpreter), None otherwise.
        """
        skipped: dict[int, int] = {}  # id(generator) -> its first draw that did not run
        for k, generator in enumerate(self.generators):
            if not ran.get(k, True):
                skipped.setdefault(id(generator), k)
            elif id(generator) in skipped:
                return k
        for k in skipped.values():
            restore(*self.before[k])
        return None

    def states_after(self) -> list:
        """(generator, its state now) per generator drawn from: where the draws left them."""
        return [(generator, snapshot(generator)) for generator, _ in self.snapshots]


NOTHING_DRAWN = Drawn()


class HostDraws:
    """The draws of one variant, made for each of its calls by `take`."""

    def __init__(self, draws: list[HostDraw], fn: Any, in_branches: frozenset = frozenset()):
        self.draws = draws
        self.in_branches = in_branches  # the draws in branches on computed values (indices)
        self._generators = [make_resolver(d.source, fn) if d.source is not None else _fixed(d.generator)
                            for d in draws]
        self._arguments = [_arguments(d, fn) for d in draws]
        self._plan = _loop_nest(draws, list(range(len(draws))), 0)

    def __bool__(self) -> bool:
        return bool(self.draws)

    def take(self, args: tuple) -> Drawn:
        """Snapshot every generator the call draws from, then make the draws in program order.

        Raises DrawFailed when a draw raises or gives a value of another type,
        dtype or shape than compiled for; whatever a draw raises leaves the
        generators as they were.
        """
        if not self.draws:
            return NOTHING_DRAWN
        generators = [get(args) for get in self._generators]
        drawn = Drawn()
        seen = set()
        for generator in generators:
            if id(generator) not in seen:
                seen.add(id(generator))
                drawn.snapshots.append((generator, snapshot(generator)))
        drawn.generators = generators
        values: list[list] = [[] for _ in self.draws]

        def make(k: int) -> None:
            if k in self.in_branches and k not in drawn.before:
                drawn.before[k] = (generators[k], snapshot(generators[k]))
            values[k].append(_make(self.draws[k], generators[k], *self._arguments[k](args)))

        try:
            _run_loop_nest(self._plan, make)
        except BaseException:
            drawn.restore()
            raise
        drawn.values = [vs[0] if not d.loops else np.array(vs, d.outcome.dtype).reshape(d.stacked_shape)
                        for d, vs in zip(self.draws, values)]
        return drawn


def _loop_nest(draws: list[HostDraw], ks: list[int], depth: int) -> list:
    """Draws `ks` (in program order, inside the same `depth` loops) as a plan: a draw's index, or
    (trip count, the plan of one iteration) for the draws of a loop at depth `depth`."""
    plan, i = [], 0
    while i < len(ks):
        loops = draws[ks[i]].loops
        if len(loops) == depth:
            plan.append(ks[i])
            i += 1
            continue
        key, trips = loops[depth]
        j = i
        while j < len(ks) and len(draws[ks[j]].loops) > depth and draws[ks[j]].loops[depth][0] == key:
            j += 1
        plan.append((trips, _loop_nest(draws, ks[i:j], depth + 1)))
        i = j
    return plan


def _run_loop_nest(plan: list, make) -> None:
    for item in plan:
        if isinstance(item, int):
            make(item)
        else:
            trips, body = item
            for _ in range(trips):
                _run_loop_nest(body, make)


def _arguments(draw: HostDraw, fn: Any):
    """A function from a call's arguments to the draw's (args, kwargs), each ReadAtCall read."""
    def reader(v: Any):
        if isinstance(v, ReadAtCall):
            return make_resolver(v.path, fn)
        return lambda args: v

    if not any(isinstance(v, ReadAtCall) for v in (*draw.args, *draw.kwargs.values())):
        return lambda args: (draw.args, draw.kwargs)
    positional = [reader(v) for v in draw.args]
    keywords = {k: reader(v) for k, v in draw.kwargs.items()}
    return lambda args: (tuple(r(args) for r in positional), {k: r(args) for k, r in keywords.items()})


def _make(draw: HostDraw, generator: Any, args: tuple, kwargs: dict) -> Any:
    try:
        value = getattr(generator, draw.method)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the interpreter, running the call next, raises it
        reraise_if_asynchronous(e)
        raise DrawFailed(draw, f"{draw.text} raised {type(e).__name__}: {e}") from None
    if draw.outcome is not None and not draw.outcome.matches(value):  # (None: a re-seeding)
        raise DrawFailed(draw, f"{draw.text} gave a {type(value).__name__} of another dtype or shape "
                               "than it was compiled for")
    return value


def _fixed(generator: Any):
    return lambda args: generator
