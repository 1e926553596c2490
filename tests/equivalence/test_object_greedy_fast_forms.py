"""The shared-object greedy strategies' fast forms (from FAST_FROM records) give exactly the plans
of their readable forms: greedy_by_size_improved_fast.plan() those of greedy_by_size_improved.plan(),
and greedy by size, greedy by breadth and texture_2d with the fast conflict indexes (per-step
bitsets or segment trees, whose answers are the scan's) and vector orders those they give with the
scan of the members and Python sorts; on random records with ties, on the synthetic model shapes
and on the records of real models."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.synthetic import SHAPES, usage_records as shape_records
from packager.plan.objects import (_common, conflicts, greedy_by_breadth, greedy_by_size,
                                   greedy_by_size_improved, greedy_by_size_improved_fast, texture_2d)
from packager.plan.records import UsageRecord
from tests.plan.model_records import model_records
from tests.plan.record_strategies import tied_records, usage_records

SOME = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_records(seed: int) -> tuple[UsageRecord, ...]:
    """Up to 999 records (the readable form's limit): short- or long-lived, few or many distinct
    sizes, small or huge times and sizes."""
    rng = random.Random(seed)
    n = rng.choice([1, 2, 7, 40, 65, 200, _common.FAST_FROM - 1])
    horizon = rng.choice([3, 20, 300, 5000, 10**7])
    longest = rng.choice([0, 1, 3, 20, horizon])
    sizes = rng.choice([[8, 16], [0, 8, 16, 64], list(range(1, 200)), [5, 2**50]])  # large, yet their sum stays inside the records' bounds
    out = []
    for i in range(n):
        first = rng.randrange(horizon)
        out.append(UsageRecord(i, first, first + rng.randint(0, longest), rng.choice(sizes)))
    return tuple(out)


# ---------------------------------------------------------------- greedy by size improved


def fast_improved(records):
    return greedy_by_size_improved_fast.plan(records)


@pytest.mark.parametrize("seed", range(60))
def test_the_fast_improved_form_gives_the_readable_plans_on_random_records(seed):
    records = random_records(seed)
    assert fast_improved(records) == greedy_by_size_improved.plan(records)


@SOME
@given(records=usage_records(max_records=120))
def test_the_fast_improved_form_gives_the_readable_plans_on_drawn_records(records):
    assert fast_improved(records) == greedy_by_size_improved.plan(records)


@SOME
@given(records=tied_records)
def test_the_fast_improved_form_gives_the_readable_plans_on_tied_records(records):
    assert fast_improved(records) == greedy_by_size_improved.plan(records)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_fast_improved_form_gives_the_readable_plans_on_the_synthetic_shapes(shape):
    records = tuple(shape_records(SHAPES[shape](_common.FAST_FROM - 1)))
    assert fast_improved(records) == greedy_by_size_improved.plan(records)


def test_the_fast_improved_form_gives_the_readable_plans_on_real_models():
    cases = model_records()
    assert cases
    for name, records in cases:
        assert fast_improved(records) == greedy_by_size_improved.plan(records), name


@pytest.mark.parametrize("seed", range(30))
def test_the_first_candidates_walked_one_by_one_give_the_same_plans(seed, monkeypatch):
    # One vector round leaves most of the sides of a stage's first candidates to the Python walk.
    records = random_records(seed)
    expected = greedy_by_size_improved.plan(records)
    monkeypatch.setattr(greedy_by_size_improved_fast, "_VECTOR_ROUNDS", 1)
    assert fast_improved(records) == expected


def test_from_fast_from_records_plan_runs_the_fast_form(monkeypatch):
    records = tuple(shape_records(SHAPES["chain"](_common.FAST_FROM)))
    calls = []
    monkeypatch.setattr(greedy_by_size_improved_fast, "plan", lambda r: calls.append(len(r)) or "fast")
    assert greedy_by_size_improved.plan(records) == "fast"
    assert greedy_by_size_improved.plan(records[:-1]) != "fast"
    assert calls == [_common.FAST_FROM]


# ---------------------------------------------------------------- the conflict index


class texture:  # texture_2d on extents drawn from the records (it asks the index too)
    NAME = texture_2d.NAME

    @staticmethod
    def plan(records):
        return texture_2d.plan(records, [(1 + k % 5, 1 + r.size % 3) for k, r in enumerate(records)], 4)


GREEDY = [greedy_by_size, greedy_by_breadth, texture]


def fast(strategy, records):
    """The strategy's plan with its fast forms (index, orders) whatever the count of records."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_common, "FAST_FROM", 0)
        return strategy.plan(records)


@pytest.mark.parametrize("strategy", GREEDY, ids=lambda m: m.NAME)
@pytest.mark.parametrize("seed", range(30))
def test_the_fast_index_gives_the_readable_plans_on_random_records(strategy, seed):
    records = random_records(seed)
    assert fast(strategy, records) == strategy.plan(records)


@pytest.mark.parametrize("strategy", GREEDY, ids=lambda m: m.NAME)
@SOME
@given(records=tied_records)
def test_the_fast_index_gives_the_readable_plans_on_tied_records(strategy, records):
    assert fast(strategy, records) == strategy.plan(records)


@pytest.mark.parametrize("strategy", GREEDY, ids=lambda m: m.NAME)
def test_the_fast_index_gives_the_readable_plans_on_real_models(strategy):
    for name, records in model_records():
        assert fast(strategy, records) == strategy.plan(records), name


@pytest.mark.parametrize("seed", range(40))
def test_every_fast_index_answers_as_the_scan_of_the_members(seed, monkeypatch):
    # Per-step bitsets, the trees with a leaf per operator index, and the trees with buckets of
    # indices (a tiny bit budget): each busy() the scan's, as objects take records at random.
    records = random_records(seed)[:300]
    rng = random.Random(seed)
    placed = rng.sample(range(len(records)), len(records))
    objects = [rng.randrange(1 + len(records) // 3) for _ in placed]
    steps = conflicts.step_intervals(records)
    indexes = [conflicts.ConflictIndex(records)] + ([conflicts.StepConflicts(*steps)] if steps else [])
    monkeypatch.setattr(conflicts, "_TREE_BUDGET_BITS", 8)
    monkeypatch.setattr(conflicts, "_MIN_LEAVES", 2)
    indexes.append(conflicts.ConflictIndex(records))
    scan = conflicts.MemberScan(records)
    for k, (pos, obj) in enumerate(zip(placed, objects)):
        for index in indexes + [scan]:
            index.add(obj, pos)
        if k % 25 == 0 or k == len(placed) - 1:
            expected = [scan.busy(p) for p in range(len(records))]
            for index in indexes:
                assert [index.busy(p) for p in range(len(records))] == expected, type(index).__name__


@pytest.mark.parametrize("strategy", GREEDY, ids=lambda m: m.NAME)
@pytest.mark.parametrize("seed", range(30))
def test_the_trees_and_the_per_step_bitsets_give_the_same_plans(strategy, seed, monkeypatch):
    # Short-lived records take the per-step bitsets; with no steps allowed they take the trees.
    records = random_records(seed)
    monkeypatch.setattr(_common, "FAST_FROM", 0)
    steps = strategy.plan(records)
    monkeypatch.setattr(conflicts, "_STEPS_PER_RECORD", 0)
    assert conflicts.step_intervals(records) is None
    assert strategy.plan(records) == steps
