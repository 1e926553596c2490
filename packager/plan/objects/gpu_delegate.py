"""The TFLite GPU delegate's memory strategies under the delegate's own names, each reproducing its
plan byte for byte (same object for each record, same sizes, same offsets), records taken in the
order given as the delegate takes them: its callers pass records in the order of their value ids,
and its in-order strategies (EQUALITY, GREEDY_IN_ORDER, MINCOSTFLOW) expect that order to be by
first task. Tests hold every one to the delegate's own code (benchmarks/gpu_delegate_oracle.py).

NAIVE and GREEDY_BY_BREADTH are our naive.py and greedy_by_breadth.py, which make the delegate's
plans already. GREEDY_BEST is the delegate's pick for buffers: GREEDY_BY_SIZE, unless
GREEDY_BY_BREADTH's total is strictly smaller.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

from packager.plan.objects import (gpu_equality, gpu_greedy_by_size, gpu_greedy_in_order,
                                   gpu_min_cost_flow, greedy_by_breadth, naive)
from packager.plan.objects.gpu_extents import ExtentPlan
from packager.plan.records import ObjectPlan, UsageRecord


def greedy_best(records: Sequence[UsageRecord]) -> ObjectPlan:
    by_size = gpu_greedy_by_size.plan(records)
    by_breadth = greedy_by_breadth.plan(records)
    chosen = by_breadth if by_breadth.total < by_size.total else by_size
    return replace(chosen, strategy="GREEDY_BEST")


def _named(name: str, fn: Callable[[Sequence[UsageRecord]], ObjectPlan]):
    return lambda records: replace(fn(records), strategy=name)


# Byte sizes (1D): every strategy of the delegate.
OBJECTS: dict[str, Callable[[Sequence[UsageRecord]], ObjectPlan]] = {
    "NAIVE": _named("NAIVE", naive.plan),
    "EQUALITY": gpu_equality.plan,
    "GREEDY_IN_ORDER": gpu_greedy_in_order.plan,
    "GREEDY_BY_BREADTH": _named("GREEDY_BY_BREADTH", greedy_by_breadth.plan),
    "GREEDY_BY_SIZE": gpu_greedy_by_size.plan,
    "GREEDY_BEST": greedy_best,
    "MINCOSTFLOW": gpu_min_cost_flow.plan,
}


# The strategies that sweep the records in the order given, which the delegate's callers sort by
# first task.
IN_ORDER = frozenset({"EQUALITY", "GREEDY_IN_ORDER", "MINCOSTFLOW"})


def _naive_extents(records: Sequence[UsageRecord], extents: Sequence[tuple[int, ...]]) -> ExtentPlan:
    return ExtentPlan("NAIVE", tuple(range(len(records))), tuple(tuple(e) for e in extents))


# 2D and 3D texture extents: the strategies the delegate has for them.
EXTENTS: dict[str, Callable[[Sequence[UsageRecord], Sequence[tuple[int, ...]]], ExtentPlan]] = {
    "NAIVE": _naive_extents,
    "EQUALITY": gpu_equality.plan_extents,
    "GREEDY_IN_ORDER": gpu_greedy_in_order.plan_extents,
}


def in_first_task_order(fn: Callable[[Sequence[UsageRecord]], ObjectPlan],
                        records: Sequence[UsageRecord]) -> ObjectPlan:
    """A strategy's plan with the records passed as the delegate's callers pass them to its in-order
    strategies, by first task (stable: ties in the order given), mapped back to their positions."""
    order = sorted(range(len(records)), key=lambda i: records[i].first_op)
    sorted_plan = fn([records[i] for i in order])
    assignment = [0] * len(records)
    for k, pos in enumerate(order):
        assignment[pos] = sorted_plan.assignment[k]
    return replace(sorted_plan, assignment=tuple(assignment))


# Up to this many records our heuristics also run the delegate's counterpart and keep the smaller
# plan (registry.no_larger_than_delegate): the test set's largest inputs. Its GREEDY_BY_SIZE's
# work grows as the square of the count (0.5 s at 5,000 records here), so above it ours runs alone.
COMPARE_UP_TO = 5_000


def in_first_task_order_extents(fn, records: Sequence[UsageRecord], extents) -> ExtentPlan:
    """As in_first_task_order, for a strategy over texture extents."""
    order = sorted(range(len(records)), key=lambda i: records[i].first_op)
    sorted_plan = fn([records[i] for i in order], [extents[i] for i in order])
    assignment = [0] * len(records)
    for k, pos in enumerate(order):
        assignment[pos] = sorted_plan.assignment[k]
    return replace(sorted_plan, assignment=tuple(assignment))
