"""A package needs only the best plan: the offset strategies that place records one at a time
and never move them stop once a record they placed ends above the lower bound, and resume to the
very plan an uninterrupted run gives when no plan meets it. TFLite Micro's scratch buffers never
stop a strategy (the runtime re-places them; only the tensors keep the strategy's offsets)."""

from __future__ import annotations

import random

import pytest

from benchmarks.synthetic import SHAPES, usage_records
from packager import arenas
from packager.plan import kernels
from packager.plan.kernels import placement, skyline
from packager.plan.offsets._stop import Paused, StopRule
from packager.plan.portfolio import run_portfolio
from packager.plan.problem import Problem
from packager.plan.records import UsageRecord
from packager.plan.registry import offset_strategy
from packager.plan.stoppable import STOPPABLE
from tests.pins.pin_cases import random_records
from tests.equivalence.test_compiled_loops import _records

CASES = [(seed, n, times, long_every, alignment)
         for seed, (n, times, long_every) in enumerate([(40, 6, 5), (300, 50, 7), (1_500, 400, 50),
                                                        (600, 10 ** 9, 30), (200, 4, 3)])
         for alignment in (1, 16)]


def _problem(seed, n, times, long_every, alignment) -> Problem:
    records = _records(seed, n, times, long_every)
    return Problem(records=records, alignment=alignment,
                   whole_run=frozenset(range(0, n, 97)))


def _limits(problem: Problem, arena: int) -> list[int]:
    bound = problem.offset_lower_bound
    return sorted({0, bound, (bound + arena) // 2, arena - 1, arena})


@pytest.mark.parametrize("name", sorted(STOPPABLE))
def test_without_a_limit_reached_each_strategy_runs_as_the_registry_does(name):
    problem = _problem(*CASES[3])
    assert STOPPABLE[name](problem, StopRule(10 ** 30)) == offset_strategy(name).run(problem)


@pytest.mark.parametrize("name", sorted(STOPPABLE))
@pytest.mark.parametrize("seed,n,times,long_every,alignment", CASES)
def test_a_strategy_stops_only_above_the_limit_and_resumes_to_the_same_plan(name, seed, n, times,
                                                                          long_every, alignment):
    problem = _problem(seed, n, times, long_every, alignment)
    whole = offset_strategy(name).run(problem)
    stopped = 0
    for ignored in (frozenset(), frozenset(range(1, n, 4))):
        for limit in _limits(problem, whole.arena):
            got = STOPPABLE[name](problem, StopRule(limit, ignored))
            ends_above = any(o + r.size > limit for i, (r, o) in enumerate(zip(problem.records, whole.offsets))
                             if i not in ignored)
            if isinstance(got, Paused):
                assert ends_above  # it stops only when its plan would end above the limit
                assert 0 <= got.placed <= got.steps
                assert got.finish() == whole  # and resumes to the plan of an uninterrupted run
                stopped += 1
            else:  # it ran to its end: the same plan (a record above the limit may be its last)
                assert got == whole
    if whole.arena > problem.offset_lower_bound:
        assert stopped  # the test sees strategies stop


def test_ignored_records_never_stop_a_strategy():
    problem = _problem(*CASES[2])
    everything = frozenset(range(len(problem.records)))
    for name in STOPPABLE:
        assert not isinstance(STOPPABLE[name](problem, StopRule(0, everything)), Paused), name


@pytest.mark.parametrize("name", sorted(STOPPABLE))
def test_under_a_stop_rule_kernels_start_uncompiled_and_resume_compiled(monkeypatch, name):
    """A run that stops early never repays numba's import: from COMPILE_FROM records, a kernel
    starts uncompiled under a StopRule and goes on compiled only when resumed, to the readable
    plan."""
    problem = _problem(*CASES[4])
    monkeypatch.setattr(kernels, "COMPILE_FROM", 1 << 62)
    whole = offset_strategy(name).run(problem)  # the readable plan
    calls = []
    for module, loop in ((placement, "place"), (skyline, "skyline")):
        compiled = kernels.compiled(module)
        original = getattr(compiled, loop)
        monkeypatch.setattr(compiled, loop, lambda *a, _f=original, _n=loop: calls.append(_n) or _f(*a))
    monkeypatch.setattr(kernels, "COMPILE_FROM", 1)
    got = STOPPABLE[name](problem, StopRule(whole.arena // 2))
    assert isinstance(got, Paused) and not calls
    assert got.finish() == whole
    assert calls or name == "naive"  # naive has no loop to compile


def _scratch_positions(problem: Problem, every: int) -> dict[int, str]:
    return {r.tensor: f"scratch {r.tensor}" for i, r in enumerate(problem.records) if i % every == 0}


PROBLEMS = {
    "chain-600": Problem(records=tuple(usage_records(SHAPES["chain"](600))), alignment=16),
    "transformer-600": Problem(records=tuple(usage_records(SHAPES["transformer"](600))), alignment=16),
    **{f"random-{seed}": Problem(records=tuple(random_records(seed, 120, 30, 12, 3000)), alignment=16)
       for seed in range(8)},
}


@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("every", [0, 3, 7])
def test_a_package_ships_the_plan_the_whole_portfolio_would(name, every):
    """With or without scratch buffers (re-placed TFLite Micro's way afterwards), and whether or
    not a plan meets the bound, the shipped plans are those of the whole portfolio; a strategy
    stopped is listed as such and never as run."""
    problem = PROBLEMS[name]
    scratch = _scratch_positions(problem, every) if every else {}
    whole = run_portfolio(problem, baselines=False, local=False)
    memo: dict = {}
    short = run_portfolio(problem, baselines=False, local=False, stop_at=arenas._optimal_to_ship(problem, scratch, memo),
                          stop_above=arenas._above_the_bound(problem, scratch))
    if scratch:
        a = arenas._with_runtime_scratch_placement(whole, scratch, {})
        b = arenas._with_runtime_scratch_placement(short, scratch, memo)
    else:
        a, b = whole.best_offsets, short.best_offsets
    assert (a.strategy, a.plan) == (b.strategy, b.plan)
    assert (whole.best_objects.strategy, whole.best_objects.plan) == (short.best_objects.strategy,
                                                                      short.best_objects.plan)
    ran = {o.strategy for o in short.offsets}
    stopped = {s.strategy for s in short.stopped_above}
    assert not ran & stopped
    by_name = {o.strategy: o for o in whole.offsets}
    for s in short.stopped_above:  # each stopped one really ends above the bound with its tensors
        plan = by_name[s.strategy].plan
        assert any(o + r.size > problem.offset_lower_bound
                   for r, o in zip(problem.records, plan.offsets) if r.tensor not in scratch)
    if short.stopped_above:
        assert short.not_needed  # stopped only because a later plan met the bound


@pytest.mark.parametrize("name", ["transformer-600", "random-3"])
def test_when_no_plan_meets_the_bound_the_stopped_strategies_are_finished(name):
    problem = PROBLEMS[name]
    whole = run_portfolio(problem, baselines=False, local=False)
    never = run_portfolio(problem, baselines=False, local=False, stop_at=lambda outcome: False,
                          stop_above=StopRule(problem.offset_lower_bound))
    assert [(o.strategy, o.plan) for o in never.offsets] == [(o.strategy, o.plan) for o in whole.offsets]
    assert never.stopped_above == ()


def _small_with_scratch(seed: int) -> tuple[Problem, dict[int, str]]:
    """A few records over a few steps, about a third of them scratch buffers."""
    rng = random.Random(seed)
    records = []
    for i in range(rng.randrange(4, 9)):
        first = rng.randrange(4)
        records.append(UsageRecord(i, first, min(3, first + rng.randrange(3)), 16 * rng.randrange(1, 5)))
    return Problem(records=tuple(records), alignment=16), {r.tensor: "scratch" for r in records if rng.random() < 0.35}


OFFSETS_UP_TO_PATH_COVER = sorted(STOPPABLE)


def test_scratch_buffers_never_decide_the_stop():
    """Where a strategy put a scratch buffer says nothing of the plan shipped: its tensors may fit
    under the bound and the runtime's re-placement of the buffer too, so that plan (the earlier
    strategy) wins the tie. Stopping on the buffers would ship another plan in some of these."""
    kw = dict(baselines=False, local=False, object_names=["naive"], offset_names=OFFSETS_UP_TO_PATH_COVER)
    would_differ = 0
    for seed in range(120):
        problem, scratch = _small_with_scratch(seed)
        if not scratch:
            continue
        whole = arenas._with_runtime_scratch_placement(run_portfolio(problem, **kw), scratch, {})
        shipped = {}
        for rule in (arenas._above_the_bound(problem, scratch), StopRule(problem.offset_lower_bound)):
            memo: dict = {}
            result = run_portfolio(problem, stop_at=arenas._optimal_to_ship(problem, scratch, memo),
                                   stop_above=rule, **kw)
            best = arenas._with_runtime_scratch_placement(result, scratch, memo)
            shipped[bool(rule.ignored)] = (best.strategy, best.plan)
        assert shipped[True] == (whole.strategy, whole.plan), seed
        would_differ += shipped[False] != shipped[True]
    assert would_differ  # the cases include those where the buffers must not decide
