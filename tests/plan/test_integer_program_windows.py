"""The integer program above its whole model: small integer programs over time windows improve a
plan, never make it worse, stop on a work budget (never on time), and say why they stopped."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.synthetic import SHAPES, usage_records as synthetic_records
from packager.errors import PlanError
from packager.plan.objects import greedy_by_size, greedy_by_size_improved, integer_program
from packager.plan.objects import integer_program_windows as windows, window_matching
from packager.plan.portfolio import run_portfolio
from packager.plan.problem import Problem
from packager.plan.records import UsageRecord, object_lower_bound
from packager.plan.validate import check_object_plan
from tests.plan.record_strategies import usage_records

FEW = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def branching(n: int) -> tuple[UsageRecord, ...]:
    return tuple(synthetic_records(SHAPES["branching"](n)))


def test_it_reaches_the_bound_the_greedy_misses_above_the_whole_model():
    records = branching(1000)
    assert len(records) > integer_program.WHOLE_MODEL_RECORDS
    bound = object_lower_bound(records)
    assert greedy_by_size_improved.plan(records).total == bound + 12_288
    solution = integer_program.solve(records)
    check_object_plan(records, solution.plan)
    assert solution.plan.total == bound == solution.dual_bound
    assert solution.proven_optimal and solution.plan.search_stopped == ""
    assert integer_program.solve(records).plan == solution.plan  # the same plan every time


def test_best_keeps_it_and_hands_it_the_best_plan_so_far():
    problem = Problem(records=branching(1000))
    result = run_portfolio(problem, offset_names=[], local=False, baselines=False)
    assert "integer_program" not in result.skipped
    best = result.best_objects
    assert (best.strategy, best.total) == ("integer_program", problem.object_lower_bound)
    assert result.objects_optimal


@FEW
@given(records=usage_records(max_records=40))
def test_the_window_search_is_never_worse_than_its_start_and_honest(records):
    start = greedy_by_size.plan(records)
    bound = object_lower_bound(records)
    found = windows.repair(records, start.assignment, start.object_sizes, bound)
    plan = integer_program.make_plan("x", found.assignment, found.object_sizes)
    check_object_plan(records, plan)
    assert bound <= plan.total <= start.total
    assert (found.stopped == "") == (plan.total == bound)  # a gap left open is explained


def test_a_plan_with_a_gap_says_what_stopped_the_search(monkeypatch):
    records = branching(10_000)
    solution = integer_program.solve(records)
    check_object_plan(records, solution.plan)
    bound = object_lower_bound(records)
    assert bound < solution.plan.total < greedy_by_size_improved.plan(records).total
    assert not solution.proven_optimal and solution.dual_bound == bound
    assert "no object could be made smaller" in solution.plan.search_stopped
    # A smaller budget stops it earlier, on work counted, and it says so.
    monkeypatch.setattr(windows, "VARIABLE_BUDGET", 10)
    monkeypatch.setattr(windows, "WINDOW_BUDGET", 3)
    small = integer_program.solve(records)
    check_object_plan(records, small.plan)
    assert small.plan.total <= greedy_by_size_improved.plan(records).total
    assert "work budget" in small.plan.search_stopped and not small.proven_optimal


def test_it_starts_from_the_plan_it_is_given():
    rng = random.Random(3)
    records = [UsageRecord(i, f, f + rng.randrange(6), rng.choice((8, 16, 24, 40)))
               for i, f in enumerate(rng.randrange(80) for _ in range(300))]
    start = greedy_by_size.plan(records)
    found = integer_program.plan(records, start)
    check_object_plan(records, found)
    assert found.total <= start.total


def test_no_time_limit_decides_a_plan(monkeypatch):
    """The solver is capped by nodes and model size only: the same input gives the same plan on
    any machine and under any load."""
    import highspy

    solvers = []

    class Recorded(highspy._Highs):
        def __init__(self):
            super().__init__()
            solvers.append(self)

    monkeypatch.setattr(highspy, "_Highs", Recorded)
    integer_program.solve([UsageRecord(0, 0, 1, 8), UsageRecord(1, 2, 3, 8), UsageRecord(2, 1, 2, 4)])
    integer_program.solve(branching(1000))
    assert len(solvers) >= 2  # the whole model, and windows
    for solver in solvers:
        assert solver.getOptionValue("time_limit")[1] == highspy.kHighsInf
        assert solver.getOptionValue("mip_max_nodes")[1] in (integer_program.NODE_LIMIT, windows.WINDOW_NODES)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_shape_at_ten_thousand_is_valid_and_no_worse(shape):
    records = tuple(synthetic_records(SHAPES[shape](10_000)))
    greedy = greedy_by_size_improved.plan(records)
    solution = integer_program.solve(records)
    check_object_plan(records, solution.plan)
    assert object_lower_bound(records) <= solution.plan.total <= greedy.total


def test_best_shows_why_the_integer_program_left_a_gap(monkeypatch):
    from packager.text.plan_view import result_view

    monkeypatch.setattr(windows, "WINDOW_BUDGET", 0)  # spent before the first window
    problem = Problem(records=branching(1000))
    result = run_portfolio(problem, offset_names=[], local=False, baselines=False)
    assert not result.objects_optimal
    (name, why), = result.objects_search_stopped
    assert name == "integer_program" and "work budget" in why
    view = next(v for v in result_view(result)["strategies"] if v["name"] == "integer_program")
    assert view["search_stopped"] == why and view["total"] == result.best_objects.total


def test_up_to_the_whole_model_a_start_changes_nothing_it_proves():
    """Where the whole model runs (as before, its plans pinned), a plan handed to it by `best`
    leaves its answer unchanged whenever it proves that answer optimal."""
    rng = random.Random(7)
    for _ in range(5):
        records = [UsageRecord(i, f, f + rng.randrange(4), rng.choice((1, 5, 8, 13, 40)))
                   for i, f in enumerate(rng.randrange(12) for _ in range(14))]
        alone = integer_program.solve(records)
        assert alone.proven_optimal
        for start in (greedy_by_size.plan(records), greedy_by_size_improved.plan(records)):
            assert integer_program.plan(records, start) == alone.plan


def _matchable_by_brute_force(lo, hi, fits) -> bool:
    """Every step's alive records get distinct objects they fit: tried every way."""
    from itertools import permutations
    n_obj = len(fits)
    for t in set(lo):
        alive = [r for r in range(len(lo)) if lo[r] <= t <= hi[r]]
        if len(alive) > n_obj or not any(all(fits[p][r] for p, r in zip(objs, alive))
                                         for objs in permutations(range(n_obj), len(alive))):
            return False
    return True


def test_the_step_matching_is_exact():
    """The pre-check that spares the solver a window with no plan: a matching at every step,
    against trying every assignment, on small random windows (equal spans and sparse fits)."""
    import numpy as np

    rng = random.Random(7)
    for _ in range(600):
        n_rec, n_obj = rng.randint(1, 7), rng.randint(1, 5)
        lo = [rng.randint(0, 4) for _ in range(n_rec)]
        hi = [a + rng.randint(0, 3) for a in lo]
        fits = [[rng.random() < 0.45 for _ in range(n_rec)] for _ in range(n_obj)]
        got = window_matching.each_step_matchable(np.array(lo), np.array(hi), np.array(fits, dtype=bool))
        assert got == _matchable_by_brute_force(lo, hi, fits), (lo, hi, fits)


def _random_records(seed: int, n: int = 600) -> tuple[UsageRecord, ...]:
    rng = random.Random(seed)
    records = []
    for i in range(n):
        first = rng.randrange(n // 3)
        records.append(UsageRecord(i, first, first + rng.randrange(8), rng.choice((8, 16, 24, 32, 40, 64))))
    return tuple(records)


@pytest.mark.parametrize("records", [branching(1000), branching(3000), _random_records(2)],
                         ids=["branching-1000", "branching-3000", "random"])
def test_the_step_matching_never_changes_a_plan(monkeypatch, records):
    """Windows it rejects are those the solver finds without a plan: the same plans without it
    (each case has windows it rejects)."""
    real = window_matching.each_step_matchable
    rejected = []

    def counted(lo, hi, fits):
        ok = real(lo, hi, fits)
        rejected.append(not ok)
        return ok

    start = greedy_by_size.plan(records)
    monkeypatch.setattr(window_matching, "each_step_matchable", counted)
    with_check = integer_program.plan(records, start)
    assert any(rejected)
    monkeypatch.setattr(window_matching, "each_step_matchable", lambda lo, hi, fits: True)
    assert integer_program.plan(records, start) == with_check


def test_sizes_beyond_int64_are_refused_before_any_search():
    """Sizes numpy's int64 cannot hold never reach a strategy: the records refuse them when they
    become the planners' data (a Problem), and so does any bound worked out over columns."""
    records = tuple(UsageRecord(i, i % 50, i % 50 + 3, (1 << 70) + 8 * (i % 5)) for i in range(300))
    with pytest.raises(PlanError, match="size beyond int64"):
        Problem(records)
    with pytest.raises(PlanError, match="size beyond int64"):
        object_lower_bound(records)


def test_the_plan_it_returns_holds_python_ints():
    records = branching(1000)
    plan = integer_program.plan(records, greedy_by_size.plan(records))
    assert all(type(v) is int for v in (*plan.assignment, *plan.object_sizes))
    assert type(plan.proven_optimal) is bool


def test_a_whole_model_over_its_entry_budget_goes_to_the_window_search(monkeypatch):
    # a perfect packing of 250 buffers: its whole model (180,214 entries) took HiGHS to 282 MB
    from benchmarks import perfect_packing
    from packager.plan.objects import binary_program

    records = tuple(UsageRecord(i, lower, upper - 1, size)
                    for i, (lower, upper, size, _) in enumerate(perfect_packing.cut(250, 1)))
    assert len(records) <= integer_program.WHOLE_MODEL_RECORDS
    handed = []
    solve = binary_program.solve

    def spy(cost, rows, *args, **kwargs):
        handed.append(len(rows))
        return solve(cost, rows, *args, **kwargs)

    monkeypatch.setattr(binary_program, "solve", spy)
    solution = integer_program.solve(records)
    check_object_plan(records, solution.plan)
    assert handed and max(handed) <= integer_program.WHOLE_MODEL_NONZEROS  # windows only
    assert not solution.proven_optimal and solution.plan.search_stopped  # and it says why
