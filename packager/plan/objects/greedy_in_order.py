"""Greedy in order (Lee et al. 2019): sweep the records in order of first_op; objects whose record
has ended return to a pool; a record takes the pool object closest in size: the smallest one at
least its size, else the largest smaller one, which grows to the record's size; a new object only
when the pool is empty. Ties: the lowest object id.

The pool is a sorted list searched by bisection, so 100,000 records take about a second.
"""

from __future__ import annotations

import bisect
import heapq
from typing import Sequence

from packager.plan.objects._common import by_first_op, make_plan
from packager.plan.records import ObjectPlan, UsageRecord

NAME = "greedy_in_order"


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    assignment = [0] * len(records)
    sizes: list[int] = []
    # Released objects as keys size * stride + id: one int per entry sorts by (size, id) and
    # compares faster than tuples. The objects held likewise, in a heap, as last_op * stride + id,
    # which orders as (last_op, id).
    stride = len(records) + 1
    pool: list[int] = []
    held: list[int] = []
    push, pop = heapq.heappush, heapq.heappop
    insort, bisect_left = bisect.insort, bisect.bisect_left
    for pos in by_first_op(records):
        record = records[pos]
        size = record.size
        released_before = record.first_op * stride
        while held and held[0] < released_before:
            obj = pop(held) % stride
            insort(pool, sizes[obj] * stride + obj)
        if pool:
            at = bisect_left(pool, size * stride)
            if at == len(pool):  # none is large enough: the largest one (lowest id) grows
                at = bisect_left(pool, pool[-1] // stride * stride)
            obj = pool.pop(at) % stride
            if sizes[obj] < size:
                sizes[obj] = size
        else:
            obj = len(sizes)
            sizes.append(size)
        assignment[pos] = obj
        push(held, record.last_op * stride + obj)
    return make_plan(NAME, assignment, sizes)
