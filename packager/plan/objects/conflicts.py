"""Which objects hold a record alive at the same time as a given one: what greedy by size, greedy
by breadth and texture_2d ask for every record, as a bitset (bit k = object k).

`conflict_index` gives, below FAST_FROM records, MemberScan: the definition, a scan of every record
placed so far. From FAST_FROM on, the same bitsets come without the scan: from one bitset per step
where some record ends when the records are short-lived (StepConflicts: a few steps per record in
real shapes; 100,000 records in about 0.1 s), else from two segment trees over the records'
operator indices (ConflictIndex: 100,000 random, heavily overlapping records in seconds). Tests
hold both to MemberScan.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from packager.plan.objects import _common
from packager.plan.records import Records, UsageRecord


def conflict_index(records: Sequence[UsageRecord]) -> "MemberScan | StepConflicts | ConflictIndex":
    """The index that suits the records; the same answers whichever it is."""
    if len(records) < _common.FAST_FROM:
        return MemberScan(records)
    steps = step_intervals(records)
    return ConflictIndex(records) if steps is None else StepConflicts(*steps)


class MemberScan:
    """The objects holding a record alive at the same time as record `pos`, by a scan of every
    record placed so far."""

    def __init__(self, records: Sequence[UsageRecord]) -> None:
        self._records = records
        self._placed: list[tuple[int, UsageRecord]] = []  # (bit of its object, record)

    def add(self, obj: int, pos: int) -> None:
        """Object `obj` now holds record `pos`."""
        self._placed.append((1 << obj, self._records[pos]))

    def busy(self, pos: int) -> int:
        """Bitset of the objects holding a record that conflicts with record `pos`."""
        record, busy = self._records[pos], 0
        for bit, member in self._placed:
            if member.first_op <= record.last_op and record.first_op <= member.last_op:
                busy |= bit
        return busy


def bits_to_mask(bits: int, count: int) -> np.ndarray:
    """Bitset over object ids (bit k = object k) -> boolean array of `count` entries."""
    raw = np.frombuffer(bits.to_bytes((count + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, count=count, bitorder="little").astype(bool)


# Leaves of the index's trees are capped so that their bitsets stay near this many bits.
_TREE_BUDGET_BITS = 1 << 29
_MIN_LEAVES = 256


# Below this many steps (where some record ends) per record on average, the strategies keep one
# bitset of busy objects per such step and OR a record's steps one by one (a few per record in
# real models) instead of walking the ConflictIndex's trees (about forty nodes per record at
# 100,000 records): the same bitsets, so the same plans. Above it (long-lived records), the
# trees' log bound wins.
_STEPS_PER_RECORD = 16


def step_intervals(records: Sequence[UsageRecord]) -> tuple[list[int], list[int], int] | None:
    """Each record's interval on the timeline of the dense steps where some record ends (first,
    and past the last) and that timeline's length, or None when the records are too long-lived for
    per-step bitsets (or there are none). Two records conflict iff they are alive together at the
    earlier of their last steps, a step where a record ends: iff their intervals here meet. The
    other steps only repeat what a later step knows, so the bitsets skip them."""
    if not records:
        return None
    cols = Records.of(records)
    ends = np.zeros(cols.steps, dtype=bool)
    ends[cols.dense_last] = True
    ends_so_far = np.cumsum(ends)
    lo = ends_so_far[cols.dense_first] - ends[cols.dense_first]  # the first end step not before
    hi = ends_so_far[cols.dense_last] - 1
    if int((hi - lo).sum()) + len(records) > _STEPS_PER_RECORD * len(records):
        return None
    return lo.tolist(), (hi + 1).tolist(), int(ends_so_far[-1])


class StepConflicts:
    """ConflictIndex's answers from one bitset of busy objects per step of `step_intervals`: a
    short-lived record ORs its few steps instead of walking two trees."""

    def __init__(self, lo: list[int], end: list[int], n_steps: int) -> None:
        self._lo, self._end, self._held = lo, end, [0] * n_steps

    def busy(self, pos: int) -> int:
        busy = 0
        for bits in self._held[self._lo[pos]:self._end[pos]]:
            busy |= bits
        return busy

    def add(self, obj: int, pos: int) -> None:
        bit, held = 1 << obj, self._held
        for step in range(self._lo[pos], self._end[pos]):
            held[step] |= bit


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
        cols = Records.of(records) if len(records) > 64 else None
        if cols is not None:  # the same ranks and peak by vector operations
            coords = np.unique(np.concatenate((cols.first, cols.last)))
            lo, hi = np.searchsorted(coords, cols.first), np.searchsorted(coords, cols.last)
            self._lo, self._hi, self._n_coords = lo.tolist(), hi.tolist(), len(coords)
            alive = np.cumsum(np.bincount(lo, minlength=len(coords) + 1)
                              - np.bincount(hi + 1, minlength=len(coords) + 1))
            peak = int(alive.max())
        else:
            coords = sorted({r.first_op for r in records} | {r.last_op for r in records})
            rank = {c: i for i, c in enumerate(coords)}
            self._lo = [rank[r.first_op] for r in records]
            self._hi = [rank[r.last_op] for r in records]
            self._n_coords = len(coords)
            peak = _peak_overlap(self._lo, self._hi, self._n_coords)
        # A plan needs at least as many objects as the peak overlap: the guess of the bitset width.
        expected_objects = max(1, peak)
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
