"""Naive: every record in its own bytes, end to end in record order. The baseline every other
strategy must beat (its arena is the sum of the sizes, plus alignment padding)."""

from __future__ import annotations

from typing import Sequence

from packager.plan.offsets._gaps import offset_plan
from packager.plan.records import OffsetPlan, UsageRecord, align_up

NAME = "naive"


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    offsets, top = [], 0
    for r in records:
        if r.size == 0:
            # Padding up to an aligned offset for an empty record would only grow the arena.
            offsets.append(0)
            continue
        offset = align_up(top, alignment)
        offsets.append(offset)
        top = offset + r.size
    return offset_plan(NAME, records, offsets, alignment)
