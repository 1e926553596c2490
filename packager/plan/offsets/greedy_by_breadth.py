"""Greedy by breadth (offsets): visit operators by breadth, largest first; at each, place its
still-unplaced records by size, largest first, in the smallest gap that fits.

The widest operator decides the lower bound, so its records are packed first, while the arena
is still empty around them.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from packager.plan.offsets._gaps import offset_plan, place_in_order
from packager.plan.records import (OffsetPlan, UsageRecord, operator_breadths, operator_profiles,
                                   time_columns)

NAME = "greedy_by_breadth"


def placement_order(records: Sequence[UsageRecord]) -> list[int]:
    """Operators by breadth, widest first (ties: earlier); at each, its records not placed yet,
    largest first (ties: earlier position). A record thus comes at the first operator of that
    order among those it is alive at: the one of least rank over its interval (a range minimum),
    so the whole order is one sort by (that rank, -size, position)."""
    # Profiles and breadths are taken at the distinct start times only (records.compress_time):
    # any other operator's profile is a subset of an earlier one's, so it adds nothing.
    cols = time_columns(records)
    if cols is None:
        return _placement_order_python(records)
    if not len(records):
        return []
    ops = np.argsort(-cols.breadths(), kind="stable")  # widest first, ties: earlier operator
    rank = np.empty(len(ops), dtype=np.int64)
    rank[ops] = np.arange(len(ops))
    visited = _range_minima(rank, cols.dense_first, cols.dense_last)
    return np.lexsort((np.arange(len(records)), -cols.size, visited)).tolist()


def _range_minima(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """min(values[lo[i] .. hi[i]]) for every i (inclusive), by a sparse table: level j holds the
    minima of the runs of 2^j values; any range is covered by two runs of one level."""
    levels = [values]
    while 2 ** len(levels) <= len(values):
        half = 2 ** (len(levels) - 1)
        below = levels[-1]
        levels.append(np.minimum(below[:-half], below[half:]))
    length = hi - lo + 1
    level = np.zeros(len(lo), dtype=np.int64)
    while True:  # the largest level whose run fits in each range
        up = 2 ** (level + 1) <= length
        if not up.any():
            break
        level += up
    out = np.empty(len(lo), dtype=np.int64)
    for j in np.unique(level).tolist():
        at = level == j
        runs = levels[j]
        out[at] = np.minimum(runs[lo[at]], runs[hi[at] - 2 ** j + 1])
    return out


def _placement_order_python(records: Sequence[UsageRecord]) -> list[int]:
    profiles = operator_profiles(records)
    breadths = operator_breadths(records)
    ops = sorted(range(len(profiles)), key=lambda op: (-breadths[op], op))
    seen = [False] * len(records)
    order: list[int] = []
    for op in ops:
        fresh = [i for i in profiles[op] if not seen[i]]
        fresh.sort(key=lambda i: (-records[i].size, i))
        for i in fresh:
            seen[i] = True
        order += fresh
    return order


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    offsets = place_in_order(records, placement_order(records), alignment)
    return offset_plan(NAME, records, offsets, alignment)
