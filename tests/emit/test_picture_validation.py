"""A layout drawn in place of the chosen plan passes the validator first: one that carries the
proof of its numbers (the portfolio's) is drawn as it is, any other is checked, and a wrong one is
refused."""

from __future__ import annotations

from dataclasses import replace

import pytest

from packager.errors import PlanError
from packager.arenas import plan_arenas
from packager.pictures import arena_picture
from packager.plan import portfolio
from packager.reader import read_model
from tests.package.support import model_file


def _planned(name: str):
    model = read_model(model_file(name))
    return model, plan_arenas(model, "tflite", to_ship=True)[0]


def test_a_layout_not_of_the_portfolio_is_validated_and_a_wrong_one_refused(monkeypatch):
    model, planned = _planned("residual")
    checked = []
    real = portfolio.validate
    monkeypatch.setattr("packager.pictures.validate", lambda problem, plan: (checked.append(plan), real(problem, plan)))
    own = planned.result.best_offsets
    assert arena_picture(model, planned, layout_outcome=own).arena == own.plan.arena
    assert checked == []  # validated when the portfolio made it
    copy = replace(own, plan=replace(own.plan))  # the same numbers: the proof still holds
    assert arena_picture(model, planned, layout_outcome=copy).arena == own.plan.arena
    assert checked == []
    unproven = replace(own, proven=None)
    assert arena_picture(model, planned, layout_outcome=unproven).arena == own.plan.arena
    assert checked == [unproven.plan]
    wrong = replace(own, plan=replace(own.plan, offsets=(0,) * len(own.plan.offsets)))  # a proof of other numbers
    with pytest.raises(PlanError):
        arena_picture(model, planned, layout_outcome=wrong)
