"""Naive: one object per tensor. The baseline every other strategy should beat."""

from __future__ import annotations

from typing import Sequence

from packager.plan.objects._common import make_plan
from packager.plan.records import ObjectPlan, UsageRecord

NAME = "naive"


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    return make_plan(NAME, range(len(records)), [r.size for r in records])
