"""The shared-object greedy strategies (by size, by breadth, by size improved) give exactly the
plans of their first form (tests/plan/object_greedy_reference.py) on every path they take: per-step
bitsets or the conflict index's trees, vector or Python orders, the vector or Python first
candidates of greedy by size improved; on random records and on the synthetic model shapes."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.synthetic import SHAPES, usage_records as shape_records
from packager.plan.objects import _common, greedy_by_breadth, greedy_by_size, greedy_by_size_improved
from packager.plan.records import UsageRecord
from tests.plan import object_greedy_reference as reference
from tests.plan.record_strategies import tied_records, usage_records

PAIRS = [(greedy_by_size, reference.greedy_by_size), (greedy_by_breadth, reference.greedy_by_breadth),
         (greedy_by_size_improved, reference.greedy_by_size_improved)]
IDS = [new.NAME for new, _ in PAIRS]
SOME = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_records(seed: int) -> tuple[UsageRecord, ...]:
    """Up to 1,000 records: short- or long-lived, few or many distinct sizes, small or huge times
    and sizes (up to 2^52: a thousand of them still sum below the records' bound)."""
    rng = random.Random(seed)
    n = rng.choice([1, 2, 7, 40, 65, 200, 1000])
    horizon = rng.choice([3, 20, 300, 5000, 10**7])
    longest = rng.choice([0, 1, 3, 20, horizon])
    sizes = rng.choice([[8, 16], [0, 8, 16, 64], list(range(1, 200)), [5, 2**52]])
    out = []
    for i in range(n):
        first = rng.randrange(horizon)
        out.append(UsageRecord(i, first, first + rng.randint(0, longest), rng.choice(sizes)))
    return tuple(out)


@pytest.mark.parametrize("new, old", PAIRS, ids=IDS)
@pytest.mark.parametrize("seed", range(60))
def test_random_records_give_the_first_forms_plans(new, old, seed):
    records = random_records(seed)
    assert new.plan(records) == old(records)


@pytest.mark.parametrize("new, old", PAIRS, ids=IDS)
@SOME
@given(records=usage_records(max_records=120))
def test_drawn_records_give_the_first_forms_plans(new, old, records):
    assert new.plan(records) == old(records)


@pytest.mark.parametrize("new, old", PAIRS, ids=IDS)
@SOME
@given(records=tied_records)
def test_tied_records_give_the_first_forms_plans(new, old, records):
    assert new.plan(records) == old(records)


@pytest.mark.parametrize("new, old", PAIRS, ids=IDS)
@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("n", [1_000, 10_000])
def test_synthetic_shapes_give_the_first_forms_plans(new, old, shape, n):
    records = tuple(shape_records(SHAPES[shape](n)))
    assert new.plan(records) == old(records)


@pytest.mark.parametrize("new, old", PAIRS[:2], ids=IDS[:2])
@pytest.mark.parametrize("seed", range(30))
def test_the_trees_and_the_per_step_bitsets_give_the_same_plans(new, old, seed, monkeypatch):
    # Short-lived records take the per-step bitsets; with no steps allowed they take the trees.
    records = random_records(seed)
    steps = new.plan(records)
    monkeypatch.setattr(_common, "_STEPS_PER_RECORD", 0)
    assert _common.step_intervals(records) is None
    assert new.plan(records) == steps == old(records)


@pytest.mark.parametrize("seed", range(30))
def test_the_first_candidates_walked_one_by_one_give_the_same_plans(seed, monkeypatch):
    # One vector round leaves most of the sides of a stage's first candidates to the Python walk.
    records = random_records(seed)
    expected = reference.greedy_by_size_improved(records)
    monkeypatch.setattr(greedy_by_size_improved, "_VECTOR_ROUNDS", 1)
    assert greedy_by_size_improved.plan(records) == expected
