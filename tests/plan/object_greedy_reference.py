"""The shared-object greedy strategies (by size, by breadth, by size improved) as they were
written first: a conflict index of segment trees over bitsets for every record, and each object's
members in sorted lists. Kept as the reference the faster forms in packager.plan.objects must
match plan for plan (tests/plan/test_object_greedy_reference.py)."""

from __future__ import annotations

import bisect
import heapq
from typing import Sequence

import numpy as np

from packager.plan.objects._common import make_plan
from packager.plan.records import (ObjectPlan, UsageRecord, breadth_first_order, positional_maxima,
                                   time_columns)


def by_size_desc(records: Sequence[UsageRecord]) -> list[int]:
    """Record positions, largest first (ties: earlier position)."""
    cols = time_columns(records) if len(records) > 64 else None
    if cols is not None:  # the same order by one stable vector sort
        return np.argsort(-cols.size, kind="stable").tolist()
    return sorted(range(len(records)), key=lambda i: (-records[i].size, i))


# Leaves of the index's trees are capped so that their bitsets stay near this many bits.
_TREE_BUDGET_BITS = 1 << 29
_MIN_LEAVES = 256


class ConflictIndex:
    """Which objects already hold a record alive somewhere in the interval of a given record.

    Strategies that assign records out of time order (by size, by breadth) ask this for every
    record, so it must not scan the objects. Objects are bits of Python ints; two segment trees run
    over the distinct operator indices of the records: `starts` (objects with a member starting in
    a node's range) and `covers` (objects with a member covering a node's whole range, marked on the
    canonical nodes only). A member meets [first, last] iff it starts inside it or is alive at
    `first`: one range OR plus one leaf-to-root path. When there are too many distinct operator
    indices for the trees to fit the bit budget, a leaf becomes a bucket of consecutive indices and
    the members that only partly cover a bucket are listed in it and checked one by one.
    """

    def __init__(self, records: Sequence[UsageRecord]) -> None:
        coords = sorted({r.first_op for r in records} | {r.last_op for r in records})
        rank = {c: i for i, c in enumerate(coords)}
        self._lo = [rank[r.first_op] for r in records]
        self._hi = [rank[r.last_op] for r in records]
        self._n_coords = len(coords)
        # A plan needs at least as many objects as the peak overlap: the guess of the bitset width.
        expected_objects = max(1, _peak_overlap(self._lo, self._hi, self._n_coords))
        max_leaves = max(_MIN_LEAVES, _TREE_BUDGET_BITS // (4 * expected_objects))
        self._width = max(1, -(-self._n_coords // max_leaves))  # operator indices per leaf
        n_leaves = max(1, -(-self._n_coords // self._width))
        self._base = 1 << (n_leaves - 1).bit_length()
        self._starts = [0] * (2 * self._base)
        self._covers = [0] * (2 * self._base)
        bucketed_leaves = n_leaves if self._width > 1 else 0
        self._start_lists: list[list[tuple[int, int]]] = [[] for _ in range(bucketed_leaves)]
        self._partials: list[list[tuple[int, int, int]]] = [[] for _ in range(bucketed_leaves)]
        if self._width == 1:  # a leaf per operator index: the short forms of add and busy
            self.__class__ = _PerIndexLeaves

    def add(self, obj: int, pos: int) -> None:
        """Object `obj` now holds record `pos`."""
        bit = 1 << obj
        lo, hi = self._lo[pos], self._hi[pos]
        first_leaf, last_leaf = lo // self._width, hi // self._width
        starts = self._starts
        node = first_leaf + self._base
        while node:
            starts[node] |= bit
            node >>= 1
        full_from, full_to = self._full_leaves(lo, hi)
        if self._width > 1:
            self._start_lists[first_leaf].append((lo, bit))
            if full_from > first_leaf:
                self._partials[first_leaf].append((lo, hi, bit))
            if full_to < last_leaf and (last_leaf != first_leaf or full_from == first_leaf):
                self._partials[last_leaf].append((lo, hi, bit))
        _mark_range(self._covers, full_from + self._base, full_to + self._base + 1, bit)

    def busy(self, pos: int) -> int:
        """Bitset of the objects holding a record that conflicts with record `pos`."""
        lo, hi = self._lo[pos], self._hi[pos]
        first_leaf, last_leaf = lo // self._width, hi // self._width
        result = 0
        covers = self._covers
        node = first_leaf + self._base
        while node:
            if covers[node]:  # an empty node would only copy `result`
                result |= covers[node]
            node >>= 1
        full_from, full_to = self._full_leaves(lo, hi)
        if self._width > 1:
            for m_lo, m_hi, bit in self._partials[first_leaf]:
                if m_lo <= lo <= m_hi:
                    result |= bit
            for leaf in {first_leaf, last_leaf}:
                if not full_from <= leaf <= full_to:
                    for m_lo, bit in self._start_lists[leaf]:
                        if lo <= m_lo <= hi:
                            result |= bit
        return result | _range_union(self._starts, full_from + self._base, full_to + self._base + 1)

    def _full_leaves(self, lo: int, hi: int) -> tuple[int, int]:
        """The leaves whose every operator index lies in [lo, hi] (an empty range when none)."""
        width = self._width
        first_leaf, last_leaf = lo // width, hi // width
        full_from = first_leaf if lo == first_leaf * width else first_leaf + 1
        last_end = min(last_leaf * width + width, self._n_coords) - 1
        full_to = last_leaf if hi == last_end else last_leaf - 1
        return full_from, full_to


class _PerIndexLeaves(ConflictIndex):
    """A ConflictIndex whose every leaf is one operator index (no buckets: every leaf in a
    record's range is full): add and busy without the bucket steps, the same bits."""

    def add(self, obj: int, pos: int) -> None:
        """Object `obj` now holds record `pos`."""
        bit = 1 << obj
        base = self._base
        left, right = self._lo[pos] + base, self._hi[pos] + base + 1
        starts = self._starts
        node = left
        while node:
            starts[node] |= bit
            node >>= 1
        _mark_range(self._covers, left, right, bit)

    def busy(self, pos: int) -> int:
        """Bitset of the objects holding a record that conflicts with record `pos`."""
        base = self._base
        left, right = self._lo[pos] + base, self._hi[pos] + base + 1
        covers = self._covers
        result = 0
        node = left
        while node:
            if covers[node]:
                result |= covers[node]
            node >>= 1
        return result | _range_union(self._starts, left, right)


def _mark_range(tree: list[int], left: int, right: int, bit: int) -> None:
    """OR `bit` into the canonical nodes of the leaves [left, right) (node numbers)."""
    while left < right:
        if left & 1:
            tree[left] |= bit
            left += 1
        if right & 1:
            right -= 1
            tree[right] |= bit
        left >>= 1
        right >>= 1


def _range_union(tree: list[int], left: int, right: int) -> int:
    """The OR of the canonical nodes of the leaves [left, right) (node numbers)."""
    result = 0
    while left < right:
        if left & 1:
            result |= tree[left]
            left += 1
        if right & 1:
            right -= 1
            result |= tree[right]
        left >>= 1
        right >>= 1
    return result


def _peak_overlap(lo: Sequence[int], hi: Sequence[int], n_coords: int) -> int:
    delta = [0] * (n_coords + 1)
    for a, b in zip(lo, hi):
        delta[a] += 1
        delta[b + 1] -= 1
    peak = running = 0
    for d in delta:
        running += d
        peak = max(peak, running)
    return peak


# ---------------------------------------------------------------- greedy by size


def greedy_by_size(records: Sequence[UsageRecord]) -> ObjectPlan:
    assignment = [0] * len(records)
    sizes: list[int] = []
    index = ConflictIndex(records)
    every_object = 0  # bitset of all object ids
    for pos in by_size_desc(records):
        compatible = every_object ^ index.busy(pos)  # busy objects are a subset of all
        if compatible:
            obj = compatible.bit_length() - 1
        else:
            obj = len(sizes)
            sizes.append(records[pos].size)
            every_object |= 1 << obj
        assignment[pos] = obj
        index.add(obj, pos)
    return make_plan("greedy_by_size", assignment, sizes)


# ---------------------------------------------------------------- greedy by breadth


def greedy_by_breadth(records: Sequence[UsageRecord]) -> ObjectPlan:
    index = ConflictIndex(records)
    assignment = [0] * len(records)
    objects = _BreadthObjects()
    for pos in breadth_first_order(records):
        size = records[pos].size
        obj = objects.closest_fit(index.busy(pos), size)
        if obj < 0:
            obj = objects.new(size)
        else:
            objects.grow(obj, size)
        assignment[pos] = obj
        index.add(obj, pos)
    return make_plan("greedy_by_breadth", assignment, objects.sizes)


class _BreadthObjects:
    """The objects and their sizes, with a bitset of the objects of each size (bit k = object k),
    so that the closest fit walks sizes, not objects: it passes over a size only when every
    object of it is busy, so a walk is no longer than the busy objects."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self._every = 0  # bitset of all objects
        self._of_size: dict[int, int] = {}
        self._distinct: list[int] = []  # the sizes of _of_size, ascending

    def closest_fit(self, busy: int, size: int) -> int:
        """The smallest object of at least `size` not in `busy`, else the largest one below it,
        else -1; the lowest id among objects of one size."""
        free = self._every & ~busy
        if not free:
            return -1
        of_size, distinct = self._of_size, self._distinct
        k = bisect.bisect_left(distinct, size)
        for s in distinct[k:]:
            bits = of_size[s] & free
            if bits:
                return (bits & -bits).bit_length() - 1
        for s in reversed(distinct[:k]):
            bits = of_size[s] & free
            if bits:
                return (bits & -bits).bit_length() - 1
        return -1

    def new(self, size: int) -> int:
        obj = len(self.sizes)
        self.sizes.append(0)
        self._every |= 1 << obj
        self._enter(obj, size)
        return obj

    def grow(self, obj: int, size: int) -> None:
        """Object `obj` now holds a record of `size` bytes: it grows to it if smaller."""
        old = self.sizes[obj]
        if old >= size:
            return
        bits = self._of_size[old] & ~(1 << obj)
        if bits:
            self._of_size[old] = bits
        else:
            del self._of_size[old]
            del self._distinct[bisect.bisect_left(self._distinct, old)]
        self._enter(obj, size)

    def _enter(self, obj: int, size: int) -> None:
        self.sizes[obj] = size
        if size not in self._of_size:
            self._of_size[size] = 0
            bisect.insort(self._distinct, size)
        self._of_size[size] |= 1 << obj


# ---------------------------------------------------------------- greedy by size improved


_LEFT, _RIGHT = 0, 1


def greedy_by_size_improved(records: Sequence[UsageRecord]) -> ObjectPlan:
    objects = _Objects()
    assignment = [-1] * len(records)
    for stage in _stages(records):
        _fill_stage(records, stage, objects, assignment)
    return make_plan("greedy_by_size_improved", assignment, objects.sizes)


def _stages(records: Sequence[UsageRecord]) -> list[list[int]]:
    """Record positions by stage, each stage largest first (ties: earlier position)."""
    descending = [-m for m in positional_maxima(records)]  # ascending, for bisect
    stages: list[list[int]] = [[] for _ in range(len(descending))]
    for pos in by_size_desc(records):
        # the last maximum at least this size; every size is at most maxima[0]
        stages[bisect.bisect_right(descending, -records[pos].size) - 1].append(pos)
    return [s for s in stages if s]


class _Objects:
    """The objects built so far: sizes and, per object, its members' first and last operators,
    sorted (members of one object never overlap)."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.firsts: list[list[int]] = []
        self.lasts: list[list[int]] = []

    def add(self, obj: int, first: int, last: int, size: int) -> int:
        """[first, last] joins object `obj` (obj == len(sizes) opens one); its index in the object."""
        if obj == len(self.sizes):
            self.sizes.append(size)
            self.firsts.append([])
            self.lasts.append([])
        self.sizes[obj] = max(self.sizes[obj], size)
        at = bisect.bisect_right(self.firsts[obj], first)
        self.firsts[obj].insert(at, first)
        self.lasts[obj].insert(at, last)
        return at

    def slot(self, obj: int, at: int, side: int) -> tuple[int, int] | None:
        """The open interval of operators free on `side` of member `at` of `obj`, bounded by the
        member itself and its neighbour (-1 / _END past the ends); None if `at` is gone."""
        firsts, lasts = self.firsts[obj], self.lasts[obj]
        if side == _LEFT:
            return (lasts[at - 1] if at else -1), firsts[at]
        return lasts[at], (firsts[at + 1] if at + 1 < len(firsts) else _END)


_END = 1 << 62  # past every operator


class _Stage:
    """The waiting records of one stage, sorted by first operator (ties: stage order) and by last
    operator (ties: stage order, reversed), with pointer jumping over the records already taken."""

    def __init__(self, first: list[int], last: list[int]) -> None:
        n = len(first)
        self.first, self.last = first, last
        if n > 64:  # the same orders by vector sorts
            self.by_first = np.argsort(np.asarray(first, np.int64), kind="stable").tolist()
            self.by_last = np.lexsort((-np.arange(n), np.asarray(last, np.int64))).tolist()
        else:
            self.by_first = sorted(range(n), key=lambda k: (first[k], k))
            self.by_last = sorted(range(n), key=lambda k: (last[k], -k))
        self.firsts = [first[k] for k in self.by_first]
        self.lasts = [last[k] for k in self.by_last]
        self.at_first = [0] * n
        for i, k in enumerate(self.by_first):
            self.at_first[k] = i
        self.at_last = [0] * n
        for i, k in enumerate(self.by_last):
            self.at_last[k] = i
        self.next = list(range(n + 1))  # next[i]: some position >= i still waiting (n: none)
        self.prev = list(range(n + 1))  # prev[i + 1]: some position <= i still waiting (0: none)
        self.waiting = [True] * n
        self.first_waiting = 0  # in stage order

    def take(self, k: int) -> None:
        self.waiting[k] = False
        i = self.at_first[k]
        self.next[i] = i + 1
        j = self.at_last[k]
        self.prev[j + 1] = j
        while self.first_waiting < len(self.waiting) and not self.waiting[self.first_waiting]:
            self.first_waiting += 1

    def _next(self, i: int) -> int:
        nxt = self.next
        root = i
        while nxt[root] != root:
            root = nxt[root]
        while nxt[i] != root:
            nxt[i], i = root, nxt[i]
        return root

    def _prev(self, i: int) -> int:
        """The last waiting position <= i in the by-last order, or -1."""
        prv = self.prev
        root = i + 1
        while prv[root] != root:
            root = prv[root]
        i += 1
        while prv[i] != root:
            prv[i], i = root, prv[i]
        return root - 1 if root else -1

    def right_of(self, end: int, bound: int) -> tuple[int, int] | None:
        """(gap, k): the waiting record starting nearest after `end` that ends before `bound`."""
        i = self._next(bisect.bisect_right(self.firsts, end))
        firsts, by_first, last = self.firsts, self.by_first, self.last
        while i < len(firsts) and firsts[i] < bound:
            k = by_first[i]
            if last[k] < bound:
                return firsts[i] - end, k
            i = self._next(i + 1)
        return None

    def left_of(self, start: int, bound: int) -> tuple[int, int] | None:
        """(gap, k): the waiting record ending nearest before `start` that starts after `bound`."""
        i = self._prev(bisect.bisect_left(self.lasts, start) - 1)
        lasts, by_last, first = self.lasts, self.by_last, self.first
        while i >= 0 and lasts[i] > bound:
            k = by_last[i]
            if first[k] > bound:
                return start - lasts[i], k
            i = self._prev(i - 1)
        return None


def _fill_stage(records: Sequence[UsageRecord], stage: list[int], objects: _Objects,
                assignment: list[int]) -> None:
    first = [records[p].first_op for p in stage]
    last = [records[p].last_op for p in stage]
    waiting = _Stage(first, last)
    heap: list[tuple[int, int, int, int, int]] = []  # (gap, k, object, member's first op, side)

    def push_side(obj: int, at: int, side: int) -> None:
        lo, hi = objects.slot(obj, at, side)
        found = waiting.left_of(hi, lo) if side == _LEFT else waiting.right_of(lo, hi)
        if found is not None:
            member = objects.firsts[obj][at]
            heapq.heappush(heap, (found[0], found[1], obj, member, side))

    for obj in range(len(objects.sizes)):
        for at in range(len(objects.firsts[obj])):
            push_side(obj, at, _LEFT)
            push_side(obj, at, _RIGHT)
    for _ in range(len(stage)):
        while heap:
            gap, k, obj, member, side = heap[0]
            at = bisect.bisect_left(objects.firsts[obj], member)
            lo, hi = objects.slot(obj, at, side)
            now = waiting.left_of(hi, lo) if side == _LEFT else waiting.right_of(lo, hi)
            if now == (gap, k):
                break
            # Out of date (its record taken, or its slot shrunk): the side's candidate now.
            if now is None:
                heapq.heappop(heap)
            else:
                heapq.heapreplace(heap, (now[0], now[1], obj, member, side))
        if heap:
            _, k, obj, _, _ = heapq.heappop(heap)
        else:  # no pair left: a new object for the first waiting record
            k, obj = waiting.first_waiting, len(objects.sizes)
        pos = stage[k]
        assignment[pos] = obj
        waiting.take(k)
        at = objects.add(obj, first[k], last[k], records[pos].size)
        push_side(obj, at, _LEFT)
        push_side(obj, at, _RIGHT)
