"""Greedy in order: records in the order they start (then by position), each in the smallest
aligned gap that fits among the conflicting records already placed, else above them."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from packager.plan.offsets._gaps import placed_until
from packager.plan.offsets._stop import Paused, StopRule
from packager.plan.records import OffsetPlan, Records, UsageRecord

NAME = "greedy_in_order"


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    return start(records, alignment)


def start(records: Sequence[UsageRecord], alignment: int = 1,
          stop: StopRule | None = None) -> OffsetPlan | Paused:
    """The plan, or Paused once a record placed ends above `stop`'s limit."""
    order = np.argsort(Records.of(records).first, kind="stable").tolist()
    return placed_until(NAME, records, order, alignment, stop)
