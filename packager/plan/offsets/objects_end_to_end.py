"""Objects end to end: turn a shared-object plan into an offset plan.

Each object gets its own bytes, objects laid end to end (each start aligned), and every record
sits at its object's offset. Records sharing an object never live at the same time, so the plan
is valid whenever the object plan is. Without an object plan, one is made here by a plain greedy
by size, so this strategy works on its own.
"""

from __future__ import annotations

from typing import Sequence

from packager.errors import PlanError
from packager.plan.objects import greedy_by_size
from packager.plan.offsets._gaps import offset_plan
from packager.plan.records import ObjectPlan, OffsetPlan, UsageRecord, align_up

NAME = "objects_end_to_end"


def greedy_by_size_objects(records: Sequence[UsageRecord]) -> ObjectPlan:
    """The shared-object greedy by size (largest first, newest compatible object)."""
    return greedy_by_size.plan(records)


def plan(
    records: Sequence[UsageRecord], alignment: int = 1, objects: ObjectPlan | None = None
) -> OffsetPlan:
    if objects is None:
        objects = greedy_by_size_objects(records)
    if len(objects.assignment) != len(records):
        raise PlanError(f"object plan '{objects.strategy}' assigns {len(objects.assignment)} "
                        f"records, not {len(records)}")
    starts, top = [], 0
    for size in objects.object_sizes:
        start = align_up(top, alignment)
        starts.append(start)
        top = start + size
    offsets = []
    for r, obj in zip(records, objects.assignment):
        if not 0 <= obj < len(starts) or r.size > objects.object_sizes[obj]:
            raise PlanError(f"object plan '{objects.strategy}': tensor {r.tensor} has no object "
                            f"that holds it (object {obj})")
        # An empty record needs no bytes; at 0 it cannot stretch the arena past the last object.
        offsets.append(starts[obj] if r.size else 0)
    return offset_plan(NAME, records, offsets, alignment)
