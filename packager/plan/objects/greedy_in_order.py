"""Greedy in order (Lee et al. 2019): sweep the records in order of first_op; objects whose record
has ended return to a pool; a record takes the pool object closest in size: the smallest one at
least its size, else the largest smaller one, which grows to the record's size; a new object only
when the pool is empty. Ties: the lowest object id.

The pool is a sorted list searched by bisection, so 100,000 records take about a second.
"""

from __future__ import annotations

import bisect
from typing import Sequence

from packager.plan.objects._common import Holders, by_first_op, make_plan
from packager.plan.records import ObjectPlan, UsageRecord

NAME = "greedy_in_order"


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    assignment = [0] * len(records)
    sizes: list[int] = []
    # Released objects as keys size * stride + id: one int per entry sorts by (size, id) and
    # compares faster than tuples.
    stride = len(records) + 1
    pool: list[int] = []
    holders = Holders()
    for pos in by_first_op(records):
        record = records[pos]
        for obj in holders.release_before(record.first_op):
            bisect.insort(pool, sizes[obj] * stride + obj)
        if pool:
            at = bisect.bisect_left(pool, record.size * stride)
            if at == len(pool):  # none is large enough: the largest one (lowest id) grows
                at = bisect.bisect_left(pool, pool[-1] // stride * stride)
            obj = pool.pop(at) % stride
            sizes[obj] = max(sizes[obj], record.size)
        else:
            obj = len(sizes)
            sizes.append(record.size)
        assignment[pos] = obj
        holders.hold(obj, record.last_op)
    return make_plan(NAME, assignment, sizes)
