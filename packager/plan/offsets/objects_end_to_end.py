"""Objects end to end: turn a shared-object plan into an offset plan.

Each object gets its own bytes, objects laid end to end (each start aligned), and every record
sits at its object's offset. Records sharing an object never live at the same time, so the plan
is valid whenever the object plan is. Without an object plan, one is made here by a plain greedy
by size, so this strategy works on its own.
"""

from __future__ import annotations

from typing import Sequence

from packager.errors import PlanError
from packager.plan.offsets._gaps import compress_time, offset_plan
from packager.plan.records import ObjectPlan, OffsetPlan, UsageRecord, align_up

NAME = "objects_end_to_end"


def greedy_by_size_objects(records: Sequence[UsageRecord]) -> ObjectPlan:
    """Records by size, largest first, each into the smallest object free over its whole
    lifetime, else into a new object of its size.

    Objects are created in non-increasing size, so every existing object is big enough and the
    newest free one is the smallest. Per operator, a bit mask says which objects are busy there.
    """
    records = compress_time(records)  # one mask per distinct start or end, not per operator
    n_ops = max((r.last_op for r in records), default=-1) + 1
    busy = [0] * n_ops
    assignment = [0] * len(records)
    sizes: list[int] = []
    for i in sorted(range(len(records)), key=lambda i: (-records[i].size, i)):
        r = records[i]
        taken = 0
        for op in range(r.first_op, r.last_op + 1):
            taken |= busy[op]
        free = ((1 << len(sizes)) - 1) & ~taken
        if free:
            obj = free.bit_length() - 1
        else:
            obj = len(sizes)
            sizes.append(r.size)
        bit = 1 << obj
        for op in range(r.first_op, r.last_op + 1):
            busy[op] |= bit
        assignment[i] = obj
    return ObjectPlan(strategy="greedy_by_size", assignment=tuple(assignment),
                      object_sizes=tuple(sizes))


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
