"""The TFLite GPU delegate's GREEDY_IN_ORDER (Lee et al. 2019, the delegate's rules): records in the
order given (its callers sort them by first task), objects released when their last record has
ended before the current one starts, in order of (last task, object id).

- plan (byte sizes): a record takes the released object closest in size: the smallest at least its
  size (lowest id among equal sizes) unless the largest smaller one (highest id among equal sizes)
  is strictly closer; that one grows to the record's size. A new object only when none is
  released. (greedy_in_order.py is ours: it prefers an object that fits, and takes the better
  plan of the two.)
- plan_extents (2D/3D textures, the OpenGL delegate's choice for them): only released objects
  that cover the tensor in every dimension, the one with the least difference in element count
  (ties: the one released earliest); objects never grow.
"""

from __future__ import annotations

import bisect
import heapq
from math import prod
from typing import Sequence

from packager.plan.objects._common import make_plan
from packager.plan.objects.gpu_extents import ExtentPlan, covers
from packager.plan.records import ObjectPlan, UsageRecord

NAME = "GREEDY_IN_ORDER"


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    assignment = [0] * len(records)
    sizes: list[int] = []
    pool: list[tuple[int, int]] = []  # released (size, object), sorted
    held: list[tuple[int, int]] = []  # heap of (last_op, object)
    for pos, record in enumerate(records):
        while held and held[0][0] < record.first_op:
            _, obj = heapq.heappop(held)
            bisect.insort(pool, (sizes[obj], obj))
        size = record.size
        if pool:
            at = bisect.bisect_left(pool, (size, 0))  # smallest at least `size`
            if at == len(pool) or (at > 0 and size - pool[at - 1][0] < pool[at][0] - size):
                at -= 1  # the largest smaller one is strictly closer (or the only candidate)
            _, obj = pool.pop(at)
            sizes[obj] = max(sizes[obj], size)
        else:
            obj = len(sizes)
            sizes.append(size)
        assignment[pos] = obj
        heapq.heappush(held, (record.last_op, obj))
    return make_plan(NAME, assignment, sizes)


def plan_extents(records: Sequence[UsageRecord], extents: Sequence[tuple[int, ...]]) -> ExtentPlan:
    assignment = [0] * len(records)
    objects: list[tuple[int, ...]] = []
    pool: list[int] = []  # released objects, in the order released
    held: list[tuple[int, int]] = []
    for pos, (record, extent) in enumerate(zip(records, extents)):
        extent = tuple(extent)
        while held and held[0][0] < record.first_op:
            pool.append(heapq.heappop(held)[1])
        fitting = [(abs(prod(objects[obj]) - prod(extent)), k) for k, obj in enumerate(pool)
                   if covers(objects[obj], extent)]
        if fitting:
            obj = pool.pop(min(fitting)[1])
        else:
            obj = len(objects)
            objects.append(extent)
        assignment[pos] = obj
        heapq.heappush(held, (record.last_op, obj))
    return ExtentPlan(NAME, tuple(assignment), tuple(objects))
