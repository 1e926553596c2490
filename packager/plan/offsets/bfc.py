"""TensorFlow's BFC allocator replayed over the schedule: what a dynamic allocator would need.

A baseline, not a strategy: nothing plans ahead, the allocator only reacts to requests in schedule
order. Rules as in tensorflow/core/common_runtime/bfc_allocator.cc:
- every request is rounded up to a multiple of kMinAllocationSize = 256 bytes (zero-byte requests
  get nothing);
- free chunks sit in 21 bins by size class: bin k holds sizes in [256 << k, 256 << (k + 1)), the
  last bin everything larger; each bin is ordered by (size, address);
- a request searches from its own bin upwards and takes the first chunk that holds it: the
  smallest, then the lowest address (best fit);
- the chunk is split when it is at least twice the request, or when splitting saves at least
  kMaxInternalFragmentation = 128 MiB; otherwise the whole chunk is handed out;
- a freed chunk coalesces with its free neighbours.

When no chunk holds a request TensorFlow extends its memory with a new region (of a doubling
size). Here there is one region that grows by exactly what the request needs: when its highest
chunk is free it is extended by the difference (TensorFlow merges an extension with the free chunk
before it when regions can coalesce), otherwise a chunk of the request's size is appended. The
high-water mark is then the least memory this allocator needs for the schedule: the arena.

Order of events, as a runtime does it: before operator t's outputs are allocated (in record order),
the records last used by operator t-1 (or earlier) are freed.
"""

from __future__ import annotations

import bisect
import math
from typing import Sequence

import numpy as np

from packager.plan.records import OffsetPlan, Records, UsageRecord

NAME = "bfc"
MIN_ALLOCATION = 256  # kMinAllocationSize
NUM_BINS = 21  # kNumBins
MAX_INTERNAL_FRAGMENTATION = 128 << 20  # kMaxInternalFragmentation


def round_request(size: int, granule: int = MIN_ALLOCATION) -> int:
    """RoundedBytes: the next multiple of the granule (0 stays 0: such a request gets nothing)."""
    return -(-size // granule) * granule


def bin_of(size: int) -> int:
    """BinNumForSize: floor(log2(size / 256)), capped at the last bin."""
    return min(max(size // MIN_ALLOCATION, 1).bit_length() - 1, NUM_BINS - 1)


class Region:
    """One growable region cut into chunks; the free ones also sit in bins."""

    def __init__(self) -> None:
        self.bins: list[list[tuple[int, int]]] = [[] for _ in range(NUM_BINS)]  # (size, address)
        self.free_size: dict[int, int] = {}  # address -> size of the free chunk there
        self.free_ending: dict[int, int] = {}  # end -> address of the free chunk ending there
        self.top = 0  # region size: the high-water mark

    def _insert_free(self, address: int, size: int) -> None:
        bisect.insort(self.bins[bin_of(size)], (size, address))
        self.free_size[address] = size
        self.free_ending[address + size] = address

    def _remove_free(self, address: int) -> int:
        size = self.free_size.pop(address)
        del self.free_ending[address + size]
        chunks = self.bins[bin_of(size)]
        chunks.pop(bisect.bisect_left(chunks, (size, address)))
        return size

    def allocate(self, rounded: int) -> tuple[int, int]:
        """(address, chunk size) for a rounded request (FindChunkPtr, then Extend)."""
        for b in range(bin_of(rounded), NUM_BINS):
            chunks = self.bins[b]
            k = bisect.bisect_left(chunks, (rounded, -1))
            if k < len(chunks):
                size, address = chunks[k]
                self._remove_free(address)
                if size >= 2 * rounded or size - rounded >= MAX_INTERNAL_FRAGMENTATION:
                    self._insert_free(address + rounded, size - rounded)
                    size = rounded
                return address, size
        # Extend: the free chunk at the top (if any) grows to exactly the request.
        address = self.free_ending.get(self.top, self.top)
        if address < self.top:
            self._remove_free(address)
        self.top = address + rounded
        return address, rounded

    def free(self, address: int, size: int) -> None:
        if address + size in self.free_size:  # coalesce with the next chunk
            size += self._remove_free(address + size)
        if address in self.free_ending:  # and with the previous one
            previous = self.free_ending[address]
            size += self._remove_free(previous)
            address = previous
        self._insert_free(address, size)


def event_orders(records: Sequence[UsageRecord]) -> tuple[list[int], list[int]]:
    """The non-empty records by (first_op, position) and by (last_op, position): as two stable
    vector sorts above 64 records."""
    if len(records) <= 64:
        ids = [i for i, r in enumerate(records) if r.size > 0]
        return (sorted(ids, key=lambda i: (records[i].first_op, i)),
                sorted(ids, key=lambda i: (records[i].last_op, i)))
    cols = Records.of(records)
    ids = np.flatnonzero(cols.size > 0)
    return (ids[np.argsort(cols.first[ids], kind="stable")].tolist(),
            ids[np.argsort(cols.last[ids], kind="stable")].tolist())


def replay(records: Sequence[UsageRecord], alignment: int = MIN_ALLOCATION) -> OffsetPlan:
    """The BFC allocator's addresses and high-water mark for the records' schedule.

    Addresses are multiples of 256; an `alignment` that does not divide 256 makes the granule
    lcm(256, alignment) instead, so the plan still honours it.
    """
    granule = math.lcm(MIN_ALLOCATION, max(1, alignment))
    starts, ends = event_orders(records)
    firsts = [r.first_op for r in records]
    lasts = [r.last_op for r in records]
    region = Region()
    offsets = [0] * len(records)
    chunk = [0] * len(records)
    e = 0
    for i in starts:
        t = firsts[i]
        while e < len(ends) and lasts[ends[e]] < t:
            j = ends[e]
            region.free(offsets[j], chunk[j])
            e += 1
        offsets[i], chunk[i] = region.allocate(round_request(records[i].size, granule))
    return OffsetPlan(NAME, tuple(offsets), region.top, max(1, alignment))
