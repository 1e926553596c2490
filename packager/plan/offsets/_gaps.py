"""What the offset strategies share: the placement loop's entry (`placement`, with its index of
placed records by time) and the two gap searches.

Every gap search needs "the placed records alive during [first, last], by increasing offset".
Scanning every placed record for each new one is quadratic; the placement loop buckets them by
operator so that a query only looks at records near the interval in time.
"""

from __future__ import annotations

import sys
from typing import Mapping, Sequence

import numpy as np

from packager.plan.offsets import _placement
from packager.plan.offsets._stop import Paused, StopRule
from packager.plan.records import OffsetPlan, UsageRecord, align_up, arena_of, time_columns

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


def place_in_order(
    records: Sequence[UsageRecord], order: Sequence[int], alignment: int, best_fit: bool = True,
    remember_unaligned: bool = False,
) -> list[int]:
    """Offsets for `records` placed one by one in `order` (positions), each in the best-fit (or the
    lowest) gap among the conflicting records placed before it. Zero-size records take offset 0
    and no space; positions missing from `order` stay at 0. `remember_unaligned`: TFLite's way of
    measuring the best gap (see `smallest_gap_offset`).

    The loop is `_placement.place` (compiled for large inputs): it runs once per record in
    several strategies, `package` at 100,000 operators among them."""
    offsets, _ = placement(records, order, alignment, best_fit=best_fit,
                           remember_unaligned=remember_unaligned, skip_empty=True)
    return offsets


# From this many records on, the placement and skyline loops run compiled: numba's import and
# the first load of the cached code (about 0.6 s of CPU) then cost less than the loops save
# (about 0.3 s per offset strategy at 100,000 records, 1 s for strip packing). Under a StopRule
# (`package`, which needs only the best plan) the loops start as Python whatever the size and go
# on compiled only if resumed: stopped early, they never repay numba's import and its memory.
COMPILE_FROM = 20_000

# Offsets and sizes the compiled loop takes: their sums stay inside int64.
_INT64_SAFE = 1 << 61


def compiles(records: int) -> bool:
    """Whether the loops run compiled on an input of this many records: from COMPILE_FROM, or from
    a tenth of it once numba is loaded in this process (min_cost_flow loads it from 2,000 records,
    and the portfolio runs the shared-object strategies first): then compiling costs only loading
    each loop's cached code, a few milliseconds, against 10-80 ms of Python loop at 10,000 records."""
    return records >= COMPILE_FROM or (records >= COMPILE_FROM // 10 and "numba" in sys.modules)


def placement(records: Sequence[UsageRecord], order: Sequence[int], alignment: int, *,
              best_fit: bool, remember_unaligned: bool = False, skip_empty: bool = True,
              sizes: Sequence[int] | None = None,
              fixed: Mapping[int, int] | None = None) -> tuple[list[int], int]:
    """`_placement.place` on the records: (offsets, -1) or (offsets so far, the position of a
    fixed record that overlaps one placed before it). `sizes` replaces the records' sizes (as
    placed, e.g. rounded); `fixed` gives some positions their offset."""
    loop = PlacementLoop(records, order, alignment, best_fit=best_fit,
                         remember_unaligned=remember_unaligned, skip_empty=skip_empty, sizes=sizes,
                         fixed=fixed)
    return loop.run()


class PlacementLoop:
    """`_placement.place` with its inputs and state kept, so that a run stopped by a StopRule
    (a record ended above its limit) can resume where it stopped: `run(stop)` returns
    (offsets, clash) as `placement` does, or None when stopped; `run()` again finishes it."""

    def __init__(self, records: Sequence[UsageRecord], order: Sequence[int], alignment: int, *,
                 best_fit: bool, remember_unaligned: bool = False, skip_empty: bool = True,
                 sizes: Sequence[int] | None = None, fixed: Mapping[int, int] | None = None,
                 plain_first: bool = False) -> None:
        """`plain_first`: start as Python even on a large input, and compile only if a stopped run
        is resumed (a run that stops early rarely repays numba's import)."""
        n = len(records)
        self.steps = len(order)
        self._records = records
        self._sizes, self._fixed = sizes, fixed
        align = alignment if alignment > 1 else 1
        width, n_buckets = _bucket_width(records)
        self._may_compile = compiles(n)
        kernel = _compiled_kernel(records, sizes, fixed) if self._may_compile and not plain_first else None
        if kernel is not None:
            cols = time_columns(records)
            first, last = cols.first, cols.last
            size = cols.size if sizes is None else np.asarray(sizes, dtype=np.int64)
            at = np.asarray(order, dtype=np.int64)
            fixed_at = np.full(n, -1, dtype=np.int64)
            if fixed:
                fixed_at[np.fromiter(fixed.keys(), dtype=np.int64)] = np.fromiter(fixed.values(), dtype=np.int64)
            entries = _passing_entries(first, last, at, width)
            buffers = (np.full(n_buckets, -1, dtype=np.int64), np.full(n_buckets, -1, dtype=np.int64),
                       np.empty(entries, dtype=np.int64), np.empty(entries, dtype=np.int64),
                       np.empty(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
                       np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64))
            self._out = np.zeros(n, dtype=np.int64)
            self._state = np.zeros(2, dtype=np.int64)
            self._kernel, self._compiled = kernel, True
            self._args = (first, last, size, at, fixed_at, align, best_fit, remember_unaligned,
                          skip_empty, width, *buffers, self._out)
            return
        first = [r.first_op for r in records]
        last = [r.last_op for r in records]
        size = ([r.size for r in records] if sizes is None
                else sizes.tolist() if isinstance(sizes, np.ndarray) else list(sizes))
        fixed_at = [-1] * n
        for i, o in (fixed or {}).items():
            fixed_at[i] = o
        cols = time_columns(records)
        entries = (_passing_entries(cols.first, cols.last, np.fromiter(order, dtype=np.int64, count=len(order)),
                                    width) if cols is not None
                   else sum(last[i] // width - first[i] // width for i in order))
        self._out = [0] * n
        self._state = [0, 0]
        self._kernel, self._compiled = _placement.place, False
        self._args = (first, last, size, list(order), fixed_at, align, best_fit,
                      remember_unaligned, skip_empty, width, [-1] * n_buckets, [-1] * n_buckets,
                      [0] * entries, [0] * entries, [0] * n, [0] * n, [0] * n, [0] * n, self._out)

    @property
    def done(self) -> int:
        """Placement steps done so far."""
        return int(self._state[0])

    def _compile(self) -> None:
        """Go on compiled from where the Python loop stopped: the same state as int64 arrays."""
        kernel = _compiled_kernel(self._records, self._sizes, self._fixed)
        if kernel is None:
            return
        cols = time_columns(self._records)
        size = cols.size if self._sizes is None else np.asarray(self._sizes, dtype=np.int64)
        as_array = lambda values: np.asarray(values, dtype=np.int64)
        args = self._args
        self._out = as_array(self._out)
        self._args = (cols.first, cols.last, size, as_array(args[3]), as_array(args[4]), *args[5:10],
                      *(as_array(a) for a in args[10:18]), self._out)
        self._state = as_array(self._state)
        self._kernel, self._compiled = kernel, True

    def run(self, stop: StopRule | None = None) -> tuple[list[int], int] | None:
        """Run (or resume) the loop: (offsets, clash) at its end, None if `stop` stopped it."""
        if stop is None and not self._compiled and self._may_compile and self.done:
            self._compile()
        if stop is None:
            watch, limit = self._args[2], -1  # never read without a limit
        else:
            watch, limit = stop.watched_sizes(self._records), stop.limit
            if self._compiled:
                watch = np.asarray(watch, dtype=np.int64)
                if limit >= _INT64_SAFE:
                    watch, limit = self._args[2], -1  # no record of int64 size can end above it
        clash = self._kernel(*self._args, watch, limit, self._state)
        if clash == -2:
            return None
        out = self._out.tolist() if self._compiled else self._out
        return out, int(clash)


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


def _passing_entries(first: np.ndarray, last: np.ndarray, order: np.ndarray, width: int) -> int:
    """Room for the loop's entries of records passing through buckets: one per bucket after the
    first that a record of `order` touches (empty ones counted too, placed or not)."""
    return int((last[order] // width - first[order] // width).sum())


def _bucket_width(records: Sequence[UsageRecord]) -> tuple[int, int]:
    """(operators per bucket, buckets) of the placement loop's index: a few median lifetimes
    (balancing "buckets read per query" against "records met that started or ended beside the
    query's interval"), widened if operator numbers are sparse."""
    cols = time_columns(records) if records else None
    if cols is not None:
        lifetimes = np.sort(cols.last - cols.first + 1)
        last_op, median = max(0, int(cols.last.max())), int(lifetimes[len(lifetimes) // 2])
    else:
        lifetimes = sorted(r.last_op - r.first_op + 1 for r in records)
        last_op = max((r.last_op for r in records), default=0)
        median = lifetimes[len(lifetimes) // 2] if lifetimes else 1
    width = max(1, _MEDIAN_LIFETIMES_PER_BUCKET * median, (last_op + 1) // (4 * len(records) + 16))
    return width, last_op // width + 1


# The bucket width in median lifetimes. Measured on the four benchmark shapes at 100,000 records
# (median lifetime 2), the Python loop: widths of 2 to 8 operators cost about the same on chain,
# residual and transformer, and 6 costs 15% less than 2 on branching; the compiled loop, alike.
_MEDIAN_LIFETIMES_PER_BUCKET = 3


def _compiled_kernel(records, sizes, fixed):
    """The compiled loop, or None: numbers too large for int64, or numba missing."""
    cols = time_columns(records)
    if cols is None:
        return None
    if sizes is not None and len(sizes):
        biggest = int(sizes.max()) if isinstance(sizes, np.ndarray) else max(sizes)
        if biggest >= _INT64_SAFE:
            return None
    if fixed and max(fixed.values()) >= _INT64_SAFE:
        return None
    compiled = compiled_module()
    return None if compiled is None else compiled.place


def compiled_module():
    """The module of compiled loops (importing numba), or None where numba is missing (or has
    nowhere to cache compiled code: the loops then run as Python)."""
    try:
        from packager.plan.offsets import _compiled
    except (ImportError, RuntimeError):
        return None
    return _compiled


def offset_plan(
    strategy: str, records: Sequence[UsageRecord], offsets: Sequence[int], alignment: int
) -> OffsetPlan:
    return OffsetPlan(strategy=strategy, offsets=tuple(offsets),
                      arena=_arena(records, offsets), alignment=alignment)


def _arena(records: Sequence[UsageRecord], offsets: Sequence[int]) -> int:
    """`arena_of`, by one vector maximum when the records are int64 columns (an offset is at
    most the sum of the sizes, which the columns keep inside int64)."""
    cols = time_columns(records) if len(records) > 64 else None
    if cols is None:
        return arena_of(records, offsets)
    try:
        ends = np.fromiter(offsets, dtype=np.int64, count=len(offsets)) + cols.size
    except OverflowError:
        return arena_of(records, offsets)
    return int(ends.max())
