"""Pooled checks: one reduction for the checks of many small values (guard-fp-events, guard-subnormal-inputs).

Both passes guard that a per-element predicate holds over groups of values
("finite", "not subnormal"), each group reduced to one 0-d flag. For IREE
each such reduction is a dispatch per call and an executable to compile
(~50 ms of CPU each): in model_treenn's training step they were 23 of its 59
executables, and compiling the module without them took 2.9 s instead of 4.5 s.
Pooled, treenn's step has 40 executables (52 dispatches instead of 71).

`pooled_flags` reduces many groups ("rows") at once: each row's values,
flattened, are written one after the other into a row of one [rows, width]
table filled with a value the predicate accepts, and one reduction along
the rows gives every row's flag. IREE fills the table and moves each value
into it with a copy (`update_slice` becomes a `flow.tensor.update`), not a
dispatch. Rows are packed into tables widest first, a table
taking a row while its padding stays within `SLACK` elements or its rows'
own size, so the fills cost at most that of the copies or a few us.
Only rows that `poolable` accepts join: static shapes, one dtype, at most
PYFRONT_POOL_MAX_ELEMENTS elements (passes/settings.py, default 4096; 0
turns pooling off); a larger value's own reduction costs little next to a
pass over its elements, and a copy of it would not.

`group_flags` is what both passes call: per group of values, its guard's
flag, pooled where the group is small, the pass's own reduction elsewhere.

Assumes: `holds` is true of `padding`. Guarantees:
each row's flag is 1 iff `holds` is true at every element of its values, as
a reduction of the row alone would give; the flags keep the rows' order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from pyfront.dialects.mlir import arith, ir
from pyfront.dialects.primitives import emit
from pyfront.dialects.primitives.bind import apply
from pyfront.dialects.types import shape_of, tensor_dtype
from pyfront.passes import settings

# Padding a table may always add (the fill of 64 KiB of float32 costs ~2 us); beyond it, at most its rows' size.
SLACK = 1 << 14
# Rows per table: each is a copy into the table, and a table is a value like any other.
MAX_ROWS = 32
I8 = np.dtype(np.int8)

Predicate = Callable[[ir.Value], ir.Value]  # a float scalar -> an i1


def poolable(values: list[ir.Value]) -> bool:
    """Whether `values` may be a row of a pool: static shapes, one dtype, at most PYFRONT_POOL_MAX_ELEMENTS in all."""
    shapes = [shape_of(v.type) for v in values]
    return (all(None not in s for s in shapes) and len({tensor_dtype(v.type) for v in values}) == 1
            and sum(map(math.prod, shapes)) <= settings.integer("PYFRONT_POOL_MAX_ELEMENTS"))


def group_flags(groups: list, values: Callable[[Any], list[ir.Value]], pooled: Callable[[Any], bool],
                holds: Predicate, padding: float, alone: Callable[[Any], ir.Value]) -> list[ir.Value]:
    """Per group, a 0-d tensor<i1>: its check holds at every element of its `values(group)`.

    The groups that are `pooled` (their values `poolable`) are rows of `pooled_flags`' tables;
    each other group's check is `alone(group)`, a 0-d integer tensor (nonzero: it holds).
    """
    rows = [g for g in groups if pooled(g)]
    least = dict(zip(map(id, rows), pooled_flags([values(g) for g in rows], holds, padding)))
    # Reduced as i8, then the 0-d cast: an i1 reduction was 2.5x slower in IREE's CPU code
    # (a check cost 324 us instead of 110 us on the demo's 256x1024 GELU+layernorm).
    return [apply("astype", least[id(g)] if id(g) in least else alone(g), dtype="bool") for g in groups]


def pooled_flags(rows: list[list[ir.Value]], holds: Predicate, padding: float) -> list[ir.Value]:
    """Per row of `rows` (each `poolable`), a 0-d tensor<i8>: 1 iff `holds` at every element of its values."""
    sizes = [sum(math.prod(shape_of(v.type)) for v in row) for row in rows]
    flags: list[ir.Value | None] = [None] * len(rows)
    for table in _tables(rows, sizes):
        least = _least_per_row([rows[r] for r in table], sizes[table[0]], holds, padding)
        for k, r in enumerate(table):
            flags[r] = apply("reshape", apply("slice", least, offsets=[k], sizes=[1], strides=[1]), shape=[])
    return flags


def _tables(rows: list[list[ir.Value]], sizes: list[int]) -> list[list[int]]:
    """The rows (indices) of each table: of one dtype, widest first, padding bounded (module docstring)."""
    tables: list[list[int]] = []
    by_dtype: dict[np.dtype, list[int]] = {}
    for r in sorted(range(len(rows)), key=lambda r: -sizes[r]):
        by_dtype.setdefault(tensor_dtype(rows[r][0].type), []).append(r)
    for order in by_dtype.values():
        table, filled = [], 0
        for r in order:
            width = sizes[table[0]] if table else sizes[r]
            padding = (len(table) + 1) * width - filled - sizes[r]
            if table and (len(table) == MAX_ROWS or padding > max(filled + sizes[r], SLACK)):
                tables.append(table)
                table, filled = [], 0
            table.append(r)
            filled += sizes[r]
        tables.append(table)
    return tables


def _least_per_row(rows: list[list[ir.Value]], width: int, holds: Predicate, padding: float) -> ir.Value:
    """A [len(rows)] tensor<i8>: per row (of at most `width` elements), the min over its elements of `holds`
    (as 0 or 1)."""
    dtype = tensor_dtype(rows[0][0].type)
    flat = [[v if shape_of(v.type) == (1, n) else apply("reshape", v, shape=[1, n])
             for v, n in ((v, math.prod(shape_of(v.type))) for v in row)] for row in rows]
    if len(flat) == 1 and len(flat[0]) == 1:
        table = flat[0][0]  # the value itself: no copy
    else:
        # `padding` everywhere, each value written into its row in place: one copy per value (a
        # concatenation per row, then of the rows, was two; mlp_train_step: 24 copies -> 10).
        table = emit.splat(padding, (len(rows), width), dtype)
        for r, row in enumerate(flat):
            column = 0
            for v in row:
                table = apply("update_slice", table, v, offsets=[r, column], strides=[1, 1])
                column += shape_of(v.type)[1]
    i8 = ir.IntegerType.get_signless(8)
    (least,) = emit.generic([table], [emit.projection_map(2, [0, 1])], [emit.fill(1, [len(rows)], I8)],
                            [emit.projection_map(2, [0])], [emit.PARALLEL, emit.REDUCTION],
                            lambda args: arith.minsi(args[1], arith.extui(i8, holds(args[0]))))
    return least
