"""Greedy by breadth (offsets): visit operators by breadth, largest first; at each, place its
still-unplaced records by size, largest first, in the smallest gap that fits.

The widest operator decides the lower bound, so its records are packed first, while the arena
is still empty around them.
"""

from __future__ import annotations

from typing import Sequence

from packager.plan.offsets._gaps import placed_until
from packager.plan.offsets._stop import Paused, StopRule
from packager.plan.records import OffsetPlan, UsageRecord, breadth_first_order

NAME = "greedy_by_breadth"


def placement_order(records: Sequence[UsageRecord]) -> list[int]:
    """Operators by breadth, widest first (ties: earlier); at each, its records not placed yet,
    largest first (ties: earlier position)."""
    return breadth_first_order(records)


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    return start(records, alignment)


def start(records: Sequence[UsageRecord], alignment: int = 1,
          stop: StopRule | None = None) -> OffsetPlan | Paused:
    """The plan, or Paused once a record placed ends above `stop`'s limit."""
    return placed_until(NAME, records, placement_order(records), alignment, stop)
