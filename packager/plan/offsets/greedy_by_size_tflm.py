"""Greedy by size as TFLite Micro's GreedyMemoryPlanner does it, so its head can be reproduced.

What TFLite Micro does, step by step:
- Sizes: the allocator rounds every buffer up to the buffer alignment (16) before handing it to
  the planner, so placement works on rounded sizes; offsets are sums of rounded sizes and
  offline offsets, never aligned by the planner itself.
- Order: buffers with an offline (given) offset first, in the order they were added, each at its
  offset; then the others by size, largest first. The others are written into the sort array
  from its tail (so in reverse order of addition) and sorted by a stable bubble sort: among
  equal sizes, the later-added buffer goes first.
- Placement: walk the placed buffers alive at the same time, by increasing offset; the candidate
  offset starts at 0 and, after each buffer, becomes the highest end seen so far; the buffer goes
  in the FIRST gap (`next offset - candidate >= size`), else above the last one.
Unlike the TFLite CPU arena, empty buffers take part like any other.

The plan's arena is max(offset + size) over the records' own sizes, as for every strategy; TFLite
Micro's head (GetMaximumMemorySize) uses the rounded sizes. The two agree when the records' sizes
are already rounded, as the model reader makes them.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, Sequence

import numpy as np

from packager.errors import PlanError
from packager.plan.offsets._gaps import PlacementLoop, Placed, offset_plan
from packager.plan.offsets._stop import Paused, StopRule
from packager.plan.records import OffsetPlan, Records, UsageRecord

NAME = "greedy_by_size_tflm"

_NOTHING_FIXED: Mapping[int, int] = MappingProxyType({})


def placement_order(records: Sequence[UsageRecord], fixed: Mapping[int, int],
                    alignment: int) -> list[int]:
    """Positions in the order TFLite Micro places them: given offsets first, then by rounded size,
    largest first, equal sizes by later position first."""
    cols = Records.of(records)
    keep = np.ones(len(records), dtype=bool)
    keep[[i for i in fixed if 0 <= i < len(records)]] = False
    online = np.flatnonzero(keep)
    rounded = cols.size[online]
    if alignment > 1:
        rounded = -(-rounded // alignment) * alignment
    online = online[np.lexsort((-online, -rounded))]
    return sorted(fixed) + online.tolist()


def first_gap_offset(conflicts: Sequence[Placed], size: int) -> int:
    """GreedyMemoryPlanner's walk over the conflicting buffers (sorted by offset)."""
    candidate = 0
    for offset, end, _, _ in conflicts:
        if offset - candidate >= size:
            break
        if end > candidate:
            candidate = end
    return candidate


def _check_fixed(records: Sequence[UsageRecord], fixed: Mapping[int, int], alignment: int) -> None:
    for i, offset in fixed.items():
        if not 0 <= i < len(records):
            raise PlanError(f"fixed offset for record position {i}, "
                            f"out of range 0..{len(records) - 1}")
        if offset < 0 or offset % max(alignment, 1):
            raise PlanError(f"fixed offset {offset} of tensor {records[i].tensor} is negative "
                            f"or not {alignment}-byte aligned")


def plan(
    records: Sequence[UsageRecord], alignment: int = 1, fixed: Mapping[int, int] = _NOTHING_FIXED
) -> OffsetPlan:
    return start(records, alignment, fixed)


def start(records: Sequence[UsageRecord], alignment: int = 1, fixed: Mapping[int, int] = _NOTHING_FIXED,
          stop: StopRule | None = None) -> OffsetPlan | Paused:
    """The plan, or Paused once a record placed ends above `stop`'s limit (by its own size, as
    the plan's arena counts it, not the rounded size it is placed with)."""
    _check_fixed(records, fixed, alignment)
    align = alignment if alignment > 1 else 1
    # `first_gap_offset` is the lowest gap with no alignment of its start (the rounded sizes and
    # the aligned given offsets keep every start aligned), empty buffers placed like the others.
    sizes = -(-Records.of(records).size // align) * align
    loop = PlacementLoop(records, placement_order(records, fixed, alignment), 1,
                         best_fit=False, skip_empty=False, sizes=sizes, fixed=fixed,
                         plain_first=stop is not None and not fixed)
    # With given offsets, the whole loop runs: a clash among them is an error to report now.
    got = loop.run(None if fixed else stop)
    if got is None:
        return Paused(NAME, loop.done, loop.steps, lambda: _finished(records, fixed, alignment, loop.run()))
    return _finished(records, fixed, alignment, got)


def _finished(records: Sequence[UsageRecord], fixed: Mapping[int, int], alignment: int,
              got: tuple[list[int], int]) -> OffsetPlan:
    offsets, clash = got
    if clash >= 0:
        # TFLite Micro trusts offline offsets blindly; a clash is an input error, say so now.
        raise PlanError(f"fixed offset {fixed[clash]} of tensor {records[clash].tensor} overlaps "
                        f"another fixed tensor alive at the same time")
    return offset_plan(NAME, records, offsets, alignment)
