"""TensorFlow's BFC allocator replayed over the schedule: the memory a dynamic allocator needs.

A baseline, not a plan to ship. Every request is rounded up to 256 bytes; free chunks sit in bins
by size class (bin k holds sizes in [256 << k, 256 << (k + 1))); a request takes the smallest free
chunk that holds it (lowest address on ties), searching from its own bin upwards; the chunk is
split when it is at least twice the request; freed chunks coalesce with free neighbours. When no
chunk fits, TensorFlow would add a region; here the single region grows by exactly what the
request needs, so the high-water mark is the least such an allocator needs. Frees of the records
last used at op t-1 happen before the allocations of op t.
"""

from __future__ import annotations

import bisect
from typing import Sequence

from packager.plan.offsets._gaps import compress_time, offset_plan
from packager.plan.records import OffsetPlan, UsageRecord

NAME = "bfc"
MIN_ALLOCATION = 256
NUM_BINS = 21


def round_request(size: int) -> int:
    return max(MIN_ALLOCATION, -(-size // MIN_ALLOCATION) * MIN_ALLOCATION)


def bin_of(size: int) -> int:
    return min(max(size // MIN_ALLOCATION, 1).bit_length() - 1, NUM_BINS - 1)


class _Arena:
    def __init__(self) -> None:
        self.bins: list[list[tuple[int, int]]] = [[] for _ in range(NUM_BINS)]  # (size, offset)
        self.free_at: dict[int, int] = {}  # offset -> size of the free chunk starting there
        self.free_end: dict[int, int] = {}  # end -> offset of the free chunk ending there
        self.top = 0

    def _add_free(self, offset: int, size: int) -> None:
        bisect.insort(self.bins[bin_of(size)], (size, offset))
        self.free_at[offset], self.free_end[offset + size] = size, offset

    def _remove_free(self, offset: int) -> int:
        size = self.free_at.pop(offset)
        del self.free_end[offset + size]
        chunks = self.bins[bin_of(size)]
        chunks.pop(bisect.bisect_left(chunks, (size, offset)))
        return size

    def allocate(self, request: int) -> tuple[int, int]:
        """(offset, chunk size) for a rounded request."""
        for b in range(bin_of(request), NUM_BINS):
            chunks = self.bins[b]
            k = bisect.bisect_left(chunks, (request, -1))
            if k < len(chunks):
                size, offset = chunks[k]
                self._remove_free(offset)
                if size >= 2 * request:  # split: the remainder stays free
                    self._add_free(offset + request, size - request)
                    size = request
                return offset, size
        offset, self.top = self.top, self.top + request
        return offset, request

    def free(self, offset: int, size: int) -> None:
        if offset + size in self.free_at:  # coalesce with the free chunk above
            size += self._remove_free(offset + size)
        if offset in self.free_end:  # and with the one below
            below = self.free_end[offset]
            size += self._remove_free(below)
            offset = below
        self._add_free(offset, size)


def replay(records: Sequence[UsageRecord], alignment: int = MIN_ALLOCATION) -> OffsetPlan:
    dense = compress_time(records)
    starts: dict[int, list[int]] = {}
    ends: dict[int, list[int]] = {}
    for i, r in enumerate(dense):
        starts.setdefault(r.first_op, []).append(i)
        ends.setdefault(r.last_op + 1, []).append(i)
    arena = _Arena()
    offsets, chunk = [0] * len(records), [0] * len(records)
    for t in sorted(set(starts) | set(ends)):
        for i in ends.get(t, ()):
            if chunk[i]:
                arena.free(offsets[i], chunk[i])
        for i in starts.get(t, ()):
            if dense[i].size:
                offsets[i], chunk[i] = arena.allocate(round_request(dense[i].size))
    return offset_plan(NAME, records, offsets, alignment)
