"""The TFLite GPU delegate's EQUALITY: a record reuses a released object of exactly its size, else
it gets a new one. Records are taken in the order given (the delegate's in-order convention: its
callers pass records sorted by first task; it does not sort them).

Two forms, as the delegate has them:
- plan (byte sizes): objects are released when their last record has ended before the current
  record starts, in order of (last task, object id); the object reused is the one of that size
  released most recently (a stack per size).
- plan_extents (2D/3D texture extents, and the tensor descriptors the OpenCL and Metal delegates
  hand it): the lowest object id whose size is equal and whose latest record ended before this
  one starts. It checks only the latest record, which is enough for any order: an object's
  records are chained one after another in time.
"""

from __future__ import annotations

import heapq
from typing import Sequence

from packager.plan.objects._common import make_plan
from packager.plan.objects.gpu_extents import ExtentPlan
from packager.plan.records import ObjectPlan, UsageRecord

NAME = "EQUALITY"


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    assignment = [0] * len(records)
    sizes: list[int] = []
    released: dict[int, list[int]] = {}  # size -> stack of released object ids, latest last
    held: list[tuple[int, int]] = []  # heap of (last_op, object) of the objects in use
    for pos, record in enumerate(records):
        while held and held[0][0] < record.first_op:
            _, obj = heapq.heappop(held)
            released.setdefault(sizes[obj], []).append(obj)
        stack = released.get(record.size)
        if stack:
            obj = stack.pop()
        else:
            obj = len(sizes)
            sizes.append(record.size)
        assignment[pos] = obj
        heapq.heappush(held, (record.last_op, obj))
    return make_plan(NAME, assignment, sizes)


def plan_extents(records: Sequence[UsageRecord], extents: Sequence[tuple[int, ...]]) -> ExtentPlan:
    assignment = [0] * len(records)
    objects: list[tuple[int, ...]] = []
    ends: list[int] = []  # last_op of each object's latest record
    for pos, (record, extent) in enumerate(zip(records, extents)):
        obj = next((k for k, e in enumerate(objects)
                    if ends[k] < record.first_op and e == extent), len(objects))
        if obj == len(objects):
            objects.append(tuple(extent))
            ends.append(record.last_op)
        else:
            ends[obj] = record.last_op
        assignment[pos] = obj
    return ExtentPlan(NAME, tuple(assignment), tuple(objects))
