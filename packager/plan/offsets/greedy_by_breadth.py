"""Greedy by breadth (offsets): visit operators by breadth, largest first; at each, place its
still-unplaced records by size, largest first, in the smallest gap that fits.

The widest operator decides the lower bound, so its records are packed first, while the arena
is still empty around them.
"""

from __future__ import annotations

from typing import Sequence

from packager.plan.offsets._gaps import offset_plan, place_in_order
from packager.plan.records import OffsetPlan, UsageRecord, operator_breadths, operator_profiles

NAME = "greedy_by_breadth"


def placement_order(records: Sequence[UsageRecord]) -> list[int]:
    # Profiles and breadths are taken at the distinct start times only (records.compress_time):
    # any other operator's profile is a subset of an earlier one's, so it adds nothing.
    profiles = operator_profiles(records)
    breadths = operator_breadths(records)
    ops = sorted(range(len(profiles)), key=lambda op: (-breadths[op], op))
    seen = [False] * len(records)
    order: list[int] = []
    for op in ops:
        fresh = [i for i in profiles[op] if not seen[i]]
        fresh.sort(key=lambda i: (-records[i].size, i))
        for i in fresh:
            seen[i] = True
        order += fresh
    return order


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    offsets = place_in_order(records, placement_order(records), alignment)
    return offset_plan(NAME, records, offsets, alignment)
