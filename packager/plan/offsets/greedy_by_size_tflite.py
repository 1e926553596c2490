"""Greedy by size, exactly as TFLite's CPU arena does it (the paper's Algorithm 3).

Order (ArenaPlanner::CreateTensorAllocationVector): records alive for the whole run first, then
the rest by size, largest first; equal sizes by earlier first operator, then by tensor index
(TFLite leaves that last tie to std::sort; see `allocation_order`).

Placement (SimpleMemoryArena::Allocate): walk the placed records that conflict in time by
increasing offset and take the smallest gap that fits, the first of equal gaps; else go above the
highest one. Zero-size records get offset 0 and are never placed, so they shape nothing.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from packager.errors import PlanError
from packager.plan import kernels
from packager.plan.offsets._gaps import Placed, offset_plan, placed_until, smallest_gap_offset
from packager.plan.offsets._stop import Paused, StopRule
from packager.plan.records import OffsetPlan, Records, UsageRecord

NAME = "greedy_by_size"


def plan(
    records: Sequence[UsageRecord], alignment: int = 1, whole_run: frozenset[int] = frozenset()
) -> OffsetPlan:
    """Each record in TFLite's order (`allocation_order`), in the gap `arena_offset` finds among
    the records placed before it that are alive at a common operator."""
    if kernels.use_kernel(len(records)):
        return start(records, alignment, whole_run)  # the same loop, by its kernel
    offsets = [0] * len(records)
    placed: list[Placed] = []  # (offset, end, first_op, last_op)
    for i in allocation_order(records, whole_run):
        r = records[i]
        if r.size == 0:
            continue
        conflicts = sorted(p for p in placed if p[2] <= r.last_op and r.first_op <= p[3])
        offsets[i] = arena_offset(conflicts, r.size, max(1, alignment))
        placed.append((offsets[i], offsets[i] + r.size, r.first_op, r.last_op))
    return offset_plan(NAME, records, offsets, alignment)


def allocation_order(records: Sequence[UsageRecord], whole_run: frozenset[int]) -> list[int]:
    """Positions in the order TFLite computes their offsets.

    TFLite's comparator stops at (size, allocation op): equal pairs are left in whatever order
    std::sort leaves them. Tensor index (then position) is our deterministic choice there.
    """
    for i in whole_run:
        if not 0 <= i < len(records):
            raise PlanError(f"whole-run record position {i} is out of range 0..{len(records) - 1}")
    cols = Records.of(records)
    keep = np.ones(len(records), dtype=bool)
    keep[list(whole_run)] = False
    rest = np.flatnonzero(keep)
    rest = rest[np.lexsort((rest, cols.tensor[rest], cols.first[rest], -cols.size[rest]))]
    return sorted(whole_run) + rest.tolist()


def arena_offset(conflicts: Sequence[Placed], size: int, alignment: int) -> int:
    """SimpleMemoryArena::Allocate's gap search over `conflicts` sorted by offset: the shared best
    fit with TFLite's quirk kept on purpose (a candidate gap is compared from the ALIGNED start but
    remembered from the UNALIGNED end below; see `smallest_gap_offset`). The source's "break on a
    zero best gap" can never fire for a non-empty record, so it is left out."""
    return smallest_gap_offset(conflicts, size, alignment, remember_unaligned=True)


def start(records: Sequence[UsageRecord], alignment: int = 1, whole_run: frozenset[int] = frozenset(),
          stop: StopRule | None = None) -> OffsetPlan | Paused:
    """The plan, or Paused once a record placed ends above `stop`'s limit."""
    # Each record in `arena_offset`'s gap among those placed before it (one shared loop).
    return placed_until(NAME, records, allocation_order(records, whole_run), alignment, stop,
                        remember_unaligned=True)
