"""Greedy by breadth: visit the operators by breadth (the sum of the sizes alive at it), largest
first (ties: earlier operator); at each, take its unassigned records largest first (ties: earlier
position) and give each the smallest compatible object at least its size, else the largest
compatible smaller one (which grows to the record's size), else a new object. Compatible: holding
no record alive at the same time as this one. Ties between objects: the lowest id.

Only operators where a record starts are visited: the records alive at any other operator are all
alive at the last start before it, which is at least as broad and comes first.

The busy objects come from one bitset per step where some record ends when the records are
short-lived (as in real models), else from a ConflictIndex: the same bitsets either way.
"""

from __future__ import annotations

import bisect
from typing import Sequence

from packager.plan.objects._common import conflict_index, make_plan
from packager.plan.records import ObjectPlan, UsageRecord, breadth_first_order

NAME = "greedy_by_breadth"


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    index = conflict_index(records)
    assignment = [0] * len(records)
    objects = _Objects()
    sizes = [r.size for r in records]
    for pos in breadth_first_order(records):
        size = sizes[pos]
        obj = objects.closest_fit(index.busy(pos), size)
        if obj < 0:
            obj = objects.new(size)
        elif objects.sizes[obj] < size:
            objects.grow(obj, size)
        assignment[pos] = obj
        index.add(obj, pos)
    return make_plan(NAME, assignment, objects.sizes)


class _Objects:
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
