"""Every strategy gives the same plan as when the pins were taken (see tests/pins/pin_cases.py):
making a strategy faster must not change what it plans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packager.plan.registry import OBJECT_STRATEGIES, OFFSET_STRATEGIES
from packager.plan.validate import check_object_plan, check_offset_plan
from tests.pins.pin_cases import cases, digest

PINS = json.loads((Path(__file__).parent / "plan_pins.json").read_text())
CASES = cases()
STRATEGIES = {f"{s.kind}:{s.name}": s for s in (*OFFSET_STRATEGIES, *OBJECT_STRATEGIES)}


def test_every_case_and_strategy_is_pinned():
    assert set(PINS) == set(CASES)
    for row in PINS.values():
        assert set(STRATEGIES) - {"objects:integer_program"} <= set(row)


@pytest.mark.parametrize("case", sorted(PINS))
def test_plans_are_the_pinned_ones(case):
    problem, pinned = CASES[case], PINS[case]
    assert str(problem.offset_lower_bound) == pinned["bound:offsets"]
    assert str(problem.object_lower_bound) == pinned["bound:objects"]
    for key, strategy in STRATEGIES.items():
        if key not in pinned:
            continue
        plan = strategy.run(problem)
        if strategy.kind == "offsets":
            check_offset_plan(problem.records, plan)
        else:
            check_object_plan(problem.records, plan)
        assert digest(plan) == pinned[key], f"{key} plans {case} differently"
