"""Greedy by size (named after the paper's, Pisarchyk & Lee 2020: records largest first; not the TFLite
GPU delegate's GREEDY_BY_SIZE, which is the paper's improved form, greedy_by_size_improved here):
records largest first (ties: earlier position); each goes to the best compatible object (one
holding no record alive at the same time), else to a new object. Alone it was larger than the
delegate's GREEDY_BY_SIZE on 47 of the 66 inputs of benchmarks/bench_gpu_delegate.py (up to 36%),
so the strategy (registry.no_larger_than_delegate) keeps the delegate's plan where smaller.

Objects are created in order of non-increasing size and never grow, so every existing object is at
least as large as the record, and the best one (the smallest) is the newest compatible object;
between objects of equal size that also prefers the newest. The busy objects come as a bitset from
conflicts.conflict_index (a scan of the records placed, or its fast forms from FAST_FROM records:
100,000 short-lived records in about 0.1 s).
"""

from __future__ import annotations

from typing import Sequence

from packager.plan.objects._common import by_size_desc, make_plan
from packager.plan.objects.conflicts import conflict_index
from packager.plan.records import ObjectPlan, UsageRecord

NAME = "greedy_by_size"


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    assignment = [0] * len(records)
    sizes: list[int] = []
    index = conflict_index(records)
    every_object = 0  # bitset of all object ids
    for pos in by_size_desc(records):
        compatible = every_object ^ index.busy(pos)  # busy objects are a subset of all
        if compatible:
            obj = compatible.bit_length() - 1
        else:
            obj = len(sizes)
            sizes.append(records[pos].size)
            every_object |= 1 << obj
        assignment[pos] = obj
        index.add(obj, pos)
    return make_plan(NAME, assignment, sizes)
