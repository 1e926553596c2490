"""Path-cover grouping (Efficiera, LeapMind).

1. Group: in order of first operator, put each record into a group whose last member ended before
   it starts, else open a new group. Any such choice gives the fewest groups (as many as the most
   records alive at once); we take the group whose last member ended latest (best fit), which is
   deterministic and leaves the groups that freed up early for records starting later.
2. Place: group by group, the largest total first, each member (in group order) at the lowest
   aligned offset that overlaps no conflicting placed record.
"""

from __future__ import annotations

import bisect
from typing import Sequence

import numpy as np

from packager.plan.offsets._gaps import placed_until
from packager.plan.offsets._stop import Paused, StopRule
from packager.plan.records import OffsetPlan, Records, UsageRecord

NAME = "path_cover"


def groups_of(records: Sequence[UsageRecord]) -> list[list[int]]:
    """Groups of positions whose members never overlap in time, each in order of first operator.
    Empty records are left out."""
    cols = Records.of(records)
    nonempty = np.flatnonzero(cols.size > 0)
    order = nonempty[np.argsort(cols.first[nonempty], kind="stable")].tolist()  # by first_op, stable
    groups: list[list[int]] = []
    ends: list[tuple[int, int]] = []  # (last operator of its last member, group), sorted
    for i in order:
        r = records[i]
        k = bisect.bisect_left(ends, (r.first_op, -1)) - 1  # latest end strictly before first_op
        if k >= 0:
            g = ends.pop(k)[1]
            groups[g].append(i)
        else:
            g = len(groups)
            groups.append([i])
        bisect.insort(ends, (r.last_op, g))
    return groups


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    return start(records, alignment)


def start(records: Sequence[UsageRecord], alignment: int = 1,
          stop: StopRule | None = None) -> OffsetPlan | Paused:
    """The plan, or Paused once a record placed ends above `stop`'s limit."""
    groups = groups_of(records)
    totals = [sum(records[i].size for i in g) for g in groups]
    ranked = sorted(range(len(groups)), key=lambda g: (-totals[g], g))
    order = [i for g in ranked for i in groups[g]]
    return placed_until(NAME, records, order, alignment, stop, best_fit=False)
