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


def compress_time(records: Sequence[UsageRecord]) -> list[UsageRecord]:
    """The same records on a dense timeline: only the relative order of interval ends matters for
    conflicts, so peers' instances with times in the millions plan as fast as small models."""
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
    dense = compress_time(records)
    return breadth_by_step(dense, num_ops(dense))


def breadth_by_step(records: Sequence[UsageRecord], steps: int) -> list[int]:
    """Bytes alive at each of `steps` operators (at least up to the last record's), by a sweep
    over interval ends; on the real timeline, as pictures need every operator."""
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


def positional_maxima(records: Sequence[UsageRecord]) -> list[int]:
    """The k-th entry is the largest k-th-largest size over all operator profiles.

    Only the profiles just before some record ends matter: any other profile is a subset of the
    next one, and a subset's k-th largest size is never larger.
    """
    dense = compress_time(records)
    starts_at: dict[int, list[int]] = {}
    ends_at: dict[int, list[int]] = {}
    for r in dense:
        starts_at.setdefault(r.first_op, []).append(r.size)
        ends_at.setdefault(r.last_op, []).append(r.size)
    live: dict[int, int] = {}  # size -> count of live records
    live_count = 0
    maxima: list[int] = []
    for t in range(num_ops(dense)):
        for size in starts_at.get(t, ()):
            live[size] = live.get(size, 0) + 1
            live_count += 1
        if t in ends_at:
            if live_count > _NUMPY_FROM:  # many live records: one vector step beats a loop
                maxima = _raise_maxima(maxima, live)
            else:
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
                live_count -= 1
                if not live[size]:
                    del live[size]
    return maxima


_NUMPY_FROM = 64  # live records above which positional_maxima sorts with numpy


def _raise_maxima(maxima: list[int], live: dict[int, int]) -> list[int]:
    """maxima[k] raised to the k-th largest live size (sizes repeated by their counts)."""
    import numpy as np

    sizes = np.repeat(np.fromiter(live.keys(), dtype=np.int64, count=len(live)),
                      np.fromiter(live.values(), dtype=np.int64, count=len(live)))
    sizes = -np.sort(-sizes)
    old = np.array(maxima + [0] * max(0, len(sizes) - len(maxima)), dtype=np.int64)
    old[: len(sizes)] = np.maximum(old[: len(sizes)], sizes)
    return [int(m) for m in old]


def overhead_pct(total: int, bound: int) -> float:
    """How far a plan's total is over its lower bound, in percent (2 decimals)."""
    return 0.0 if bound == 0 else round(100.0 * (total - bound) / bound, 2)
