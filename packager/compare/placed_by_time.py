"""The tensors TFLite's arena planner has placed, indexed by time, for its gap search.

The planner (SimpleMemoryArena::Allocate) looks, for each new tensor, at every tensor placed before
it whose lifetime overlaps its own, by increasing offset. Scanning all placed tensors each time is
quadratic; here they are bucketed by operator, so that a query reads only the buckets its lifetime
touches. The answer is the very list the scan gives: the same entries, sorted the same way.
"""

from __future__ import annotations

# (offset, end, alloc, dealloc): bytes [offset, end) in use from node alloc to node dealloc.
Entry = tuple[int, int, int, int]


class PlacedByTime:
    """Entries stored in every bucket of `width` operators their lifetime touches.

    Lifetimes are clamped to `horizon`, which must be at least every alloc and every finite
    dealloc: clamping then changes no overlap (a never-freed tensor overlaps all that follow).
    An entry (or a query) whose dealloc comes before its alloc is kept in a list scanned every
    time, so that the overlap test stays exactly `not (dealloc < alloc' or alloc > dealloc')`."""

    def __init__(self, width: int, horizon: int) -> None:
        self._width = max(1, width)
        self._horizon = max(0, horizon)
        self._buckets: list[list[Entry]] = [[] for _ in range(self._horizon // self._width + 1)]
        self._odd: list[Entry] = []

    def _span(self, alloc: int, dealloc: int) -> range:
        return range(alloc // self._width, min(dealloc, self._horizon) // self._width + 1)

    def _homes(self, entry: Entry) -> list[list[Entry]]:
        """The lists that hold `entry`: the odd ones' list, or the buckets its interval spans."""
        if entry[3] < entry[2] or entry[2] < 0 or entry[2] > self._horizon:
            return [self._odd]
        return [self._buckets[b] for b in self._span(entry[2], entry[3])]

    def add(self, entry: Entry) -> None:
        for home in self._homes(entry):
            home.append(entry)

    def remove(self, entry: Entry) -> None:
        for home in self._homes(entry):
            home.remove(entry)

    def overlapping(self, alloc: int, dealloc: int) -> list[Entry]:
        """Every entry alive at some node of [alloc, dealloc], sorted (by offset, then end)."""
        if dealloc < alloc or alloc < 0 or alloc > self._horizon:
            return sorted(p for p in self._every_entry() if not (p[3] < alloc or p[2] > dealloc))
        width = self._width
        last = min(dealloc, self._horizon)
        b_first, b_last = alloc // width, last // width
        found = [p for p in self._buckets[b_first] if p[2] <= dealloc and p[3] >= alloc]
        for b in range(b_first + 1, b_last + 1):
            # An entry that started before this bucket was counted in an earlier one.
            start = b * width
            found += [p for p in self._buckets[b] if start <= p[2] <= dealloc]
        found += [p for p in self._odd if not (p[3] < alloc or p[2] > dealloc)]
        found.sort()
        return found

    def _every_entry(self):
        """Each entry once: in its first bucket."""
        for b, bucket in enumerate(self._buckets):
            yield from (p for p in bucket if p[2] // self._width == b)
        yield from self._odd
