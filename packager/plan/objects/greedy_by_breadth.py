"""Greedy by breadth: visit the operators by breadth (the sum of the sizes alive at it), largest
first (ties: earlier operator); at each, take its unassigned records largest first (ties: earlier
position) and give each the smallest compatible object at least its size, else the largest
compatible smaller one (which grows to the record's size), else a new object. Compatible: holding
no record alive at the same time as this one. Ties between objects: the lowest id.

Only operators where a record starts are visited: the records alive at any other operator are all
alive at the last start before it, which is at least as broad and comes first.

The busy objects come as a bitset from conflicts.conflict_index (a scan of the records placed, or
its fast forms from FAST_FROM records).
"""

from __future__ import annotations

import bisect
from typing import Sequence

from packager.plan.objects._common import make_plan
from packager.plan.objects.conflicts import conflict_index
from packager.plan.records import ObjectPlan, UsageRecord, breadth_first_order

NAME = "greedy_by_breadth"


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    index = conflict_index(records)
    assignment = [0] * len(records)
    objects = _Objects()
    for pos in breadth_first_order(records):
        size = records[pos].size
        obj = objects.closest_fit(objects.every & ~index.busy(pos), size)
        if obj < 0:
            obj = objects.new(size)
        else:
            objects.grow(obj, size)
        assignment[pos] = obj
        index.add(obj, pos)
    return make_plan(NAME, assignment, objects.sizes)


class _Objects:
    """The objects and their sizes, with a bitset of the objects of each size (bit k = object k),
    so that the closest fit walks sizes, not objects."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.every = 0  # bitset of all objects
        self.distinct: list[int] = []  # the distinct sizes, ascending
        self.of_size: list[int] = []  # the bitset of the objects of each of them

    def closest_fit(self, free: int, size: int) -> int:
        """Among the objects in the bitset `free`: the smallest of at least `size`, else the
        largest below it, else -1; the lowest id among objects of one size. It passes over a size
        only when every object of it is busy, so a walk is no longer than the busy objects."""
        if not free:
            return -1
        of_size = self.of_size
        k = bisect.bisect_left(self.distinct, size)
        for i in range(k, len(of_size)):  # at least `size`, smallest first
            bits = of_size[i] & free
            if bits:
                return (bits & -bits).bit_length() - 1
        for i in range(k - 1, -1, -1):  # smaller, largest first
            bits = of_size[i] & free
            if bits:
                return (bits & -bits).bit_length() - 1
        return -1

    def new(self, size: int) -> int:
        obj = len(self.sizes)
        self.sizes.append(0)
        self.every |= 1 << obj
        self._enter(obj, size)
        return obj

    def grow(self, obj: int, size: int) -> None:
        """Object `obj` now holds a record of `size` bytes: it grows to it if smaller."""
        old = self.sizes[obj]
        if old >= size:
            return
        k = bisect.bisect_left(self.distinct, old)
        bits = self.of_size[k] & ~(1 << obj)
        if bits:
            self.of_size[k] = bits
        else:
            del self.distinct[k], self.of_size[k]
        self._enter(obj, size)

    def _enter(self, obj: int, size: int) -> None:
        self.sizes[obj] = size
        k = bisect.bisect_left(self.distinct, size)
        if k == len(self.distinct) or self.distinct[k] != size:
            self.distinct.insert(k, size)
            self.of_size.insert(k, 0)
        self.of_size[k] |= 1 << obj
