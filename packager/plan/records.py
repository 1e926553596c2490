"""The data every strategy shares: usage records, the two kinds of plan, and the lower bounds.

A usage record says that a buffer of `size` bytes is alive from operator `first_op` to operator
`last_op`, both inclusive. Two records conflict when their intervals intersect. Strategies are pure
functions from a sequence of records (plus alignment) to a plan; plans refer to records by their
position in that sequence.

`Records` is that sequence as the data: four int64 columns whose bounds are checked once when it
is made, so nothing downstream needs a guard against numbers beyond int64.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import Callable, Iterator, Sequence

import numpy as np

from packager.errors import PlanError


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
    if isinstance(records, Records):
        return int(records.last.max(initial=-1)) + 1
    return max((r.last_op for r in records), default=-1) + 1


# -- the records as columns ----------------------------------------------------------------------

# Every time, and the sum of all sizes, stays below this: then every sum the planners and the
# checker make (offsets, ends, breadths, arenas with alignment padding) stays inside int64.
LIMIT = 1 << 62

_FIELDS = ("tensor", "first_op", "last_op", "size")


class Records(Sequence):
    """Usage records as four read-only int64 columns (`tensor`, `first`, `last`, `size`), their
    bounds checked once when made (PlanError otherwise): sizes >= 0, 0 <= first <= last, times
    and the sum of the sizes below LIMIT. An immutable value; as a sequence its items are
    UsageRecords, for readable code. What is derived from the columns (the dense timeline, the
    breadths, the positional maxima, the breadth-first order) is worked out once, when asked."""

    def __init__(self, tensor, first, last, size, items: tuple[UsageRecord, ...] | None = None) -> None:
        """From four equally long columns (arrays or lists of ints); `items`, when given, are
        the same records as UsageRecords (kept, not made again)."""
        columns = []
        for name, values in zip(_FIELDS, (tensor, first, last, size)):
            try:
                column = np.array(values, dtype=np.int64)
            except (OverflowError, TypeError, ValueError):
                raise PlanError(_first_fault(tensor, first, last, size, name)) from None
            if column.ndim != 1:
                raise PlanError(f"records: the {name} column is not a list of integers")
            columns.append(_read_only(column))
        self.tensor, self.first, self.last, self.size = columns
        if len({len(c) for c in columns}) != 1:
            raise PlanError("records: the columns differ in length")
        self._items = items
        self._derived: dict[str, object] = {}
        fault = self._fault()
        if fault is not None:
            raise PlanError(fault)

    @classmethod
    def of(cls, records: Sequence[UsageRecord]) -> Records:
        """Records as they are, or made from a sequence of UsageRecord-like objects."""
        if isinstance(records, Records):
            return records
        items = tuple(records)
        columns = []
        for name in _FIELDS:
            try:
                columns.append(np.fromiter(map(attrgetter(name), items), dtype=np.int64, count=len(items)))
            except (OverflowError, TypeError, ValueError):
                columns.append([getattr(r, name) for r in items])  # the constructor names the fault
        return cls(*columns, items=items if all(type(r) is UsageRecord for r in items) else None)

    def _fault(self) -> str | None:
        """The first broken bound, in words; None when every bound holds."""
        n = len(self.size)
        bad = (self.size < 0) | (self.first < 0) | (self.last < self.first)
        if bad.any():
            i = int(np.argmax(bad))
            return f"record {i} (tensor {int(self.tensor[i])}) is malformed: {self[i]}"
        if n and int(self.last.max()) >= LIMIT:
            i = int(np.argmax(self.last >= LIMIT))
            return f"record {i} (tensor {int(self.tensor[i])}) ends at step {int(self.last[i])}: times must stay below 2^62"
        if n and int(self.size.max()) >= LIMIT // n:  # then the exact sum decides
            total = sum(self.size.tolist())
            if total >= LIMIT:
                return f"the records' sizes add up to {total} B: they must stay below 2^62 B"
        return None

    # -- the sequence of UsageRecords ----------------------------------------------------------

    @property
    def items(self) -> tuple[UsageRecord, ...]:
        if self._items is None:
            self._items = tuple(map(UsageRecord, self.tensor.tolist(), self.first.tolist(),
                                    self.last.tolist(), self.size.tolist()))
        return self._items

    def __len__(self) -> int:
        return len(self.size)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Records(self.tensor[index], self.first[index], self.last[index], self.size[index],
                           None if self._items is None else self._items[index])
        return (self._items or self.items)[index]  # (a lookup per record in the strategies' loops)

    def __iter__(self) -> Iterator[UsageRecord]:
        return iter(self.items)

    def __add__(self, other: Sequence[UsageRecord]) -> Records:
        other = Records.of(other)
        items = (self._items + other._items) if self._items is not None and other._items is not None else None
        return Records(*(np.concatenate((a, b)) for a, b in zip(self.columns(), other.columns())), items=items)

    def __radd__(self, other: Sequence[UsageRecord]) -> Records:
        return Records.of(other) + self

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Records):
            return all(np.array_equal(a, b) for a, b in zip(self.columns(), other.columns()))
        if isinstance(other, (tuple, list)):
            return self.items == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.items)

    def __repr__(self) -> str:
        return f"Records({self.items!r})"

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.tensor, self.first, self.last, self.size

    # -- derived columns, each worked out once -------------------------------------------------

    def derived(self, key: str, make: Callable[[], object]):
        """What another module works out from these records alone, made once and kept with them
        (the checker's segment tree: every plan of one problem is checked against the same)."""
        if key not in self._derived:
            self._derived[key] = make()
        return self._derived[key]

    @cached_property
    def starts(self) -> np.ndarray:
        """The distinct first operators, in order: the steps of the dense timeline."""
        ordered = np.sort(self.first)
        if len(ordered) > 1:
            ordered = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
        return _read_only(ordered)

    @property
    def steps(self) -> int:
        """The dense timeline's length."""
        return len(self.starts)

    @cached_property
    def dense_first(self) -> np.ndarray:
        """Each record's first step on the dense timeline: the rank of its first operator."""
        return _read_only(np.searchsorted(self.starts, self.first))

    @cached_property
    def dense_last(self) -> np.ndarray:
        """Each record's last step on the dense timeline: the last start not after its last operator."""
        return _read_only(np.searchsorted(self.starts, self.last, side="right") - 1)

    @cached_property
    def breadths(self) -> np.ndarray:
        """Bytes alive at each dense step."""
        delta = np.zeros(self.steps + 1, dtype=np.int64)
        np.add.at(delta, self.dense_first, self.size)
        np.add.at(delta, self.dense_last + 1, -self.size)
        return _read_only(np.cumsum(delta[:-1]))

    @cached_property
    def maxima(self) -> np.ndarray:
        """positional_maxima, as an int64 array."""
        return _read_only(_positional_maxima(self) if len(self) else np.zeros(0, dtype=np.int64))

    @cached_property
    def breadth_order(self) -> np.ndarray:
        """breadth_first_order, as an int64 array."""
        if not len(self):
            return _read_only(np.zeros(0, dtype=np.int64))
        ops = np.argsort(-self.breadths, kind="stable")  # widest first, ties: earlier operator
        rank = np.empty(len(ops), dtype=np.int64)
        rank[ops] = np.arange(len(ops))
        visited = _range_minima(rank, self.dense_first, self.dense_last)
        return _read_only(np.lexsort((-self.size, visited)))  # stable: ties keep positions


def _read_only(column: np.ndarray) -> np.ndarray:
    column.flags.writeable = False
    return column


def _first_fault(tensor, first, last, size, name: str) -> str:
    """Why a column does not fit int64 (a number beyond it, or not a number): the first record
    where it does not, in words."""
    plain = lambda v: int(v) if isinstance(v, np.integer) else v
    for i, value in enumerate(dict(zip(_FIELDS, (tensor, first, last, size)))[name]):
        whole = isinstance(value, (int, np.integer))
        if not whole or not -(1 << 63) <= int(value) < 1 << 63:
            shown = UsageRecord(*(plain(column[i]) for column in (tensor, first, last, size)))
            why = "beyond int64" if whole else "not an integer"
            return f"record {i} (tensor {shown.tensor}) is malformed: {shown} ({name} {why})"
    return f"records: the {name} column is not a list of integers"


def compress_time(records: Sequence[UsageRecord]) -> Records:
    """The same records on a dense timeline: only the relative order of interval ends matters for
    conflicts, so peers' instances with times in the millions plan as fast as small models."""
    cols = Records.of(records)
    return Records(cols.tensor, cols.dense_first, cols.dense_last, cols.size)


def operator_profiles(records: Sequence[UsageRecord]) -> list[list[int]]:
    """For each distinct start time (in order), the positions of the records alive then. Every
    set of records alive together is contained in one of these profiles."""
    cols = Records.of(records)
    profiles: list[list[int]] = [[] for _ in range(cols.steps)]
    for i, (first, last) in enumerate(zip(cols.dense_first.tolist(), cols.dense_last.tolist())):
        for t in range(first, last + 1):
            profiles[t].append(i)
    return profiles


def operator_breadths(records: Sequence[UsageRecord]) -> list[int]:
    """Sum of the sizes alive at each distinct start time."""
    return Records.of(records).breadths.tolist()


def breadth_by_step(records: Sequence[UsageRecord], steps: int) -> list[int]:
    """Bytes alive at each of `steps` operators (at least up to the last record's), by a sweep
    over interval ends; on the real timeline, as pictures need every operator."""
    cols = Records.of(records)
    steps = max(steps, int(cols.last.max()) + 1 if len(cols) else 0)
    delta = np.zeros(steps + 1, dtype=np.int64)
    np.add.at(delta, cols.first, cols.size)
    np.add.at(delta, cols.last + 1, -cols.size)
    return np.cumsum(delta[:-1]).tolist()


def offset_lower_bound(records: Sequence[UsageRecord]) -> int:
    """No offset plan can be smaller than the largest operator breadth."""
    return int(Records.of(records).breadths.max(initial=0))


def object_lower_bound(records: Sequence[UsageRecord]) -> int:
    """Sum of the positional maxima: no shared-object plan can be smaller."""
    return int(Records.of(records).maxima.sum())


# Pairs (record, step) handled at once by positional_maxima: bounds its memory (~80 MB).
_PAIRS_AT_ONCE = 2_000_000


def positional_maxima(records: Sequence[UsageRecord]) -> list[int]:
    """The k-th entry is the largest k-th-largest size over all operator profiles.

    Only the profiles just before some record ends matter: any other profile is a subset of the
    next one, and a subset's k-th largest size is never larger. Each (record, such profile it is
    in) pair is ranked within its profile by size, largest first, and the k-th entry is the
    largest size ranked k; the pairs are taken a run of profiles at a time.
    """
    return Records.of(records).maxima.tolist()


def _positional_maxima(cols: Records):
    """positional_maxima of non-empty records, as an int64 array."""
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


# -- the breadth-first order ---------------------------------------------------------------------

def breadth_first_order(records: Sequence[UsageRecord]) -> list[int]:
    """Operators by breadth, widest first (ties: earlier); at each, its records not taken yet,
    largest first (ties: earlier position): the order both greedy-by-breadth strategies take the
    records in. A record thus comes at the first operator of that order among those it is alive
    at: the one of least rank over its interval (a range minimum), so the whole order is one sort
    by (that rank, -size, position). Only the distinct start times count as operators: any other
    operator's records are a subset of the last start's before it."""
    return Records.of(records).breadth_order.tolist()


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


def overhead_pct(total: int, bound: int) -> float:
    """How far a plan's total is over its lower bound, in percent (2 decimals)."""
    return 0.0 if bound == 0 else round(100.0 * (total - bound) / bound, 2)
