"""The independent checker. It trusts no strategy: every plan passes through it before anything
prints or writes it, and a failure is a bug (PlanError), never a warning.

Written apart from the strategies on purpose: it shares nothing with them but the record type.
"""

from __future__ import annotations

import bisect
from typing import Mapping, Sequence

from packager.errors import PlanError
from packager.plan.records import ObjectPlan, OffsetPlan, UsageRecord


def _fail(plan_name: str, message: str) -> None:
    raise PlanError(f"invalid plan '{plan_name}': {message}")


def check_records(records: Sequence[UsageRecord]) -> None:
    for i, r in enumerate(records):
        if r.size < 0 or r.first_op < 0 or r.last_op < r.first_op:
            raise PlanError(f"record {i} (tensor {r.tensor}) is malformed: {r}")


def _time_sweep(records: Sequence[UsageRecord]) -> list[tuple[bool, int]]:
    """In time order, (True, i) for each record ending before an op and (False, i) at its start.
    It depends on the records only: the portfolio checks many plans of the same records, so the
    last sweep is kept (for the same records object, which is immutable)."""
    if _last_sweep[0] is records:
        return _last_sweep[1]
    starts = sorted(range(len(records)), key=lambda i: (records[i].first_op, i))
    ends = sorted(range(len(records)), key=lambda i: (records[i].last_op, i))
    events: list[tuple[bool, int]] = []
    e = 0
    for i in starts:
        t = records[i].first_op
        while e < len(ends) and records[ends[e]].last_op < t:
            events.append((True, ends[e]))
            e += 1
        events.append((False, i))
    if isinstance(records, tuple):  # a list could change under the same identity
        _last_sweep[:] = [records, events]
    return events


_last_sweep: list = [None, None]


def check_offset_plan(
    records: Sequence[UsageRecord],
    plan: OffsetPlan,
    aliases: Mapping[int, int] | None = None,
    alias_intervals: Mapping[int, tuple[int, int]] | None = None,
) -> None:
    """Raise PlanError unless the plan is valid for the records.

    Rules: every record has an offset; offsets are non-negative multiples of the alignment; every
    record lies inside the arena; records alive at the same operator never overlap in memory;
    every alias (tensor -> tensor whose buffer it uses) points to a planned tensor whose interval
    covers the alias's own interval.
    """
    name = plan.strategy
    check_records(records)
    if len(plan.offsets) != len(records):
        _fail(name, f"{len(records)} records but {len(plan.offsets)} offsets: a record has no place")
    align = max(plan.alignment, 1)
    for i, (r, off) in enumerate(zip(records, plan.offsets)):
        if off is None or off < 0:
            _fail(name, f"tensor {r.tensor} has no valid offset ({off})")
        if off % align:
            _fail(name, f"tensor {r.tensor} at offset {off} is not {align}-byte aligned")
        if off + r.size > plan.arena:
            _fail(name, f"tensor {r.tensor} [{off}, {off + r.size}) lies outside the {plan.arena}-byte arena")
    # Sweep over time, keeping the live records sorted by offset: with the live set disjoint, a new
    # record can only collide with its neighbours in that order.
    live: list[tuple[int, int]] = []  # (offset, record position), zero-size records left out
    for ends, i in _time_sweep(records):
        if records[i].size == 0:
            continue
        key = (plan.offsets[i], i)
        if ends:
            live.pop(bisect.bisect_left(live, key))
            continue
        pos = bisect.bisect_left(live, key)
        lo, hi = plan.offsets[i], plan.offsets[i] + records[i].size
        for nb in (pos - 1, pos):
            if 0 <= nb < len(live):
                o, j = live[nb]
                if o < hi and lo < o + records[j].size:
                    a, b = records[i], records[j]
                    _fail(name, f"tensors {b.tensor} and {a.tensor} are alive together "
                                f"(ops {max(a.first_op, b.first_op)}..{min(a.last_op, b.last_op)}) "
                                f"and overlap in memory")
        live.insert(pos, key)
    _check_aliases(name, records, aliases, alias_intervals)


def _check_aliases(name, records, aliases, alias_intervals) -> None:
    if not aliases:
        return
    by_tensor = {r.tensor: r for r in records}
    for alias, target in aliases.items():
        if target not in by_tensor:
            _fail(name, f"alias {alias} points to tensor {target}, which is not planned")
        if alias_intervals and alias in alias_intervals:
            first, last = alias_intervals[alias]
            t = by_tensor[target]
            if not (t.first_op <= first and last <= t.last_op):
                _fail(name, f"alias {alias} lives over ops {first}..{last} but tensor {target} "
                            f"whose buffer it uses only over {t.first_op}..{t.last_op}")


def check_object_plan(records: Sequence[UsageRecord], plan: ObjectPlan,
                      extents: Sequence[tuple[int, int]] | None = None) -> None:
    """Raise PlanError unless every record has an object at least its size (and extent, for
    textures), and no two records alive at the same operator share an object."""
    name = plan.strategy
    check_records(records)
    if len(plan.assignment) != len(records):
        _fail(name, f"{len(records)} records but {len(plan.assignment)} assignments")
    n_obj = len(plan.object_sizes)
    if plan.object_extents and len(plan.object_extents) != n_obj:
        _fail(name, "object extents do not match the objects")
    members: list[list[int]] = [[] for _ in range(n_obj)]
    for i, (r, obj) in enumerate(zip(records, plan.assignment)):
        if obj is None or not 0 <= obj < n_obj:
            _fail(name, f"tensor {r.tensor} has no object ({obj})")
        if plan.object_sizes[obj] < r.size:
            _fail(name, f"tensor {r.tensor} ({r.size} B) does not fit object {obj} "
                        f"({plan.object_sizes[obj]} B)")
        if extents is not None:
            if not plan.object_extents:
                _fail(name, "a texture plan needs object extents")
            (w, h), (ow, oh) = extents[i], plan.object_extents[obj]
            if w > ow or h > oh:
                _fail(name, f"tensor {r.tensor} ({w}x{h}) does not fit object {obj} ({ow}x{oh})")
        members[obj].append(i)
    for obj, idx in enumerate(members):
        idx.sort(key=lambda i: (records[i].first_op, records[i].last_op))
        for a, b in zip(idx, idx[1:]):
            if records[b].first_op <= records[a].last_op:
                _fail(name, f"tensors {records[a].tensor} and {records[b].tensor} share object "
                            f"{obj} while both alive")
