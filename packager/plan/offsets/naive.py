"""Naive: every record in its own bytes, end to end in record order. The baseline every other
strategy must beat (its arena is the sum of the sizes, plus alignment padding)."""

from __future__ import annotations

from typing import Sequence

from packager.plan.offsets._gaps import offset_plan
from packager.plan.offsets._stop import Paused, StopRule
from packager.plan.records import OffsetPlan, UsageRecord, align_up

NAME = "naive"


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    return start(records, alignment)


def start(records: Sequence[UsageRecord], alignment: int = 1,
          stop: StopRule | None = None) -> OffsetPlan | Paused:
    """The plan, or Paused once a record placed ends above `stop`'s limit."""
    offsets: list[int] = []
    state = [0]  # the top so far
    limit = -1 if stop is None else stop.limit
    ignored = frozenset() if stop is None else stop.ignored

    def place(limit: int) -> bool:
        """Place the records from where the last call stopped; False when `limit` stopped it."""
        top = state[0]
        for i in range(len(offsets), len(records)):
            r = records[i]
            if r.size == 0:
                # Padding up to an aligned offset for an empty record would only grow the arena.
                offsets.append(0)
                continue
            offset = align_up(top, alignment)
            offsets.append(offset)
            top = offset + r.size
            if 0 <= limit < top and i not in ignored:
                state[0] = top
                return False
        return True

    if not place(limit):
        return Paused(NAME, len(offsets), len(records),
                      lambda: place(-1) and offset_plan(NAME, records, offsets, alignment))
    return offset_plan(NAME, records, offsets, alignment)
