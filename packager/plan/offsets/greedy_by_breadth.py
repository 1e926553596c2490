"""Greedy by breadth (offsets): visit operators by breadth, largest first; at each, place its
still-unplaced records by size, largest first, in the smallest gap that fits.

The widest operator decides the lower bound, so its records are packed first, while the arena
is still empty around them.
"""

from __future__ import annotations

from typing import Sequence

from packager.plan.offsets._gaps import offset_plan, place_in_order
from packager.plan.records import OffsetPlan, UsageRecord, breadth_first_order

NAME = "greedy_by_breadth"


def placement_order(records: Sequence[UsageRecord]) -> list[int]:
    """Operators by breadth, widest first (ties: earlier); at each, its records not placed yet,
    largest first (ties: earlier position)."""
    return breadth_first_order(records)


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    offsets = place_in_order(records, placement_order(records), alignment)
    return offset_plan(NAME, records, offsets, alignment)
