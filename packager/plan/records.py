"""The data every strategy shares: usage records, the two kinds of plan, and the lower bounds.

A usage record says that a buffer of `size` bytes is alive from operator `first_op` to operator
`last_op`, both inclusive. Two records conflict when their intervals intersect. Strategies are pure
functions from a sequence of records (plus alignment) to a plan; plans refer to records by their
position in that sequence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import bisect
from typing import Sequence

import numpy as np


@dataclass(frozen=True, slots=True)
class UsageRecord:
    tensor: int  # the tensor index in its subgraph, or a synthetic id (scratch buffers, CSV ids)
    first_op: int
    last_op: int  # inclusive
    size: int  # bytes

    def conflicts(self, other: "UsageRecord") -> bool:
        return not (self.last_op < other.first_op or other.last_op < self.first_op)


@dataclass(frozen=True)
class OffsetPlan:
    """One arena; `offsets[i]` is the byte offset of records[i]."""

    strategy: str
    offsets: tuple[int, ...]
    arena: int  # max(offset + size) over all records, 0 when there are none
    alignment: int = 1
    # Set by the exact search when it proved no offset plan of these records has a smaller arena.
    proven_optimal: bool = False
    # Set when a search stopped on its safety-net time limit instead of its work budget: only
    # then may the plan depend on the machine's speed and load.
    time_limit_hit: bool = False
    # Set by a search that stopped on a rule counting its work before closing the gap to its
    # bound: why, in words ("no progress in 200,000 nodes"). The plan is still deterministic.
    search_stopped: str = ""


@dataclass(frozen=True)
class ObjectPlan:
    """Shared objects; records[i] lives in object `assignment[i]` of size `object_sizes[...]`."""

    strategy: str
    assignment: tuple[int, ...]
    object_sizes: tuple[int, ...]
    # For the 2D texture variant: (width, height) of each object; empty for plain byte objects.
    object_extents: tuple[tuple[int, int], ...] = field(default=())
    # Set by an exact strategy that proved no shared-object plan of these records is smaller.
    proven_optimal: bool = False
    # Set by an exact strategy that stopped, on a rule counting its work, with a gap to the lower
    # bound left open: why, in words. The plan is still deterministic.
    search_stopped: str = ""

    @property
    def total(self) -> int:
        return sum(self.object_sizes)


def align_up(value: int, alignment: int) -> int:
    if alignment <= 1:
        return value
    return -(-value // alignment) * alignment


def arena_of(records: Sequence[UsageRecord], offsets: Sequence[int]) -> int:
    return max((o + r.size for r, o in zip(records, offsets)), default=0)


def num_ops(records: Sequence[UsageRecord]) -> int:
    return max((r.last_op for r in records), default=-1) + 1


# -- the records as int64 columns (numpy), for the lower bounds and the breadth-first orders -----

# Sums of sizes must stay inside int64: inputs with larger numbers take the pure-Python forms.
_COLUMN_LIMIT = 1 << 62


class TimeColumns:
    """The records' fields as int64 arrays, with their times on the dense timeline (see
    `compress_time`): `dense_first` is the rank of a record's first operator among the distinct
    first operators, `dense_last` the rank of the last of those not after its last operator."""

    def __init__(self, records: Sequence[UsageRecord]) -> None:
        n = len(records)
        self.first = np.fromiter((r.first_op for r in records), dtype=np.int64, count=n)
        self.last = np.fromiter((r.last_op for r in records), dtype=np.int64, count=n)
        self.size = np.fromiter((r.size for r in records), dtype=np.int64, count=n)
        ordered = np.sort(self.first)
        if n > 1:
            ordered = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
        self.starts = ordered  # the distinct first operators
        self.dense_first = np.searchsorted(ordered, self.first)
        self.dense_last = np.searchsorted(ordered, self.last, side="right") - 1
        self.steps = len(ordered)  # the dense timeline's length
        self.maxima = None  # positional_maxima, once worked out (the bound and two strategies use them)
        self.breadth_order = None  # breadth_first_order, once worked out (two strategies use it)

    def breadths(self):
        """Bytes alive at each dense step (int64 array)."""
        delta = np.zeros(self.steps + 1, dtype=np.int64)
        np.add.at(delta, self.dense_first, self.size)
        np.add.at(delta, self.dense_last + 1, -self.size)
        return np.cumsum(delta[:-1])


_last_columns: list = [None, None]


def time_columns(records: Sequence[UsageRecord]) -> TimeColumns | None:
    """The records as columns, or None when a number is too large for int64 sums (or a record
    is malformed). Kept for the last tuple of records: strategies and bounds of one problem share
    them (a tuple of frozen records cannot change)."""
    if _last_columns[0] is records:
        return _last_columns[1]
    try:
        cols = TimeColumns(records)
    except (OverflowError, TypeError, ValueError):
        return None
    n = len(records)
    if n and (int(cols.size.min()) < 0 or int(cols.first.min()) < 0
              or bool((cols.last < cols.first).any())
              or int(cols.size.max()) * n >= _COLUMN_LIMIT or int(cols.last.max()) >= _COLUMN_LIMIT):
        return None
    if isinstance(records, tuple):
        _last_columns[:] = [records, cols]
    return cols


def compress_time(records: Sequence[UsageRecord]) -> list[UsageRecord]:
    """The same records on a dense timeline: only the relative order of interval ends matters for
    conflicts, so peers' instances with times in the millions plan as fast as small models."""
    cols = time_columns(records)
    if cols is None:
        return _compress_time_python(records)
    return [UsageRecord(r.tensor, f, l, r.size)
            for r, f, l in zip(records, cols.dense_first.tolist(), cols.dense_last.tolist())]


def _compress_time_python(records: Sequence[UsageRecord]) -> list[UsageRecord]:
    starts = sorted({r.first_op for r in records})
    rank = {t: i for i, t in enumerate(starts)}
    out = []
    for r in records:
        # last_op maps to the last start point not after it: conflicts are unchanged.
        last = bisect.bisect_right(starts, r.last_op) - 1
        out.append(UsageRecord(r.tensor, rank[r.first_op], last, r.size))
    return out


def operator_profiles(records: Sequence[UsageRecord]) -> list[list[int]]:
    """For each distinct start time (in order), the positions of the records alive then. Every
    set of records alive together is contained in one of these profiles."""
    dense = compress_time(records)
    profiles: list[list[int]] = [[] for _ in range(num_ops(dense))]
    for i, r in enumerate(dense):
        for t in range(r.first_op, r.last_op + 1):
            profiles[t].append(i)
    return profiles


def operator_breadths(records: Sequence[UsageRecord]) -> list[int]:
    """Sum of the sizes alive at each distinct start time."""
    cols = time_columns(records)
    if cols is None:
        dense = compress_time(records)
        return _breadth_by_step_python(dense, num_ops(dense))
    return cols.breadths().tolist()


def breadth_by_step(records: Sequence[UsageRecord], steps: int) -> list[int]:
    """Bytes alive at each of `steps` operators (at least up to the last record's), by a sweep
    over interval ends; on the real timeline, as pictures need every operator."""
    cols = time_columns(records)
    if cols is None:
        return _breadth_by_step_python(records, steps)
    steps = max(steps, int(cols.last.max()) + 1 if len(records) else 0)
    delta = np.zeros(steps + 1, dtype=np.int64)
    np.add.at(delta, cols.first, cols.size)
    np.add.at(delta, cols.last + 1, -cols.size)
    return np.cumsum(delta[:-1]).tolist()


def _breadth_by_step_python(records: Sequence[UsageRecord], steps: int) -> list[int]:
    steps = max(steps, num_ops(records))
    delta = [0] * (steps + 1)
    for r in records:
        delta[r.first_op] += r.size
        delta[r.last_op + 1] -= r.size
    out, running = [], 0
    for t in range(steps):
        running += delta[t]
        out.append(running)
    return out


def offset_lower_bound(records: Sequence[UsageRecord]) -> int:
    """No offset plan can be smaller than the largest operator breadth."""
    return max(operator_breadths(records), default=0)


def object_lower_bound(records: Sequence[UsageRecord]) -> int:
    """Sum of the positional maxima: no shared-object plan can be smaller."""
    return sum(positional_maxima(records))


# Pairs (record, step) handled at once by positional_maxima: bounds its memory (~80 MB).
_PAIRS_AT_ONCE = 2_000_000


def positional_maxima(records: Sequence[UsageRecord]) -> list[int]:
    """The k-th entry is the largest k-th-largest size over all operator profiles.

    Only the profiles just before some record ends matter: any other profile is a subset of the
    next one, and a subset's k-th largest size is never larger. Each (record, such profile it is
    in) pair is ranked within its profile by size, largest first, and the k-th entry is the
    largest size ranked k; the pairs are taken a run of profiles at a time.
    """
    cols = time_columns(records)
    if cols is None:
        return _positional_maxima_python(records)
    if cols.maxima is None:
        cols.maxima = _positional_maxima(cols) if len(records) else np.zeros(0, dtype=np.int64)
    return cols.maxima.tolist()


def _positional_maxima(cols: TimeColumns):
    """positional_maxima of non-empty records' columns, as an int64 array."""
    # The profiles that matter: the distinct dense last steps; each record is in those of them
    # from its first step to its last.
    ends = np.sort(cols.dense_last)
    ends = ends[np.concatenate(([True], ends[1:] != ends[:-1]))]
    lo = np.searchsorted(ends, cols.dense_first)  # the first such profile holding the record
    hi = np.searchsorted(ends, cols.dense_last, side="right")  # past the last one
    by_size = np.argsort(-cols.size, kind="stable")  # largest first
    alive = np.zeros(len(ends) + 1, dtype=np.int64)  # records per profile
    np.add.at(alive, lo, 1)
    np.add.at(alive, hi, -1)
    pairs_before = np.concatenate(([0], np.cumsum(np.cumsum(alive[:-1]))))
    maxima = np.zeros(0, dtype=np.int64)
    start = 0
    while start < len(ends):
        # A run of profiles [start, stop) whose pairs fit in memory (at least one profile).
        stop = int(np.searchsorted(pairs_before, pairs_before[start] + _PAIRS_AT_ONCE, side="right")) - 1
        stop = min(len(ends), max(stop, start + 1))
        maxima = _raise_maxima_run(maxima, cols.size, by_size, lo, hi, start, stop)
        start = stop
    return maxima


def _raise_maxima_run(maxima, size, by_size, lo, hi, start: int, stop: int):
    """maxima raised by the profiles [start, stop): within each, the k-th largest size."""
    # The records in some profile of the run, largest first; each with its profiles clipped.
    first = np.maximum(lo[by_size], start)
    past = np.minimum(hi[by_size], stop)
    take = first < past
    rec_size, first, past = size[by_size][take], first[take], past[take]
    count = past - first
    pairs = int(count.sum())
    if not pairs:
        return maxima
    # One pair per (record, profile), records largest first: a stable sort by profile keeps
    # that order inside each profile.
    owner = np.repeat(np.arange(len(count)), count)
    step = np.arange(pairs) - np.repeat(np.cumsum(count) - count, count) + first[owner]
    order = np.argsort(step, kind="stable")
    step, pair_size = step[order], rec_size[owner[order]]
    begins = np.searchsorted(step, step)  # where each pair's profile begins
    k = np.arange(pairs) - begins  # its rank inside the profile, largest first
    if int(k.max()) + 1 > len(maxima):
        maxima = np.concatenate((maxima, np.zeros(int(k.max()) + 1 - len(maxima), dtype=np.int64)))
    np.maximum.at(maxima, k, pair_size)
    return maxima


def _positional_maxima_python(records: Sequence[UsageRecord]) -> list[int]:
    dense = _compress_time_python(records)
    starts_at: dict[int, list[int]] = {}
    ends_at: dict[int, list[int]] = {}
    for r in dense:
        starts_at.setdefault(r.first_op, []).append(r.size)
        ends_at.setdefault(r.last_op, []).append(r.size)
    live: dict[int, int] = {}  # size -> count of live records
    maxima: list[int] = []
    for t in range(num_ops(dense)):
        for size in starts_at.get(t, ()):
            live[size] = live.get(size, 0) + 1
        if t in ends_at:
            k = 0  # the live sizes, largest first, each as often as it is live
            for size in sorted(live, reverse=True):
                for _ in range(live[size]):
                    if k == len(maxima):
                        maxima.append(size)
                    elif maxima[k] < size:
                        maxima[k] = size
                    k += 1
            for size in ends_at[t]:
                live[size] -= 1
                if not live[size]:
                    del live[size]
    return maxima


# -- the breadth-first order ---------------------------------------------------------------------

def breadth_first_order(records: Sequence[UsageRecord]) -> list[int]:
    """Operators by breadth, widest first (ties: earlier); at each, its records not taken yet,
    largest first (ties: earlier position): the order both greedy-by-breadth strategies take the
    records in. A record thus comes at the first operator of that order among those it is alive
    at: the one of least rank over its interval (a range minimum), so the whole order is one sort
    by (that rank, -size, position). Only the distinct start times count as operators: any other
    operator's records are a subset of the last start's before it."""
    cols = time_columns(records)
    if cols is None:
        return _breadth_first_order_python(records)
    if not len(records):
        return []
    if cols.breadth_order is None:
        ops = np.argsort(-cols.breadths(), kind="stable")  # widest first, ties: earlier operator
        rank = np.empty(len(ops), dtype=np.int64)
        rank[ops] = np.arange(len(ops))
        visited = _range_minima(rank, cols.dense_first, cols.dense_last)
        cols.breadth_order = np.lexsort((-cols.size, visited))  # stable: ties keep positions
    return cols.breadth_order.tolist()


def _range_minima(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """min(values[lo[i] .. hi[i]]) for every i (inclusive), by a sparse table: level j holds the
    minima of the runs of 2^j values; any range is covered by two runs of one level."""
    length = hi - lo + 1
    level = np.zeros(len(lo), dtype=np.int64)
    while True:  # the largest level whose run fits in each range
        up = 2 ** (level + 1) <= length
        if not up.any():
            break
        level += up
    levels = [values]
    while len(levels) <= int(level.max(initial=0)):  # only the levels some range takes
        half = 2 ** (len(levels) - 1)
        below = levels[-1]
        levels.append(np.minimum(below[:-half], below[half:]))
    out = np.empty(len(lo), dtype=np.int64)
    for j in np.unique(level).tolist():
        at = level == j
        runs = levels[j]
        out[at] = np.minimum(runs[lo[at]], runs[hi[at] - 2 ** j + 1])
    return out


def _breadth_first_order_python(records: Sequence[UsageRecord]) -> list[int]:
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


def overhead_pct(total: int, bound: int) -> float:
    """How far a plan's total is over its lower bound, in percent (2 decimals)."""
    return 0.0 if bound == 0 else round(100.0 * (total - bound) / bound, 2)
