"""The independent checker. It trusts no strategy: every plan passes through it before anything
prints or writes it, and a failure is a bug (PlanError), never a warning. Written apart from the
strategies on purpose: it shares nothing with them but the record type.

The rules. An offset plan gives every record a non-negative offset, a multiple of the alignment,
inside the arena, and no two records alive at the same operator overlap in memory. A
shared-object plan gives every record an object at least its size (and extent, for textures),
and no two records alive at the same operator share an object. Every alias points to a planned
tensor whose lifetime covers its own.

The sweep below decides, and names the first fault in plain words. From VECTOR_FROM records the
vector form (validate_vector.py) proves a valid plan faster; on a fault the sweep runs to name it.

A check returns a Proven value: the plan with the records it was proven for. A later step handed
a plan with the same numbers asks `proven.same_numbers(plan, records)` instead of proving it again.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from packager.errors import PlanError
from packager.plan import validate_vector
from packager.plan.records import ObjectPlan, OffsetPlan, Records, UsageRecord

# From this many records the vector form proves a valid plan (a model's few hundred take the sweep).
VECTOR_FROM = 2_000


@dataclass(frozen=True, eq=False)
class Proven:
    """A plan the checker passed, and the records it holds for."""

    plan: OffsetPlan | ObjectPlan
    records: Records

    def same_numbers(self, plan: OffsetPlan | ObjectPlan, records: Sequence[UsageRecord]) -> bool:
        """Whether `plan` states the numbers proven here, for the same records: then it keeps the
        rules too (the aliases and a texture's extents, checked beside the numbers, aside)."""
        return (_numbers(plan) == _numbers(self.plan)
                and (records is self.records or Records.of(records) == self.records))


def _numbers(plan: OffsetPlan | ObjectPlan) -> tuple:
    """What the verdict on a plan depends on, besides the records."""
    if isinstance(plan, OffsetPlan):
        return "offsets", tuple(plan.offsets), plan.arena, plan.alignment
    return "objects", tuple(plan.assignment), tuple(plan.object_sizes), tuple(plan.object_extents)


def _fail(plan_name: str, message: str) -> None:
    raise PlanError(f"invalid plan '{plan_name}': {message}")


def check_records(records: Sequence[UsageRecord]) -> Records:
    """The records as Records: PlanError naming the first malformed one."""
    return Records.of(records)


# -- offset plans --------------------------------------------------------------------------------

def check_offset_plan(records: Sequence[UsageRecord], plan: OffsetPlan,
                      aliases: Mapping[int, int] | None = None,
                      alias_intervals: Mapping[int, tuple[int, int]] | None = None) -> Proven:
    """Raise PlanError unless the plan keeps the rules (module docstring) for the records."""
    records = check_records(records)
    vector = validate_vector.offsets_pass(records, plan) if len(records) >= VECTOR_FROM else None
    if vector is not True:
        fault = offset_fault(records, plan)
        if fault is not None:
            _fail(plan.strategy, fault)
        if vector is False:  # the vector form saw a fault the sweep did not: refuse, never guess
            _fail(plan.strategy, "the checker's two forms disagree on this plan")
    _check_aliases(plan.strategy, records, aliases, alias_intervals)
    return Proven(plan, records)


def offset_fault(records: Records, plan: OffsetPlan) -> str | None:
    """The first fault of an offset plan, in words (None: it keeps every rule but the aliases):
    record by record, then a sweep over time."""
    if len(plan.offsets) != len(records):
        return f"{len(records)} records but {len(plan.offsets)} offsets: a record has no place"
    align = max(plan.alignment, 1)
    for r, off in zip(records, plan.offsets):
        if off is None or off < 0:
            return f"tensor {r.tensor} has no valid offset ({off})"
        if off % align:
            return f"tensor {r.tensor} at offset {off} is not {align}-byte aligned"
        if off + r.size > plan.arena:
            return f"tensor {r.tensor} [{off}, {off + r.size}) lies outside the {plan.arena}-byte arena"
    # The records alive, kept sorted by offset: while they are disjoint, a record coming alive
    # can only overlap its neighbours in that order. Empty records take no bytes.
    live: list[tuple[int, int]] = []  # (offset, record position)
    for ends, i in _time_sweep(records):
        if records[i].size == 0:
            continue
        key = (plan.offsets[i], i)
        at = bisect_left(live, key)
        if ends:
            live.pop(at)
            continue
        start, end = plan.offsets[i], plan.offsets[i] + records[i].size
        for o, j in live[max(at - 1, 0):at + 1]:  # the neighbours below and above
            if o < end and start < o + records[j].size:
                a, b = records[i], records[j]
                return (f"tensors {b.tensor} and {a.tensor} are alive together "
                        f"(ops {max(a.first_op, b.first_op)}..{min(a.last_op, b.last_op)}) and overlap in memory")
        live.insert(at, key)
    return None


def _time_sweep(records: Records) -> list[tuple[bool, int]]:
    """In time order, (False, i) when record i comes alive and (True, i) when it has died: a
    record ending before an operator is gone when the records starting there come."""
    starts = np.argsort(records.first, kind="stable").tolist()  # ties: earlier position first
    ends = np.argsort(records.last, kind="stable").tolist()
    first, last = records.first.tolist(), records.last.tolist()
    events: list[tuple[bool, int]] = []
    e = 0
    for i in starts:
        while e < len(ends) and last[ends[e]] < first[i]:
            events.append((True, ends[e]))
            e += 1
        events.append((False, i))
    return events


def _check_aliases(name: str, records: Records, aliases: Mapping[int, int] | None,
                   alias_intervals: Mapping[int, tuple[int, int]] | None) -> None:
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


# -- shared-object plans -------------------------------------------------------------------------

def check_object_plan(records: Sequence[UsageRecord], plan: ObjectPlan,
                      extents: Sequence[tuple[int, int]] | None = None) -> Proven:
    """Raise PlanError unless the plan keeps the rules (module docstring) for the records;
    `extents`: each record's (width, height), for a texture plan."""
    records = check_records(records)
    vector = (validate_vector.objects_pass(records, plan)
              if extents is None and len(records) >= VECTOR_FROM else None)
    if vector is not True:
        fault = object_fault(records, plan, extents)
        if fault is not None:
            _fail(plan.strategy, fault)
        if vector is False:
            _fail(plan.strategy, "the checker's two forms disagree on this plan")
    return Proven(plan, records)


def object_fault(records: Records, plan: ObjectPlan,
                 extents: Sequence[tuple[int, int]] | None = None) -> str | None:
    """The first fault of a shared-object plan, in words (None: it keeps every rule): record by
    record, then each object's records in time order, each ending before the next starts."""
    if len(plan.assignment) != len(records):
        return f"{len(records)} records but {len(plan.assignment)} assignments"
    n_obj = len(plan.object_sizes)
    if plan.object_extents and len(plan.object_extents) != n_obj:
        return "object extents do not match the objects"
    members: list[list[int]] = [[] for _ in range(n_obj)]
    for i, (r, obj) in enumerate(zip(records, plan.assignment)):
        if obj is None or not 0 <= obj < n_obj:
            return f"tensor {r.tensor} has no object ({obj})"
        if plan.object_sizes[obj] < r.size:
            return f"tensor {r.tensor} ({r.size} B) does not fit object {obj} ({plan.object_sizes[obj]} B)"
        if extents is not None:
            if not plan.object_extents:
                return "a texture plan needs object extents"
            (w, h), (ow, oh) = extents[i], plan.object_extents[obj]
            if w > ow or h > oh:
                return f"tensor {r.tensor} ({w}x{h}) does not fit object {obj} ({ow}x{oh})"
        members[obj].append(i)
    for obj, idx in enumerate(members):
        idx.sort(key=lambda i: (records[i].first_op, records[i].last_op))
        for a, b in zip(idx, idx[1:]):
            if records[b].first_op <= records[a].last_op:
                return (f"tensors {records[a].tensor} and {records[b].tensor} share object {obj} "
                        f"while both alive")
    return None
