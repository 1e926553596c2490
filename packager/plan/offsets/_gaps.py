"""What the offset strategies share: an index of placed records by time, and the two gap searches.

Every gap search needs "the placed records alive during [first, last], by increasing offset".
Scanning every placed record for each new one is quadratic; `PlacedRecords` buckets them by
operator so that a query only looks at records near the interval in time.
"""

from __future__ import annotations

import bisect
from typing import Sequence

import numpy as np

from packager.plan.records import OffsetPlan, UsageRecord, align_up, arena_of, time_columns

# A placed record as the gap searches see it: (offset, end, first_op, last_op); it occupies the
# bytes [offset, end) during operators [first_op, last_op].
Placed = tuple[int, int, int, int]


class PlacedRecords:
    """Placed records, bucketed by operator index, each bucket kept sorted by offset.

    A record is stored in every bucket its interval touches; a query over [first, last] reads the
    buckets it touches and counts each record once, in the first of those buckets it appears in.
    The bucket width is the median lifetime (balancing "buckets read per query" against "records
    per bucket"), widened if operator numbers are sparse. Keeping buckets sorted makes a
    one-bucket answer sorted for free, and a several-bucket answer a merge of sorted runs.
    """

    def __init__(self, records: Sequence[UsageRecord]) -> None:
        cols = time_columns(records) if records else None
        if cols is not None:  # the same median and last operator, by one vector sort
            lifetimes = np.sort(cols.last - cols.first + 1)
            last_op, median = max(0, int(cols.last.max())), int(lifetimes[len(lifetimes) // 2])
        else:
            lifetimes = sorted(r.last_op - r.first_op + 1 for r in records)
            last_op = max((r.last_op for r in records), default=0)
            median = lifetimes[len(lifetimes) // 2] if lifetimes else 1
        # Sparse operator numbers (say, times from a CSV) must not make millions of buckets.
        self._width = max(1, median, (last_op + 1) // (4 * len(records) + 16))
        self._buckets: list[list[Placed]] = [[] for _ in range(last_op // self._width + 1)]

    def add(self, first_op: int, last_op: int, offset: int, end: int) -> None:
        entry = (offset, end, first_op, last_op)
        width = self._width
        for b in range(first_op // width, last_op // width + 1):
            bisect.insort(self._buckets[b], entry)

    def conflicting(self, first_op: int, last_op: int) -> list[Placed]:
        """The placed records alive at some operator of [first_op, last_op], sorted by offset."""
        width, buckets = self._width, self._buckets
        b_first, b_last = first_op // width, last_op // width
        found = [p for p in buckets[b_first] if p[2] <= last_op and p[3] >= first_op]
        if b_last > b_first:
            for b in range(b_first + 1, b_last + 1):
                # Records that started before this bucket were already seen in an earlier one.
                start = b * width
                found += [p for p in buckets[b] if start <= p[2] <= last_op]
            found.sort()
        return found


def smallest_gap_offset(conflicts: Sequence[Placed], size: int, alignment: int,
                        remember_unaligned: bool = False) -> int:
    """Best fit: the aligned start of the smallest gap between `conflicts` (sorted by offset) that
    holds `size` bytes, the first of equal gaps; above all of them when no gap fits.

    `remember_unaligned` keeps TFLite's quirk (SimpleMemoryArena::Allocate): a candidate is compared
    by its gap from the ALIGNED start, but the best is remembered by its gap from the UNALIGNED end
    of the records below. With alignment 1 both measures agree."""
    best_start, best_gap = -1, 0
    current = 0  # end of the highest record seen so far: gaps open from here
    for offset, end, _, _ in conflicts:
        if offset - current >= size:  # cheap necessary test first: most records touch or overlap
            start = align_up(current, alignment)
            if start + size <= offset and (best_start < 0 or offset - start < best_gap):
                best_start = start
                best_gap = offset - (current if remember_unaligned else start)
        if end > current:
            current = end
    return best_start if best_start >= 0 else align_up(current, alignment)


def lowest_offset(conflicts: Sequence[Placed], size: int, alignment: int) -> int:
    """First fit: the smallest aligned offset where `size` bytes overlap none of `conflicts`
    (sorted by offset)."""
    current = 0
    for offset, end, _, _ in conflicts:
        if offset - current >= size:
            start = align_up(current, alignment)
            if start + size <= offset:
                return start
        if end > current:
            current = end
    return align_up(current, alignment)


def place_in_order(
    records: Sequence[UsageRecord], order: Sequence[int], alignment: int, best_fit: bool = True,
    remember_unaligned: bool = False,
) -> list[int]:
    """Offsets for `records` placed one by one in `order` (positions), each in the best-fit (or the
    lowest) gap among the conflicting records placed before it. Zero-size records take offset 0
    and no space; positions missing from `order` stay at 0. `remember_unaligned`: TFLite's way of
    measuring the best gap (see `smallest_gap_offset`).

    `smallest_gap_offset` (or `lowest_offset`) is inlined: this loop runs once per record in
    several strategies, `package` at 100,000 operators among them."""
    offsets = [0] * len(records)
    placed = PlacedRecords(records)
    conflicting, add = placed.conflicting, placed.add
    align = alignment if alignment > 1 else 1
    for i in order:
        r = records[i]
        size = r.size
        if size == 0:
            continue
        first, last = r.first_op, r.last_op
        found = conflicting(first, last)
        # The gap search (smallest_gap_offset or lowest_offset, inlined).
        best_start, best_gap, current = -1, 0, 0
        for offset, end, _, _ in found:
            if offset - current >= size:
                start = -(-current // align) * align
                if start + size <= offset:
                    if not best_fit:
                        best_start = start
                        break
                    if best_start < 0 or offset - start < best_gap:
                        best_start = start
                        best_gap = offset - (current if remember_unaligned else start)
            if end > current:
                current = end
        if best_start < 0:
            best_start = -(-current // align) * align
        offsets[i] = best_start
        add(first, last, best_start, best_start + size)
    return offsets


def offset_plan(
    strategy: str, records: Sequence[UsageRecord], offsets: Sequence[int], alignment: int
) -> OffsetPlan:
    return OffsetPlan(strategy=strategy, offsets=tuple(offsets),
                      arena=_arena(records, offsets), alignment=alignment)


def _arena(records: Sequence[UsageRecord], offsets: Sequence[int]) -> int:
    """`arena_of`, by one vector maximum when the records are int64 columns (an offset is at
    most the sum of the sizes, which the columns keep inside int64)."""
    cols = time_columns(records) if len(records) > 64 else None
    if cols is None:
        return arena_of(records, offsets)
    try:
        ends = np.fromiter(offsets, dtype=np.int64, count=len(offsets)) + cols.size
    except OverflowError:
        return arena_of(records, offsets)
    return int(ends.max())
