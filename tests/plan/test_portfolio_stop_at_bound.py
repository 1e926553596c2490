"""`package` needs only the best plan of each kind: the portfolio may stop once a plan meets the
lower bound. The plans it then chooses must be the very ones the whole portfolio chooses, and the
strategies it did not run must be listed as not needed, never as run."""

from __future__ import annotations

import pytest

from benchmarks.synthetic import SHAPES, usage_records
from packager.plan.portfolio import run_portfolio
from packager.plan.problem import Problem
from packager.plan.registry import OBJECT_STRATEGIES, OFFSET_STRATEGIES, SEARCHES
from tests.pins.pin_cases import random_records


def at_bound(problem):
    return lambda outcome: outcome.total <= problem.offset_lower_bound


PROBLEMS = {
    "chain-600": Problem(records=tuple(usage_records(SHAPES["chain"](600)))),
    "transformer-600": Problem(records=tuple(usage_records(SHAPES["transformer"](600)))),
    "random-300": Problem(records=tuple(random_records(1, 300, 60, 20, 5000)), alignment=16),
}


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_stopping_at_the_bound_chooses_the_same_plans(name):
    problem = PROBLEMS[name]
    whole = run_portfolio(problem, baselines=False)
    short = run_portfolio(problem, baselines=False, stop_at=at_bound(problem))
    for kind in ("best_offsets", "best_objects"):
        a, b = getattr(whole, kind), getattr(short, kind)
        assert (a.strategy, a.plan) == (b.strategy, b.plan)
    for kind, run, registry in (("offsets", short.offsets, [s.name for s in OFFSET_STRATEGIES] + list(SEARCHES)),
                                ("objects", short.objects, [s.name for s in OBJECT_STRATEGIES])):
        ran = {o.strategy for o in run}
        not_needed = {name for k, name in short.not_needed if k == kind}
        assert not ran & not_needed  # never both run and not needed
        # Every strategy of the registry is accounted for: run, left out for size, or not needed.
        assert set(registry) <= ran | set(short.skipped) | not_needed
    # The shared-object strategies run first, but the lists keep the offsets' entries first.
    kinds = [k for k, _ in short.not_needed]
    assert kinds == sorted(kinds, key=lambda k: k != "offsets")


def test_the_chain_stops_early_and_says_so():
    problem = PROBLEMS["chain-600"]
    short = run_portfolio(problem, baselines=False, stop_at=at_bound(problem))
    assert short.best_offsets.total == problem.offset_lower_bound
    assert short.offsets[-1].total == problem.offset_lower_bound  # the last run met the bound
    assert all(o.total > problem.offset_lower_bound for o in short.offsets[:-1])
    assert {("offsets", "nnc"), ("offsets", "local_search")} <= set(short.not_needed)
    assert all(o.strategy != "nnc" for o in short.offsets)
