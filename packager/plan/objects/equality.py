"""Equality: sweep the records in order of first_op; a record reuses a released object only if the
object has exactly its size, else it gets a new one. Ties: the lowest released object id."""

from __future__ import annotations

import heapq
from typing import Sequence

from packager.plan.objects._common import Holders, by_first_op, make_plan
from packager.plan.records import ObjectPlan, UsageRecord

NAME = "equality"


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    assignment = [0] * len(records)
    sizes: list[int] = []
    released_by_size: dict[int, list[int]] = {}  # size -> heap of released object ids
    holders = Holders()
    for pos in by_first_op(records):
        record = records[pos]
        for obj in holders.release_before(record.first_op):
            heapq.heappush(released_by_size.setdefault(sizes[obj], []), obj)
        same_size = released_by_size.get(record.size)
        if same_size:
            obj = heapq.heappop(same_size)
        else:
            obj = len(sizes)
            sizes.append(record.size)
        assignment[pos] = obj
        holders.hold(obj, record.last_op)
    return make_plan(NAME, assignment, sizes)
