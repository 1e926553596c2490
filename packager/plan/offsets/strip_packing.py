"""Strip packing, best-fit skyline (Sekiyama et al. 2018).

Time runs along the x axis, bytes up the y axis. The skyline is a row of time segments, each with
the height of the highest byte used so far over it. Repeatedly take the lowest segment (the
leftmost of equal ones) and put there, at its height, the longest-lived unplaced record that fits
inside it in time (then the largest, then the lowest position). When none fits, the segment can
never be used at its height: raise it to its lower neighbour and merge with it.

Every step places a record or removes a segment, so the loop ends after at most ~3n steps.
"""

from __future__ import annotations

import bisect
import heapq
from typing import Sequence

from packager.plan.offsets._gaps import offset_plan
from packager.plan.records import OffsetPlan, UsageRecord, align_up

NAME = "strip_packing"


_NONE = (1, 0, 0)  # the rank of an empty group: worse than any record's (lifetimes are >= 0)


class _Unplaced:
    """The records not placed yet, grouped by first operator, each group best-first:
    longest-lived, then largest, then lowest position.

    A segment tree over the first operators holds each group's best rank (its head), so a query
    visits groups best head first and stops as soon as no head left can beat what it found: a
    head that does not fit in time is the only reason to look further.
    """

    def __init__(self, records: Sequence[UsageRecord], positions: Sequence[int]) -> None:
        self._records = records
        groups: dict[int, list[int]] = {}
        for i in positions:
            groups.setdefault(records[i].first_op, []).append(i)
        for group in groups.values():
            group.sort(key=self._rank)
        self._groups = groups
        # Per group, the negated lifetimes in group order (ascending), to bisect on.
        self._neg_lifetimes = {f: [-self._lifetime(i) for i in g] for f, g in groups.items()}
        self._firsts = sorted(groups)  # every first operator that had records, fixed
        self._leaf = {f: k for k, f in enumerate(self._firsts)}
        size = 1
        while size < len(self._firsts):
            size *= 2
        self._size = size
        tree = [_NONE] * (2 * size)
        for k, f in enumerate(self._firsts):
            tree[size + k] = self._rank(groups[f][0])
        for node in range(size - 1, 0, -1):
            tree[node] = min(tree[2 * node], tree[2 * node + 1])
        self._tree = tree

    def _lifetime(self, i: int) -> int:
        return self._records[i].last_op - self._records[i].first_op

    def _rank(self, i: int) -> tuple[int, int, int]:
        return (-self._lifetime(i), -self._records[i].size, i)

    def best_inside(self, start: int, stop: int) -> int | None:
        """The best unplaced record living inside operators [start, stop), or None."""
        tree, size = self._tree, self._size
        lo = bisect.bisect_left(self._firsts, start) + size
        hi = bisect.bisect_left(self._firsts, stop) + size
        frontier: list[tuple[tuple[int, int, int], int]] = []
        while lo < hi:  # the canonical nodes covering the range
            if lo & 1:
                frontier.append((tree[lo], lo))
                lo += 1
            if hi & 1:
                hi -= 1
                frontier.append((tree[hi], hi))
            lo //= 2
            hi //= 2
        heapq.heapify(frontier)
        best, best_rank = None, _NONE
        while frontier and frontier[0][0] < best_rank:
            _, node = heapq.heappop(frontier)
            if node < size:
                heapq.heappush(frontier, (tree[2 * node], 2 * node))
                heapq.heappush(frontier, (tree[2 * node + 1], 2 * node + 1))
                continue
            first = self._firsts[node - size]
            room = stop - 1 - first  # the longest lifetime that still fits from here
            j = bisect.bisect_left(self._neg_lifetimes[first], -room)
            group = self._groups[first]
            if j < len(group):
                rank = self._rank(group[j])
                if rank < best_rank:
                    best, best_rank = group[j], rank
        return best

    def remove(self, i: int) -> None:
        first = self._records[i].first_op
        group = self._groups[first]
        j = group.index(i)
        del group[j]
        del self._neg_lifetimes[first][j]
        node = self._leaf[first] + self._size
        self._tree[node] = self._rank(group[0]) if group else _NONE
        node //= 2
        while node:
            self._tree[node] = min(self._tree[2 * node], self._tree[2 * node + 1])
            node //= 2


class _Skyline:
    """Segments [start, stop) of time with their heights, linked left to right; adjacent
    segments never have equal heights. Dead segment ids stay in the heap until popped."""

    def __init__(self, n_ops: int) -> None:
        self.start: list[int] = []
        self.stop: list[int] = []
        self.height: list[int] = []
        self.left: list[int] = []
        self.right: list[int] = []
        self.alive: list[bool] = []
        self._heap: list[tuple[int, int, int]] = []
        self._new(0, n_ops, 0, -1, -1)

    def _new(self, start: int, stop: int, height: int, left: int, right: int) -> int:
        s = len(self.start)
        self.start.append(start)
        self.stop.append(stop)
        self.height.append(height)
        self.left.append(left)
        self.right.append(right)
        self.alive.append(True)
        if left >= 0:
            self.right[left] = s
        if right >= 0:
            self.left[right] = s
        heapq.heappush(self._heap, (height, start, s))
        return s

    def lowest(self) -> int:
        while not self.alive[self._heap[0][2]]:
            heapq.heappop(self._heap)
        return self._heap[0][2]

    def _replace(self, old: Sequence[int], start: int, stop: int, height: int) -> int:
        """Replace the adjacent segments `old` (left to right) by one."""
        left, right = self.left[old[0]], self.right[old[-1]]
        for s in old:
            self.alive[s] = False
        return self._new(start, stop, height, left, right)

    def _merge_equal_neighbours(self, s: int) -> None:
        group = [s]
        if self.left[s] >= 0 and self.height[self.left[s]] == self.height[s]:
            group.insert(0, self.left[s])
        if self.right[s] >= 0 and self.height[self.right[s]] == self.height[s]:
            group.append(self.right[s])
        if len(group) > 1:
            self._replace(group, self.start[group[0]], self.stop[group[-1]], self.height[s])

    def cover(self, s: int, first: int, stop: int, top: int) -> None:
        """Raise the part [first, stop) of segment `s` to `top`."""
        start, end, height = self.start[s], self.stop[s], self.height[s]
        left, right = self.left[s], self.right[s]
        self.alive[s] = False
        if start < first:
            left = self._new(start, first, height, left, -1)
        middle = self._new(first, stop, top, left, -1)
        last = middle
        if stop < end:
            last = self._new(stop, end, height, middle, -1)
        self.right[last] = right
        if right >= 0:
            self.left[right] = last
        self._merge_equal_neighbours(middle)

    def raise_to_neighbour(self, s: int) -> None:
        """Raise segment `s` to the lower of its neighbours' heights, merging with them."""
        neighbours = [self.height[n] for n in (self.left[s], self.right[s]) if n >= 0]
        raised = self._replace([s], self.start[s], self.stop[s], min(neighbours))
        self._merge_equal_neighbours(raised)


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    offsets = [0] * len(records)
    todo = [i for i, r in enumerate(records) if r.size > 0]  # empty records stay at 0
    unplaced = _Unplaced(records, todo)
    skyline = _Skyline(max((records[i].last_op for i in todo), default=0) + 1)
    remaining = len(todo)
    while remaining:
        s = skyline.lowest()
        i = unplaced.best_inside(skyline.start[s], skyline.stop[s])
        if i is None:
            # Only reachable with a neighbour: a lone segment spans all time, and fits everything.
            skyline.raise_to_neighbour(s)
            continue
        r = records[i]
        offset = align_up(skyline.height[s], alignment)
        offsets[i] = offset
        skyline.cover(s, r.first_op, r.last_op + 1, offset + r.size)
        unplaced.remove(i)
        remaining -= 1
    return offset_plan(NAME, records, offsets, alignment)
