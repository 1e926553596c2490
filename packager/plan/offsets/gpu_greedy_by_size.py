"""The TFLite GPU delegate's GREEDY_BY_SIZE for offsets (its one offset planner; the OpenCL and
Metal delegates use it for buffers when sub-buffers are available).

Records largest first (ties: the order given). Each goes into the smallest gap that holds it
between the records already placed that are alive with it, walked by increasing offset (ties:
the order they were placed), else above the highest of them. The end of each record walked is
rounded up to the base alignment before it bounds a gap, so every offset is a multiple of it;
the arena is the highest end, not rounded.
"""

from __future__ import annotations

from typing import Sequence

from packager.plan.records import OffsetPlan, UsageRecord, align_up

NAME = "GREEDY_BY_SIZE"


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    offsets = [0] * len(records)
    placed: list[int] = []  # records placed, by offset (ties: the order placed)
    arena = 0
    for pos in sorted(range(len(records)), key=lambda i: -records[i].size):  # stable
        record = records[pos]
        best_gap, best_offset, low = None, None, 0
        for other in placed:
            if not record.conflicts(records[other]):
                continue
            gap = offsets[other] - low
            if gap >= record.size and (best_gap is None or gap < best_gap):
                best_gap, best_offset = gap, low
            low = max(low, align_up(offsets[other] + records[other].size, alignment))
        offsets[pos] = low if best_offset is None else best_offset
        at = next((k for k, other in enumerate(placed) if offsets[other] > offsets[pos]), len(placed))
        placed.insert(at, pos)
        arena = max(arena, offsets[pos] + record.size)
    return OffsetPlan(strategy=NAME, offsets=tuple(offsets), arena=arena, alignment=max(1, alignment))
