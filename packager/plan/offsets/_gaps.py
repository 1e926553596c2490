"""What the offset strategies share: the placement loop (`placements`: each record in turn, in
a gap among the conflicting records placed before it) and its two gap searches.

`placements` is the loop as written: it scans every record placed so far for those alive with
the new one, as TFLite's arenas do. From `kernels.COMPILE_FROM` records on, `PlacementLoop` runs
the same loop by its kernel, which indexes the placed records by time (`_placement_kernel.py`).
"""

from __future__ import annotations

from typing import Iterator, Mapping, Sequence

import numpy as np

from packager.plan import kernels
from packager.plan.offsets import _placement_kernel
from packager.plan.offsets._stop import Paused, StopRule
from packager.plan.records import OffsetPlan, Records, UsageRecord, align_up, arena_of

# A placed record as the gap searches see it: (offset, end, first_op, last_op); it occupies the
# bytes [offset, end) during operators [first_op, last_op].
Placed = tuple[int, int, int, int]


def smallest_gap_offset(conflicts: Sequence[Placed], size: int, alignment: int,
                        remember_unaligned: bool = False) -> int:
    """Best fit: the aligned start of the smallest gap between `conflicts` (sorted by offset) that
    holds `size` bytes, the first of equal gaps; above all of them when no gap fits.

    `remember_unaligned` keeps TFLite's quirk (SimpleMemoryArena::Allocate): a candidate is compared
    by its gap from the ALIGNED start, but the best is remembered by its gap from the UNALIGNED end
    of the records below. With alignment 1 both measures agree."""
    best_start, best_gap = -1, 0
    current = 0  # end of the highest record seen so far: gaps open from here
    for offset, end, _, _ in conflicts:
        if offset - current >= size:  # cheap necessary test first: most records touch or overlap
            start = align_up(current, alignment)
            if start + size <= offset and (best_start < 0 or offset - start < best_gap):
                best_start = start
                best_gap = offset - (current if remember_unaligned else start)
        if end > current:
            current = end
    return best_start if best_start >= 0 else align_up(current, alignment)


def lowest_offset(conflicts: Sequence[Placed], size: int, alignment: int) -> int:
    """First fit: the smallest aligned offset where `size` bytes overlap none of `conflicts`
    (sorted by offset)."""
    current = 0
    for offset, end, _, _ in conflicts:
        if offset - current >= size:
            start = align_up(current, alignment)
            if start + size <= offset:
                return start
        if end > current:
            current = end
    return align_up(current, alignment)


def placements(records: Sequence[UsageRecord], order: Sequence[int], alignment: int, *,
               best_fit: bool, remember_unaligned: bool = False, skip_empty: bool = True,
               sizes: Sequence[int] | None = None,
               fixed: Mapping[int, int] | None = None) -> Iterator[tuple[int, int, int | None]]:
    """The placement loop: (step, position, offset) for each record of `order` as it is placed,
    in the best-fit (or the lowest) gap among the conflicting records placed before it, or at its
    `fixed` offset (offset None when that overlaps a record placed before it: the loop ends).
    `sizes` replaces the records' sizes (as placed, e.g. rounded); `skip_empty` leaves empty
    records at 0 and out of every gap search."""
    placed: list[Placed] = []
    for step, i in enumerate(order):
        r = records[i]
        size = r.size if sizes is None else int(sizes[i])
        if skip_empty and size == 0:
            continue
        conflicts = sorted(p for p in placed if p[2] <= r.last_op and r.first_op <= p[3])
        if fixed and i in fixed:
            offset = fixed[i]
            if size and any(o < end and o < offset + size and offset < end for o, end, _, _ in conflicts):
                yield step, i, None
                return
        elif best_fit:
            offset = smallest_gap_offset(conflicts, size, alignment, remember_unaligned)
        else:
            offset = lowest_offset(conflicts, size, alignment)
        placed.append((offset, offset + size, r.first_op, r.last_op))
        yield step, i, offset


def place_in_order(
    records: Sequence[UsageRecord], order: Sequence[int], alignment: int, best_fit: bool = True,
    remember_unaligned: bool = False,
) -> list[int]:
    """Offsets for `records` placed one by one in `order` (positions), each in the best-fit (or the
    lowest) gap among the conflicting records placed before it. Zero-size records take offset 0
    and no space; positions missing from `order` stay at 0. `remember_unaligned`: TFLite's way of
    measuring the best gap (see `smallest_gap_offset`)."""
    offsets, _ = placement(records, order, alignment, best_fit=best_fit,
                           remember_unaligned=remember_unaligned, skip_empty=True)
    return offsets


def placement(records: Sequence[UsageRecord], order: Sequence[int], alignment: int, *,
              best_fit: bool, remember_unaligned: bool = False, skip_empty: bool = True,
              sizes: Sequence[int] | None = None,
              fixed: Mapping[int, int] | None = None) -> tuple[list[int], int]:
    """The placement loop's offsets: (offsets, -1) or (offsets so far, the position of a fixed
    record that overlaps one placed before it)."""
    loop = PlacementLoop(records, order, alignment, best_fit=best_fit,
                         remember_unaligned=remember_unaligned, skip_empty=skip_empty, sizes=sizes,
                         fixed=fixed)
    return loop.run()


class PlacementLoop:
    """The placement loop with its state kept, so that a run stopped by a StopRule (a record
    ended above its limit) can resume where it stopped: `run(stop)` returns (offsets, clash) as
    `placement` does, or None when stopped; `run()` again finishes it. `placements` below
    `kernels.COMPILE_FROM` records, its kernel from there on (`plain_first`: uncompiled until
    resumed)."""

    def __init__(self, records: Sequence[UsageRecord], order: Sequence[int], alignment: int, *,
                 best_fit: bool, remember_unaligned: bool = False, skip_empty: bool = True,
                 sizes: Sequence[int] | None = None, fixed: Mapping[int, int] | None = None,
                 plain_first: bool = False) -> None:
        self.steps = len(order)
        self._records = records
        self._kernel = None
        if kernels.use_kernel(len(records)) and _placement_kernel.fits_int64(sizes, fixed):
            self._kernel = _placement_kernel.KernelLoop(
                records, order, alignment, best_fit=best_fit, remember_unaligned=remember_unaligned,
                skip_empty=skip_empty, sizes=sizes, fixed=fixed, compiled=not plain_first)
            return
        self._offsets = [0] * len(records)
        self._done = 0
        self._loop = placements(records, order, max(1, alignment), best_fit=best_fit,
                                remember_unaligned=remember_unaligned, skip_empty=skip_empty,
                                sizes=sizes, fixed=fixed)

    @property
    def done(self) -> int:
        """Placement steps done so far."""
        return self._kernel.done if self._kernel is not None else self._done

    def run(self, stop: StopRule | None = None) -> tuple[list[int], int] | None:
        """Run (or resume) the loop: (offsets, clash) at its end, None if `stop` stopped it."""
        if self._kernel is not None:
            return self._kernel.run(stop)
        watch = stop.watched_sizes(self._records) if stop is not None else None
        for step, i, offset in self._loop:
            if offset is None:
                self._done = step + 1
                return self._offsets, i
            self._offsets[i] = offset
            if watch is not None and watch[i] >= 0 and offset + watch[i] > stop.limit:
                self._done = step + 1
                return None
        self._done = self.steps
        return self._offsets, -1


def placed_until(strategy: str, records: Sequence[UsageRecord], order: Sequence[int], alignment: int,
                 stop: StopRule | None, best_fit: bool = True,
                 remember_unaligned: bool = False) -> OffsetPlan | Paused:
    """`place_in_order`'s plan, or Paused once a record placed ends above `stop`'s limit."""
    loop = PlacementLoop(records, order, alignment, best_fit=best_fit,
                         remember_unaligned=remember_unaligned, skip_empty=True,
                         plain_first=stop is not None)
    got = loop.run(stop)
    if got is None:
        return Paused(strategy, loop.done, loop.steps,
                      lambda: offset_plan(strategy, records, loop.run()[0], alignment))
    return offset_plan(strategy, records, got[0], alignment)


def offset_plan(
    strategy: str, records: Sequence[UsageRecord], offsets: Sequence[int], alignment: int
) -> OffsetPlan:
    return OffsetPlan(strategy=strategy, offsets=tuple(offsets),
                      arena=_arena(records, offsets), alignment=alignment)


def _arena(records: Sequence[UsageRecord], offsets: Sequence[int]) -> int:
    """`arena_of`, by one vector maximum above 64 records."""
    if len(records) <= 64:
        return arena_of(records, offsets)
    try:
        ends = np.fromiter(offsets, dtype=np.int64, count=len(offsets)) + Records.of(records).size
    except OverflowError:  # offsets padded by an alignment beyond int64 (a library caller's)
        return arena_of(records, offsets)
    return int(ends.max())
