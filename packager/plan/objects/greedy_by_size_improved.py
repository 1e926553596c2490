"""Greedy by size, improved (Pisarchyk & Lee 2020; TFLite GPU's greedy_by_size_assignment.cc,
GreedyBySizeDistPriorityAssignment).

The positional maxima split the records into stages, largest first: stage k holds the sizes in
(maxima[k+1], maxima[k]] (the last stage also takes every size below the last maximum). In a plan
that meets the lower bound (object k of size maxima[k]) a stage-k record can only use objects
0..k. Cutting the stages at [maxima[k], maxima[k-1]) instead came out 0.1 to 1.3 percentage
points further above the bound on random records.

Inside a stage, repeatedly take the (record, object) pair with the smallest gap in time between
the record and the object's nearest member, over the stage's unassigned records and the objects
compatible with them (no member alive at the same time); the object grows to the record's size.
Once no pair is left, the first unassigned record of the stage gets a new object. Ties: larger
record, then earlier position, then lower object id.

This is what runs below FAST_FROM records (every real model; at 1,000 records up to about 0.2 s).
From FAST_FROM on, the same pairs in the same order come from greedy_by_size_improved_fast.py,
which finds each pair near n log n instead of scanning the stage (100,000 records in under a
second).
"""

from __future__ import annotations

import bisect
from typing import Sequence

from packager.plan.objects import _common, greedy_by_size_improved_fast
from packager.plan.objects._common import by_size_desc, make_plan
from packager.plan.records import ObjectPlan, UsageRecord, positional_maxima

NAME = "greedy_by_size_improved"


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    if len(records) >= _common.FAST_FROM:
        return greedy_by_size_improved_fast.plan(records)
    members: list[list[UsageRecord]] = []  # the records of each object
    assignment = [-1] * len(records)
    for stage in stages(records):
        waiting = list(stage)  # largest first: a record's place here is its rank in the ties
        # gaps[pos][obj]: time between record pos and object obj's nearest member, for the
        # objects compatible with it; nearest[pos]: the least (gap, obj) of them, or None.
        gaps = {pos: {} for pos in waiting}
        for obj, chain in enumerate(members):
            for pos in waiting:
                gap = _gap_to_object(records[pos], chain)
                if gap is not None:
                    gaps[pos][obj] = gap
        nearest = {pos: _least(gaps[pos]) for pos in waiting}
        while waiting:
            pairs = [(nearest[pos][0], k, nearest[pos][1]) for k, pos in enumerate(waiting)
                     if nearest[pos] is not None]
            if pairs:
                _, k, obj = min(pairs)
            else:  # no compatible object left for any record of the stage
                k, obj = 0, len(members)
                members.append([])
            pos = waiting.pop(k)
            chosen = records[pos]
            assignment[pos] = obj
            members[obj].append(chosen)
            for other in waiting:  # the object's new member changes its gaps to the others
                gap = _gap(records[other], chosen)
                if gap is None:  # alive together: the object is no longer compatible
                    gaps[other].pop(obj, None)
                    if nearest[other] is not None and nearest[other][1] == obj:
                        nearest[other] = _least(gaps[other])
                elif obj in gaps[other] or len(members[obj]) == 1:  # nearer, or a new object
                    gaps[other][obj] = min(gap, gaps[other].get(obj, gap))
                    if nearest[other] is None or (gap, obj) < nearest[other]:
                        nearest[other] = (gap, obj)
    sizes = [max(r.size for r in chain) for chain in members]
    return make_plan(NAME, assignment, sizes)


def stages(records: Sequence[UsageRecord]) -> list[list[int]]:
    """Record positions by stage, each stage largest first (ties: earlier position)."""
    descending = [-m for m in positional_maxima(records)]  # ascending, for bisect
    out: list[list[int]] = [[] for _ in descending]
    for pos in by_size_desc(records):
        # the last maximum at least this size; every size is at most maxima[0]
        out[bisect.bisect_right(descending, -records[pos].size) - 1].append(pos)
    return [stage for stage in out if stage]


def _gap(a: UsageRecord, b: UsageRecord) -> int | None:
    """Operators between the two records' lifetimes, or None when they are alive together."""
    if a.last_op < b.first_op:
        return b.first_op - a.last_op
    if b.last_op < a.first_op:
        return a.first_op - b.last_op
    return None


def _gap_to_object(record: UsageRecord, chain: list[UsageRecord]) -> int | None:
    """The gap to the nearest member of an object, or None when some member is alive with it."""
    gaps = [_gap(record, member) for member in chain]
    return None if None in gaps else min(gaps)


def _least(gaps: dict[int, int]) -> tuple[int, int] | None:
    """The least (gap, object) of a record's compatible objects, or None when there is none."""
    return min(((gap, obj) for obj, gap in gaps.items()), default=None)
