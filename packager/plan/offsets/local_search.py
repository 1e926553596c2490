"""Local search over placement orders, in the manner of Arm Vela's HillClimb allocator.

A solution is an order of the records; decoding places each record, in that order, at the lowest
aligned offset where it overlaps no conflicting record placed before it. Starting from the order of
the best plan so far (records by offset) and from largest-first, each step moves a record that
reaches the current peak to an earlier position (or swaps two records at random) and keeps the
change unless the arena grows; equal arenas are accepted, to drift across plateaus. It stops at
the lower bound, after `max_iterations` steps, or when the time budget runs out.

With `max_iterations` set and a time budget that does not run out first, the result depends only
on the input and the seed.
"""

from __future__ import annotations

import random
import time
from typing import Sequence

from packager.plan.offsets._gaps import compress_time, offset_plan, place_in_order
from packager.plan.records import OffsetPlan, UsageRecord, arena_of, offset_lower_bound

NAME = "local_search"


def _decode(records: Sequence[UsageRecord], order: Sequence[int], alignment: int) -> tuple[list[int], int]:
    offsets = place_in_order(records, order, alignment, best_fit=False)
    return offsets, arena_of(records, offsets)


def plan(records: Sequence[UsageRecord], alignment: int = 1, initial: OffsetPlan | None = None,
         time_budget: float | None = 2.0, seed: int = 0, lower_bound: int | None = None,
         max_iterations: int | None = None) -> OffsetPlan:
    dense = compress_time(records)
    n = len(dense)
    bound = max(offset_lower_bound(records), lower_bound or 0)
    deadline = None if time_budget is None else time.perf_counter() + time_budget
    starts = [sorted(range(n), key=lambda i: (-dense[i].size, dense[i].first_op, i))]
    if initial is not None:
        starts.insert(0, sorted(range(n), key=lambda i: (initial.offsets[i], -dense[i].size, i)))
    best_order, (best_offsets, best) = None, ([0] * n, float("inf"))
    for order in starts:
        offsets, arena = _decode(dense, order, alignment)
        if arena < best:
            best_order, best_offsets, best = order, offsets, arena
    rng = random.Random(seed)
    order, offsets, current = list(best_order or []), best_offsets, best
    steps = 0
    while n > 1 and current > bound:
        if max_iterations is not None and steps >= max_iterations:
            break
        if deadline is not None and time.perf_counter() >= deadline:
            break
        steps += 1
        candidate = order[:]
        peak = [k for k, i in enumerate(candidate) if offsets[i] + dense[i].size == current]
        if peak and rng.random() < 0.7:
            k = rng.choice(peak)
            j = rng.randrange(0, k) if k else 0
            candidate.insert(j, candidate.pop(k))
        else:
            a, b = rng.randrange(n), rng.randrange(n)
            candidate[a], candidate[b] = candidate[b], candidate[a]
        new_offsets, arena = _decode(dense, candidate, alignment)
        if arena <= current:
            order, offsets, current = candidate, new_offsets, arena
            if arena < best:
                best_offsets, best = new_offsets, arena
    if initial is not None and initial.arena <= best:
        return OffsetPlan(NAME, tuple(initial.offsets), initial.arena, alignment)
    return offset_plan(NAME, records, best_offsets, alignment)
