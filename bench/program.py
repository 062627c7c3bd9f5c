"""What a benchmark program is, and the registry of them (bench/programs/*.py).

A program module defines `PROGRAM = Program(...)`: the plain NumPy function
(run as is by NumPy, pyfront, torch.compile and numba.njit), how to make its
inputs for a size, and, per peer, either nothing (the peer runs the NumPy
function: jax gets the same source with `np` bound to `jax.numpy`), a port
(a function the peer compiles instead) or a reason it cannot run the program.
Adding a program is writing one module: `load_programs()` finds it
(modules whose name starts with "_" hold shared helpers, not programs).

A program may update its arguments in place (`stateful`, e.g. a training
step writing parameters into the model's dict): every result of it is checked
against NumPy run on a copy of the arguments as they were just before that
call, and a functional peer runs a `Port` whose adapter takes the arrays out
of the objects (it returns the updated arrays instead of writing them).

Every size is a dict of integers with a "batch" entry: the shape-change
measure calls the program with `batch + 1`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class NotRunnable:
    """Why a peer cannot run a program (reported in the table instead of a time)."""

    reason: str


@dataclass(frozen=True)
class Port:
    """A peer's version of a program that takes other arguments: `fn(*adapt(inputs))`.

    Its results must have the same leaves, in the same order, as the NumPy function's.
    """

    fn: Callable
    adapt: Callable[[tuple], tuple]


@dataclass(frozen=True)
class GuardFailure:
    """Inputs that break an assumption pyfront speculated on (the deopt measure).

    `make_inputs(size, rng)` gives arguments of the same types and shapes as the
    program's usual inputs, for which a guard inside the compiled code fails.
    """

    description: str
    make_inputs: Callable[[dict, Any], tuple]


@dataclass(frozen=True)
class Program:
    name: str
    description: str
    fn: Callable
    make_inputs: Callable[[dict, Any], tuple]  # (size, numpy Generator) -> arguments
    sizes: dict[str, dict[str, int]]  # label -> size; the first is the one --quick runs
    ports: dict[str, Callable | Port | NotRunnable] = field(default_factory=dict)  # system name -> port
    guard_failure: GuardFailure | None = None
    rtol: float = 1e-4
    atol: float = 1e-5
    stateful: bool = False  # fn updates its arguments in place

    def port_for(self, system: str) -> Callable | Port | NotRunnable | None:
        """The port a system runs instead of `fn`, a reason it cannot, or None (it runs `fn`)."""
        return self.ports.get(system)


def load_programs(names: list[str] | None = None) -> list[Program]:
    """The registered programs (all of bench/programs, or those named, in that order)."""
    from bench import programs

    found = {}
    for info in pkgutil.iter_modules(programs.__path__):
        module = importlib.import_module(f"bench.programs.{info.name}")
        program = getattr(module, "PROGRAM", None)
        if isinstance(program, Program):
            found[program.name] = program
    if names is None:
        return [found[n] for n in sorted(found)]
    missing = [n for n in names if n not in found]
    if missing:
        raise SystemExit(f"unknown program(s) {', '.join(missing)}; registered: {', '.join(sorted(found))}")
    return [found[n] for n in names]
