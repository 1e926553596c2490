"""Simulated allocator (MegEngine's static memory planning): replay the schedule with a best-fit
free list; the pool's high-water mark is the arena.

Replay, operator by operator: the records whose last use was before operator t are freed first
(a freed block coalesces with free neighbours), then the records starting at t are allocated,
larger first (then by position). An allocation takes the free block with the smallest usable
(aligned) size that holds it, the lowest address among equal ones, as MegEngine's free set ordered
by (aligned size, aligned address) does. When no block holds it, the free block at the top of the
pool, if there is one, is grown; otherwise the pool grows by the record.

MegEngine's `alloc_overwrite` (an output written into part of an input) is decided upstream: the
lifetimes stage turns such outputs into aliases, so here every record is a chunk of its own.
(MegEngine's own best_fit places an unfitting chunk at the pool's top even when the highest block
is free; growing that block instead, as the seed documents describe, never needs more memory.)
"""

from __future__ import annotations

import bisect
from typing import Sequence

import numpy as np

from packager.plan.records import OffsetPlan, Records, UsageRecord, align_up

NAME = "simulated_allocator"


class Pool:
    """Free blocks of a growing pool, indexed by address and by usable size."""

    def __init__(self, alignment: int) -> None:
        self.alignment = max(1, alignment)
        self.starts: list[int] = []  # free block starts, sorted
        self.end_of: dict[int, int] = {}  # free block start -> end
        self.by_fit: list[tuple[int, int, int]] = []  # (usable size, aligned start, start), sorted
        self.top = 0  # high-water mark

    def _add(self, start: int, end: int) -> None:
        if end <= start:
            return
        bisect.insort(self.starts, start)
        self.end_of[start] = end
        aligned = align_up(start, self.alignment)
        if aligned < end:
            bisect.insort(self.by_fit, (end - aligned, aligned, start))

    def _remove(self, start: int) -> int:
        end = self.end_of.pop(start)
        self.starts.pop(bisect.bisect_left(self.starts, start))
        aligned = align_up(start, self.alignment)
        if aligned < end:
            self.by_fit.pop(bisect.bisect_left(self.by_fit, (end - aligned, aligned, start)))
        return end

    def alloc(self, size: int) -> int:
        k = bisect.bisect_left(self.by_fit, (size, -1, -1))
        if k < len(self.by_fit):  # best fit
            _, aligned, start = self.by_fit[k]
            end = self._remove(start)
            self._add(start, aligned)  # alignment padding stays free
            self._add(aligned + size, end)
            return aligned
        if self.starts and self.end_of[self.starts[-1]] == self.top:  # grow the top free block
            start = self.starts[-1]
            self._remove(start)
        else:
            start = self.top
        aligned = align_up(start, self.alignment)
        self._add(start, aligned)
        self.top = aligned + size
        return aligned

    def free(self, start: int, end: int) -> None:
        k = bisect.bisect_left(self.starts, start)
        if k > 0 and self.end_of[self.starts[k - 1]] == start:  # merge with the block below
            start = self.starts[k - 1]
            self._remove(start)
        if end in self.end_of:  # and with the block above
            end = self._remove(end)
        self._add(start, end)


def replay_order(records: Sequence[UsageRecord]):
    """Yield ("free", i) and ("alloc", i) in replay order: before the records starting at op t are
    allocated (larger first), every record whose last use was before t is freed."""
    starts, ends = _orders(records)
    firsts = [r.first_op for r in records]
    lasts = [r.last_op for r in records]
    e = 0
    for i in starts:
        t = firsts[i]
        while e < len(ends) and lasts[ends[e]] < t:
            yield "free", ends[e]
            e += 1
        yield "alloc", i


def _orders(records: Sequence[UsageRecord]) -> tuple[list[int], list[int]]:
    """The non-empty records by (first_op, -size, position) and by (last_op, position): vector
    sorts above 64 records."""
    if len(records) <= 64:
        ids = [i for i, r in enumerate(records) if r.size > 0]
        return (sorted(ids, key=lambda i: (records[i].first_op, -records[i].size, i)),
                sorted(ids, key=lambda i: (records[i].last_op, i)))
    cols = Records.of(records)
    ids = np.flatnonzero(cols.size > 0)
    return (ids[np.lexsort((ids, -cols.size[ids], cols.first[ids]))].tolist(),
            ids[np.argsort(cols.last[ids], kind="stable")].tolist())


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    pool = Pool(alignment)
    offsets = [0] * len(records)  # zero-size records take no block and keep offset 0
    for event, i in replay_order(records):
        if event == "alloc":
            offsets[i] = pool.alloc(records[i].size)
        else:
            pool.free(offsets[i], offsets[i] + records[i].size)
    return OffsetPlan(NAME, tuple(offsets), pool.top, max(1, alignment))
