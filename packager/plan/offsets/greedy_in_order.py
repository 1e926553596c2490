"""Greedy in order: records in the order they start (then by position), each in the smallest
aligned gap that fits among the conflicting records already placed, else above them."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from packager.plan.offsets._gaps import offset_plan, place_in_order
from packager.plan.records import OffsetPlan, UsageRecord, time_columns

NAME = "greedy_in_order"


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    cols = time_columns(records)
    order = (np.argsort(cols.first, kind="stable").tolist() if cols is not None
             else sorted(range(len(records)), key=lambda i: (records[i].first_op, i)))
    return offset_plan(NAME, records, place_in_order(records, order, alignment), alignment)
