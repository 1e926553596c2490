"""Simulated allocator (MegEngine's static memory planning): replay the schedule with a best-fit
free list, and let the high-water mark be the arena.

At each operator, records whose last use was before it are freed first (adjacent free blocks
coalesce), then the records it starts are allocated, larger first: the smallest free block that
holds the record (lowest address on ties), else the top of the pool, growing the highest free block
when it touches the top. Writes into an input (alloc_overwrite) are decided upstream: the lifetimes
stage turns them into aliases, so here every record is a chunk of its own.
"""

from __future__ import annotations

import bisect
from typing import Sequence

from packager.plan.offsets._gaps import compress_time, offset_plan
from packager.plan.records import OffsetPlan, UsageRecord, align_up

NAME = "simulated_allocator"


class _FreeList:
    """Free blocks as (offset, end), kept sorted by offset and coalesced."""

    def __init__(self) -> None:
        self.blocks: list[tuple[int, int]] = []

    def free(self, offset: int, end: int) -> None:
        i = bisect.bisect_left(self.blocks, (offset, end))
        if i > 0 and self.blocks[i - 1][1] == offset:  # merge with the block below
            i -= 1
            offset = self.blocks.pop(i)[0]
        if i < len(self.blocks) and self.blocks[i][0] == end:  # and with the block above
            end = self.blocks.pop(i)[1]
        self.blocks.insert(i, (offset, end))

    def best_fit(self, size: int, alignment: int) -> tuple[int, int] | None:
        """(block index, aligned start) of the smallest block that holds `size` bytes."""
        best = None
        for i, (offset, end) in enumerate(self.blocks):
            start = align_up(offset, alignment)
            if start + size <= end and (best is None or end - offset < best[0]):
                best = (end - offset, i, start)
        return None if best is None else (best[1], best[2])

    def take(self, index: int, start: int, size: int) -> None:
        offset, end = self.blocks.pop(index)
        if end > start + size:
            self.blocks.insert(index, (start + size, end))
        if start > offset:  # the alignment padding stays free
            self.blocks.insert(index, (offset, start))


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    dense = compress_time(records)
    starts: dict[int, list[int]] = {}
    ends: dict[int, list[int]] = {}
    for i, r in enumerate(dense):
        starts.setdefault(r.first_op, []).append(i)
        ends.setdefault(r.last_op + 1, []).append(i)
    free, top = _FreeList(), 0
    offsets = [0] * len(records)
    for t in sorted(set(starts) | set(ends)):
        for i in ends.get(t, ()):
            if dense[i].size:
                free.free(offsets[i], offsets[i] + dense[i].size)
        for i in sorted(starts.get(t, ()), key=lambda i: (-dense[i].size, i)):
            size = dense[i].size
            if size == 0:
                continue
            fit = free.best_fit(size, alignment)
            if fit is not None:
                free.take(fit[0], fit[1], size)
                offsets[i] = fit[1]
                continue
            if free.blocks and free.blocks[-1][1] == top:  # grow the free block at the top
                start = align_up(free.blocks.pop()[0], alignment)
            else:
                start = align_up(top, alignment)
            if start > top:
                free.free(top, start)
            offsets[i] = start
            top = max(top, start + size)
    return offset_plan(NAME, records, offsets, alignment)
