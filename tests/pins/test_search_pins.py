"""The searches, and the strategies that matter most at scale on larger inputs, give the same plans
as when the pins were taken (tests/pins/pin_cases.py, search_pins()): faster code, same plans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packager.plan.records import OffsetPlan
from packager.plan.validate import check_object_plan, check_offset_plan
from tests.pins.pin_cases import (SCALE_SEARCH_WORK, SCALE_STRATEGIES, SEARCH_WORK, cases, digest,
                                  run_pinned, scale_cases)

PINS = json.loads((Path(__file__).parent / "search_pins.json").read_text())
CASES, SCALE_CASES = cases(), scale_cases()


def test_every_case_is_pinned():
    assert set(PINS) == set(CASES) | set(SCALE_CASES)
    for name in SCALE_CASES:
        assert set(PINS[name]) == set(SCALE_STRATEGIES)
    for name in CASES:
        assert set(PINS[name]) == {f"{k}:{s}" for s in SEARCH_WORK for k in ("search", "search0")}


@pytest.mark.parametrize("case", sorted(CASES))
def test_searches_plan_as_pinned(case):
    problem = CASES[case]
    for key in PINS[case]:
        plan = run_pinned(key, problem, SEARCH_WORK[key.split(":")[1]])
        check_offset_plan(problem.records, plan)
        assert not plan.time_limit_hit
        assert digest(plan) == PINS[case][key], f"{key} plans {case} differently"


@pytest.mark.parametrize("case", sorted(SCALE_CASES))
def test_strategies_plan_as_pinned_at_scale(case):
    problem = SCALE_CASES[case]
    for key in SCALE_STRATEGIES:
        plan = run_pinned(key, problem, SCALE_SEARCH_WORK)
        if isinstance(plan, OffsetPlan):
            check_offset_plan(problem.records, plan)
        else:
            check_object_plan(problem.records, plan)
        assert digest(plan) == PINS[case][key], f"{key} plans {case} differently"
