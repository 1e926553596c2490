"""Greedy in order: records in the order they start (then by position), each in the smallest
aligned gap that fits among the conflicting records already placed, else above them."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from packager.plan.offsets._gaps import placed_until
from packager.plan.offsets._stop import Paused, StopRule
from packager.plan.records import OffsetPlan, UsageRecord, time_columns

NAME = "greedy_in_order"


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    return start(records, alignment)


def start(records: Sequence[UsageRecord], alignment: int = 1,
          stop: StopRule | None = None) -> OffsetPlan | Paused:
    """The plan, or Paused once a record placed ends above `stop`'s limit."""
    cols = time_columns(records)
    order = (np.argsort(cols.first, kind="stable").tolist() if cols is not None
             else sorted(range(len(records)), key=lambda i: (records[i].first_op, i)))
    return placed_until(NAME, records, order, alignment, stop)
