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
    # The walk of the closest fit runs here, once per record, over the objects' lists (which
    # change in place): the smallest free object of at least the record's size, else the largest
    # free one below it, else none; the lowest id among objects of one size. It passes over a
    # size only when every object of it is busy, so a walk is no longer than the busy objects.
    distinct, of_size, object_sizes = objects.distinct, objects.of_size, objects.sizes
    busy_at, hold, bisect_left = index.busy, index.add, bisect.bisect_left
    sizes = [r.size for r in records]
    for pos in breadth_first_order(records):
        size = sizes[pos]
        free = objects.every & ~busy_at(pos)
        obj = -1
        if free:
            k = bisect_left(distinct, size)
            for bits in of_size[k:]:
                bits &= free
                if bits:
                    obj = (bits & -bits).bit_length() - 1
                    break
            else:
                for i in range(k - 1, -1, -1):
                    bits = of_size[i] & free
                    if bits:
                        obj = (bits & -bits).bit_length() - 1
                        break
        if obj < 0:
            obj = objects.new(size)
        elif object_sizes[obj] < size:
            objects.grow(obj, size)
        assignment[pos] = obj
        hold(obj, pos)
    return make_plan(NAME, assignment, object_sizes)


class _Objects:
    """The objects and their sizes, with a bitset of the objects of each size (bit k = object k),
    so that the closest fit walks sizes, not objects."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.every = 0  # bitset of all objects
        self.distinct: list[int] = []  # the distinct sizes, ascending
        self.of_size: list[int] = []  # the bitset of the objects of each of them

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
