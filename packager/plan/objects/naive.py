"""Naive: one object per tensor. The baseline every other strategy should beat."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from packager.plan.objects._common import make_plan
from packager.plan.records import ObjectPlan, UsageRecord, time_columns

NAME = "naive"


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    cols = time_columns(records) if len(records) > 64 else None
    if cols is not None:  # the sizes already as a column: make_plan takes them through tolist
        return make_plan(NAME, np.arange(len(records)), cols.size)
    return make_plan(NAME, range(len(records)), [r.size for r in records])
