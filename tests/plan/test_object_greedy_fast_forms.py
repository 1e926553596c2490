"""The shared-object greedy strategies' fast forms give exactly the plans of their readable forms:
greedy_by_size_improved_fast.plan() those of greedy_by_size_improved.plan(), and the conflict
index (per-step bitsets or segment trees) that greedy by size and greedy by breadth ask the
answers of a scan of every object's members; on random records with ties, on the synthetic
model shapes and on the records of real models."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.synthetic import SHAPES, usage_records as shape_records
from packager.plan.objects import (_common, greedy_by_breadth, greedy_by_size, greedy_by_size_improved,
                                   greedy_by_size_improved_fast)
from packager.plan.records import UsageRecord
from tests.plan.model_records import model_records
from tests.plan.record_strategies import tied_records, usage_records

SOME = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_records(seed: int) -> tuple[UsageRecord, ...]:
    """Up to 999 records (the readable form's limit): short- or long-lived, few or many distinct
    sizes, small or huge times (huge sizes and times leave the vector paths)."""
    rng = random.Random(seed)
    n = rng.choice([1, 2, 7, 40, 65, 200, greedy_by_size_improved.FAST_FROM - 1])
    horizon = rng.choice([3, 20, 300, 5000, 10**7])
    longest = rng.choice([0, 1, 3, 20, horizon])
    sizes = rng.choice([[8, 16], [0, 8, 16, 64], list(range(1, 200)), [5, 2**62]])
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
    records = tuple(shape_records(SHAPES[shape](greedy_by_size_improved.FAST_FROM - 1)))
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
    records = tuple(shape_records(SHAPES["chain"](greedy_by_size_improved.FAST_FROM)))
    calls = []
    monkeypatch.setattr(greedy_by_size_improved_fast, "plan", lambda r: calls.append(len(r)) or "fast")
    assert greedy_by_size_improved.plan(records) == "fast"
    assert greedy_by_size_improved.plan(records[:-1]) != "fast"
    assert calls == [greedy_by_size_improved.FAST_FROM]


# ---------------------------------------------------------------- the conflict index


class ScanIndex:
    """The conflict index's answers by its definition: the objects with a member alive at some
    operator of the record's lifetime, found by scanning every member placed."""

    def __init__(self, records) -> None:
        self.records, self.placed = records, []

    def add(self, obj: int, pos: int) -> None:
        self.placed.append((obj, self.records[pos]))

    def busy(self, pos: int) -> int:
        r = self.records[pos]
        return sum({1 << obj for obj, m in self.placed if m.first_op <= r.last_op and r.first_op <= m.last_op})


GREEDY = [greedy_by_size, greedy_by_breadth]


def scanned(strategy, records):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(strategy, "conflict_index", ScanIndex)
        return strategy.plan(records)


@pytest.mark.parametrize("strategy", GREEDY, ids=lambda m: m.NAME)
@pytest.mark.parametrize("seed", range(30))
def test_the_index_gives_the_plans_of_a_scan_of_the_members(strategy, seed):
    records = random_records(seed)[:400]  # the scan is quadratic
    assert strategy.plan(records) == scanned(strategy, records)


@pytest.mark.parametrize("strategy", GREEDY, ids=lambda m: m.NAME)
@SOME
@given(records=tied_records)
def test_the_index_gives_the_plans_of_a_scan_on_tied_records(strategy, records):
    assert strategy.plan(records) == scanned(strategy, records)


@pytest.mark.parametrize("strategy", GREEDY, ids=lambda m: m.NAME)
def test_the_index_gives_the_plans_of_a_scan_on_real_models(strategy):
    for name, records in model_records():
        assert strategy.plan(records) == scanned(strategy, records), name


@pytest.mark.parametrize("strategy", GREEDY, ids=lambda m: m.NAME)
@pytest.mark.parametrize("seed", range(30))
def test_the_trees_and_the_per_step_bitsets_give_the_same_plans(strategy, seed, monkeypatch):
    # Short-lived records take the per-step bitsets; with no steps allowed they take the trees.
    records = random_records(seed)
    steps = strategy.plan(records)
    monkeypatch.setattr(_common, "_STEPS_PER_RECORD", 0)
    assert _common.step_intervals(records) is None
    assert strategy.plan(records) == steps
