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

import numpy as np

from packager.plan.offsets._gaps import offset_plan
from packager.plan.records import OffsetPlan, UsageRecord, time_columns

NAME = "strip_packing"

# Queries over at most this many first operators scan them directly; wider ones use the tree.
_SCAN = 12


class _Unplaced:
    """The records not placed yet, grouped by first operator, each group best-first:
    longest-lived, then largest, then lowest position.

    A record's rank is one integer, ordered as (-lifetime, -size, position): `key // per_life` is
    `longest - lifetime`, so "lives at most `room` operators" is "key >= (longest - room) *
    per_life", a binary search in its group. A segment tree over the first operators holds each
    group's best key (its head), so a wide query visits groups best head first and stops as soon
    as no head left can beat what it found: a head that does not fit in time is the only reason to
    look further.
    """

    def __init__(self, records: Sequence[UsageRecord], positions: Sequence[int]) -> None:
        cols = time_columns(records)
        in_columns = cols is not None and self._columns(cols, len(records), positions)
        if not in_columns:
            self._lists(records, positions)
        self._leaf = dict(zip(self._firsts, range(len(self._firsts))))
        self.per_size = len(records) + 1  # key % per_size is the record's position
        size = 1
        while size < len(self._firsts):
            size *= 2
        self._size = size
        self._none = none = (self._longest + 1) * self._per_life  # above every key: an empty group
        heads = [group[0] for group in self._groups]
        if in_columns:  # every key fits in int64: the tree's levels by one vector minimum each
            tree_array = np.full(2 * size, none, dtype=np.int64)
            tree_array[size:size + len(heads)] = heads
            width = size
            while width > 1:
                tree_array[width // 2:width] = np.minimum(tree_array[width:2 * width:2],
                                                          tree_array[width + 1:2 * width:2])
                width //= 2
            self._tree = tree_array.tolist()
            return
        tree = [none] * (2 * size)
        tree[size:size + len(heads)] = heads
        for node in range(size - 1, 0, -1):
            tree[node] = min(tree[2 * node], tree[2 * node + 1])
        self._tree = tree

    def _lists(self, records: Sequence[UsageRecord], positions: Sequence[int]) -> None:
        """The groups, by pure Python (any integers)."""
        lifetimes = {i: records[i].last_op - records[i].first_op for i in positions}
        self._longest = max(lifetimes.values(), default=0)
        sizes = sorted({records[i].size for i in positions})
        size_rank = {size: k for k, size in enumerate(sizes)}
        self._per_life = per_life = len(sizes) * (len(records) + 1)
        per_size = len(records) + 1
        groups: dict[int, list[int]] = {}
        for i in positions:
            key = ((self._longest - lifetimes[i]) * per_life
                   + (len(sizes) - 1 - size_rank[records[i].size]) * per_size + i)
            groups.setdefault(records[i].first_op, []).append(key)
        self._firsts = self.firsts = sorted(groups)  # every first operator with records, fixed
        self._groups = [sorted(groups[f]) for f in self._firsts]

    def _columns(self, cols, n: int, positions: Sequence[int]) -> bool:
        """The same groups from the records' int64 columns (one sort instead of a dict of lists);
        False when the keys would not fit in int64."""
        at = np.asarray(positions, dtype=np.int64)
        first, lifetime, size = cols.first[at], (cols.last - cols.first)[at], cols.size[at]
        longest = int(lifetime.max()) if len(at) else 0
        sizes = np.unique(size)
        per_life, per_size = len(sizes) * (n + 1), n + 1
        if (longest + 1) * per_life >= 1 << 62:
            return False
        self._longest, self._per_life = longest, per_life
        keys = ((longest - lifetime) * per_life
                + (len(sizes) - 1 - np.searchsorted(sizes, size)) * per_size + at)
        order = np.lexsort((keys, first))
        first, keys = first[order], keys[order]
        starts = np.flatnonzero(np.concatenate(([True], first[1:] != first[:-1]))) if len(at) else at
        self._firsts = self.firsts = first[starts].tolist()
        keys, bounds = keys.tolist(), starts.tolist() + [len(keys)]
        self._groups = [keys[a:b] for a, b in zip(bounds, bounds[1:])]
        return True

    def best_inside(self, start: int, stop: int) -> int:
        """The key of the best unplaced record living inside operators [start, stop), or -1."""
        firsts = self._firsts
        return self.best_between(bisect.bisect_left(firsts, start), bisect.bisect_left(firsts, stop),
                                 stop)

    def best_between(self, lo: int, hi: int, stop: int) -> int:
        """`best_inside` for the groups lo..hi-1 (those starting inside the segment)."""
        firsts, groups = self._firsts, self._groups
        longest, per_life, none = self._longest, self._per_life, self._none
        best = none
        if hi - lo <= _SCAN:
            for k in range(lo, hi):
                group = groups[k]
                if not group or group[0] >= best:
                    continue
                # The group's first record that lives at most `stop - 1 - first` operators.
                floor = (longest - (stop - 1 - firsts[k])) * per_life
                if group[0] >= floor:
                    best = group[0]
                    continue
                j = bisect.bisect_left(group, floor)
                if j < len(group) and group[j] < best:
                    best = group[j]
            return best if best < none else -1
        tree, size = self._tree, self._size
        span = 2 * size
        lo += size
        hi += size
        frontier: list[int] = []  # key * span + node
        while lo < hi:  # the canonical nodes covering the range
            if lo & 1:
                if tree[lo] < none:
                    frontier.append(tree[lo] * span + lo)
                lo += 1
            if hi & 1:
                hi -= 1
                if tree[hi] < none:
                    frontier.append(tree[hi] * span + hi)
            lo //= 2
            hi //= 2
        heapq.heapify(frontier)
        pop, push = heapq.heappop, heapq.heappush
        while frontier and frontier[0] // span < best:
            node = pop(frontier) % span
            if node < size:
                for child in (2 * node, 2 * node + 1):
                    if tree[child] < best:
                        push(frontier, tree[child] * span + child)
                continue
            k = node - size
            group = groups[k]
            floor = (longest - (stop - 1 - firsts[k])) * per_life
            j = bisect.bisect_left(group, floor)
            if j < len(group) and group[j] < best:
                best = group[j]
        return best if best < none else -1

    def remove(self, key: int, first: int) -> None:
        k = self._leaf[first]
        group = self._groups[k]
        j = bisect.bisect_left(group, key)
        del group[j]
        if j:
            return  # the head is unchanged: so is the tree
        tree = self._tree
        node = k + self._size
        tree[node] = group[0] if group else self._none
        node //= 2
        while node:
            best = min(tree[2 * node], tree[2 * node + 1])
            if tree[node] == best:
                break  # nothing above changes either
            tree[node] = best
            node //= 2


def _first_group_at(firsts: list[int], points: list[int]) -> list[int]:
    """For each boundary point, the first group (by first operator) at or after it."""
    try:
        return np.searchsorted(np.array(firsts, dtype=np.int64), np.array(points, dtype=np.int64)).tolist()
    except OverflowError:  # operator numbers beyond int64
        return [bisect.bisect_left(firsts, t) for t in points]


def _ranks(records: Sequence[UsageRecord], points: list[int]) -> tuple[list[int], list[int]]:
    """Each record's first operator and the operator after its last, as ranks among `points`
    (those of empty records are never read)."""
    cols = time_columns(records)
    if cols is not None and len(points) > 1:
        at = np.array(points, dtype=np.int64)
        return (np.searchsorted(at, cols.first).tolist(),
                np.searchsorted(at, cols.last + 1).tolist())
    rank = {t: k for k, t in enumerate(points)}
    return ([rank.get(r.first_op, 0) for r in records], [rank.get(r.last_op + 1, 0) for r in records])


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    offsets = [0] * len(records)
    todo = [i for i, r in enumerate(records) if r.size > 0]  # empty records stay at 0
    unplaced = _Unplaced(records, todo)
    # Segments only ever begin or end at 0, at a record's first operator or just after its last:
    # the skyline works on those points' ranks (operator numbers may be sparse and huge).
    points = sorted({0, *(records[i].first_op for i in todo), *(records[i].last_op + 1 for i in todo)})
    first_rank, end_rank = _ranks(records, points)
    n_ops = len(points) - 1 if todo else 1  # the rank of the end of time
    if not todo:
        points = [0, 1]
    # The skyline: segments [start, stop) of ranks, each with its height, named by its start
    # (segments never overlap); adjacent segments never have equal heights. The heap holds
    # height * width + start; an entry whose start no longer begins a segment of that height
    # is stale, and dropped when it reaches the top.
    width = n_ops + 1
    begins = [False] * width
    stop_of = [0] * width
    height_of = [0] * width
    left_of = [-1] * width  # the start of the segment to the left, -1 at time 0
    begins[0], stop_of[0] = True, n_ops
    heap = [0]
    push, pop = heapq.heappush, heapq.heappop

    def merge_equal_neighbours(s: int) -> None:
        height, right = height_of[s], stop_of[s]
        if right < n_ops and height_of[right] == height:
            begins[right] = False
            right = stop_of[s] = stop_of[right]
            if right < n_ops:
                left_of[right] = s
        left = left_of[s]
        if left >= 0 and height_of[left] == height:
            begins[s] = False
            stop_of[left] = right
            if right < n_ops:
                left_of[right] = left

    remaining = len(todo)
    sizes = [r.size for r in records]
    best_between, per_size = unplaced.best_between, unplaced.per_size
    groups, firsts = unplaced._groups, unplaced._firsts
    longest, per_life, none = unplaced._longest, unplaced._per_life, unplaced._none
    bisect_left = bisect.bisect_left
    group_at = _first_group_at(unplaced.firsts, points)
    while remaining:
        while True:  # the lowest segment, the leftmost of equal ones
            height, start = divmod(heap[0], width)
            if begins[start] and height_of[start] == height:
                break
            pop(heap)
        stop = stop_of[start]
        lo, hi = group_at[start], group_at[stop]
        if hi - lo <= _SCAN:  # `best_between`'s scan of a few groups, inlined (the common case)
            key = none
            end_op = points[stop] - 1
            for k in range(lo, hi):
                group = groups[k]
                if not group or group[0] >= key:
                    continue
                floor = (longest - (end_op - firsts[k])) * per_life
                if group[0] >= floor:
                    key = group[0]
                    continue
                j = bisect_left(group, floor)
                if j < len(group) and group[j] < key:
                    key = group[j]
            if key == none:
                key = -1
        else:
            key = best_between(lo, hi, points[stop])
        if key < 0:
            # None fits: raise the segment to its lower neighbour and merge. Only reachable with a
            # neighbour: a lone segment spans all time, and fits everything.
            left = left_of[start]
            if left < 0:
                raised = height_of[stop]
            elif stop < n_ops and height_of[stop] < height_of[left]:
                raised = height_of[stop]
            else:
                raised = height_of[left]
            height_of[start] = raised
            push(heap, raised * width + start)
            merge_equal_neighbours(start)
            continue
        i = key % per_size
        first, end = first_rank[i], end_rank[i]
        offset = -(-height // alignment) * alignment if alignment > 1 else height
        offsets[i] = offset
        top = offset + sizes[i]
        # Cover [first, end) of the segment with `top`: what is left of it keeps its height.
        if start < first:
            stop_of[start] = first
            left = start
        else:
            left = left_of[start]
        begins[first], stop_of[first], height_of[first], left_of[first] = True, end, top, left
        push(heap, top * width + first)
        if end < stop:
            begins[end], stop_of[end], height_of[end], left_of[end] = True, stop, height, first
            push(heap, height * width + end)
            if stop < n_ops:
                left_of[stop] = end
        elif stop < n_ops:
            left_of[stop] = first
        merge_equal_neighbours(first)
        unplaced.remove(key, points[first])
        remaining -= 1
    return offset_plan(NAME, records, offsets, alignment)
