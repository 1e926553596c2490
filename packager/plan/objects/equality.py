"""Equality: sweep the records in order of first_op; a record reuses a released object only if the
object has exactly its size, else it gets a new one. Ties: the lowest released object id."""

from __future__ import annotations

import heapq
from typing import Sequence

from packager.plan.objects._common import by_first_op, make_plan
from packager.plan.records import ObjectPlan, UsageRecord

NAME = "equality"


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    assignment = [0] * len(records)
    sizes: list[int] = []
    released_by_size: dict[int, list[int]] = {}  # size -> heap of released object ids
    # The objects held, each as one int last_op * stride + object in a heap: it orders as
    # (last_op, object), so they are released in that order.
    stride = len(records) + 1
    held: list[int] = []
    push, pop = heapq.heappush, heapq.heappop
    for pos in by_first_op(records):
        record = records[pos]
        released_before = record.first_op * stride
        while held and held[0] < released_before:
            obj = pop(held) % stride
            push(released_by_size.setdefault(sizes[obj], []), obj)
        same_size = released_by_size.get(record.size)
        if same_size:
            obj = pop(same_size)
        else:
            obj = len(sizes)
            sizes.append(record.size)
        assignment[pos] = obj
        push(held, record.last_op * stride + obj)
    return make_plan(NAME, assignment, sizes)
