"""What the shared-object strategies have in common: the size from which they take their fast
forms, the record orders they sweep in, and the plan they all return."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from packager.plan.records import ObjectPlan, Records, UsageRecord

# From this many records the shared-object strategies take their fast forms (vector sorts,
# bitset indexes, greedy_by_size_improved_fast.py), each held by tests to the readable form that
# runs below it, on every real model (a few hundred records at most). A readable form's cost
# grows faster than the count: at 1,000 records the slowest takes about 0.2 s.
FAST_FROM = 1_000


def make_plan(name: str, assignment: Sequence[int] | np.ndarray, sizes: Sequence[int] | np.ndarray,
              extents: Sequence[tuple[int, int]] = ()) -> ObjectPlan:
    """The plan, its numbers as Python ints: an array's own `tolist` makes them at once (a tenth
    of the time `int` takes per entry at 100,000 records)."""
    return ObjectPlan(strategy=name, assignment=_python_ints(assignment),
                      object_sizes=_python_ints(sizes),
                      object_extents=tuple((int(w), int(h)) for w, h in extents))


def _python_ints(values: Sequence[int] | np.ndarray) -> tuple[int, ...]:
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return tuple(values.tolist())
    return tuple(map(int, values))


def by_first_op(records: Sequence[UsageRecord]) -> list[int]:
    """Record positions in the order a sweep over time meets them (ties: earlier position)."""
    cols = Records.of(records) if len(records) >= FAST_FROM else None
    if cols is not None:  # the same order by one stable vector sort
        return np.argsort(cols.first, kind="stable").tolist()
    return sorted(range(len(records)), key=lambda i: (records[i].first_op, i))


def by_size_desc(records: Sequence[UsageRecord]) -> list[int]:
    """Record positions, largest first (ties: earlier position)."""
    cols = Records.of(records) if len(records) >= FAST_FROM else None
    if cols is not None:  # the same order by one stable vector sort
        return np.argsort(-cols.size, kind="stable").tolist()
    return sorted(range(len(records)), key=lambda i: (-records[i].size, i))
