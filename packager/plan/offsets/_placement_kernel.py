"""The shared placement loop run by its kernel (`kernels.placement.place`) over int64 arrays:
what `_gaps.PlacementLoop` runs from `kernels.COMPILE_FROM` records on.

The kernel indexes the placed records by time in buckets of a few operators, so that a query
only looks at records near its interval: the readable loop (`_gaps.placements`) scans them all.
It runs compiled; under a StopRule it starts uncompiled (the plain module, no numba) and goes on
compiled only if resumed: a run that stops early never repays numba's import and its memory.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from packager.plan import kernels
from packager.plan.kernels import placement
from packager.plan.records import Records, UsageRecord

# Offsets and sizes the kernel takes: their sums stay inside int64.
INT64_SAFE = 1 << 61


def fits_int64(sizes, fixed: Mapping[int, int] | None) -> bool:
    """Whether the kernel's numbers stay inside int64 with these sizes in place of the records'
    (rounded up by the caller) and these given offsets; the records' own bounds hold already."""
    if sizes is not None and len(sizes):
        biggest = int(sizes.max()) if isinstance(sizes, np.ndarray) else max(sizes)
        if biggest >= INT64_SAFE:
            return False
    return not (fixed and max(fixed.values()) >= INT64_SAFE)


class KernelLoop:
    """`kernels.placement.place` with its inputs and state kept, so that a run stopped by a
    StopRule can resume where it stopped (see `_gaps.PlacementLoop`)."""

    def __init__(self, records: Sequence[UsageRecord], order: Sequence[int], alignment: int, *,
                 best_fit: bool, remember_unaligned: bool, skip_empty: bool, sizes, fixed,
                 compiled: bool) -> None:
        n = len(records)
        cols = Records.of(records)
        self._records = records
        width, n_buckets = bucket_width(cols)
        self.compiled = compiled
        at = np.asarray(order, dtype=np.int64)
        entries = int((cols.last[at] // width - cols.first[at] // width).sum())
        if not compiled:
            # Uncompiled, the same loop reads Python lists several times faster than arrays (the
            # records' own integers: no new objects).
            size = ([r.size for r in records] if sizes is None
                    else sizes.tolist() if isinstance(sizes, np.ndarray) else list(sizes))
            fixed_at = [-1] * n
            for i, o in (fixed or {}).items():
                fixed_at[i] = o
            self._out, self._state = [0] * n, [0, 0]
            self._args = ([r.first_op for r in records], [r.last_op for r in records], size,
                          list(order), fixed_at, max(1, alignment), best_fit, remember_unaligned,
                          skip_empty, width, [-1] * n_buckets, [-1] * n_buckets, [0] * entries,
                          [0] * entries, [0] * n, [0] * n, [0] * n, [0] * n, self._out)
            return
        # a writable copy either way: numba compiles the kernel once per signature, and a
        # read-only array is another one (a second compile: a second of CPU, more memory)
        size = np.array(cols.size if sizes is None else sizes, dtype=np.int64)
        fixed_at = np.full(n, -1, dtype=np.int64)
        if fixed:
            fixed_at[np.fromiter(fixed.keys(), dtype=np.int64)] = np.fromiter(fixed.values(), dtype=np.int64)
        buffers = (np.full(n_buckets, -1, dtype=np.int64), np.full(n_buckets, -1, dtype=np.int64),
                   np.empty(entries, dtype=np.int64), np.empty(entries, dtype=np.int64),
                   np.empty(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
                   np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64))
        self._out = np.zeros(n, dtype=np.int64)
        self._state = np.zeros(2, dtype=np.int64)
        self._args = (cols.first, cols.last, size, at, fixed_at, max(1, alignment), best_fit,
                      remember_unaligned, skip_empty, width, *buffers, self._out)

    @property
    def done(self) -> int:
        return int(self._state[0])

    def _compile(self) -> None:
        """Go on compiled from where the uncompiled loop stopped: the same state as int64 arrays."""
        cols = Records.of(self._records)
        as_array = lambda values: np.asarray(values, dtype=np.int64) if isinstance(values, list) else values
        self._args = (cols.first, cols.last, *(as_array(a) for a in self._args[2:]))
        self._out, self._state = self._args[-1], as_array(self._state)
        self.compiled = True

    def run(self, stop=None) -> tuple[list[int], int] | None:
        """Run (or resume) the loop: (offsets, clash) at its end, None if `stop` stopped it."""
        if stop is None and not self.compiled:
            self._compile()  # resumed (or run whole): compiled from here on
        if stop is None:
            watch, limit = self._args[2], -1  # never read without a limit
        else:
            watch, limit = stop.watched_sizes(self._records), stop.limit
            if self.compiled:
                watch = np.asarray(watch, dtype=np.int64)
                if limit >= INT64_SAFE:
                    watch, limit = self._args[2], -1  # no record of int64 size can end above it
        place = kernels.compiled(placement).place if self.compiled else placement.place
        clash = place(*self._args, watch, limit, self._state)
        if clash == -2:
            return None
        return (self._out.tolist() if self.compiled else self._out), int(clash)


def bucket_width(cols: Records) -> tuple[int, int]:
    """(operators per bucket, buckets) of the kernel's index: a few median lifetimes (balancing
    "buckets read per query" against "records met that started or ended beside the query's
    interval"), widened if operator numbers are sparse."""
    lifetimes = np.sort(cols.last - cols.first + 1)
    last_op, median = max(0, int(cols.last.max())), int(lifetimes[len(lifetimes) // 2])
    width = max(1, _MEDIAN_LIFETIMES_PER_BUCKET * median, (last_op + 1) // (4 * len(cols.first) + 16))
    return width, last_op // width + 1


# The bucket width in median lifetimes. Measured on the four benchmark shapes at 100,000 records
# (median lifetime 2), the Python loop: widths of 2 to 8 operators cost about the same on chain,
# residual and transformer, and 6 costs 15% less than 2 on branching; the compiled loop, alike.
_MEDIAN_LIFETIMES_PER_BUCKET = 3
