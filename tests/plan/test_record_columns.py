"""The lower bounds, breadths and the breadth-first order are computed with numpy; inputs whose
numbers do not fit int64 keep the pure-Python forms. Both forms must agree exactly, on random
records with dense and sparse times, ties, empty records and one long-lived record."""

from __future__ import annotations

import random

import pytest

from packager.plan import records as rec
from packager.plan.records import UsageRecord
from tests.plan.pin_cases import random_records


def _cases():
    rng = random.Random(11)
    for k in range(150):
        n = rng.choice([0, 1, 2, 7, 40, 300])
        steps = rng.choice([1, 4, 50, 100_000, 10**12])
        life = rng.choice([1, 3, 40, 10**11])
        records = random_records(k, n, steps, life, rng.choice([3, 64, 5000]))
        if records and rng.random() < 0.3:  # one record alive throughout
            records.append(UsageRecord(n, 0, max(r.last_op for r in records), 96))
        yield tuple(records)


CASES = list(_cases())


def _as_tuples(records):
    return [(r.tensor, r.first_op, r.last_op, r.size) for r in records]


@pytest.mark.parametrize("k", range(0, len(CASES), 10))
def test_numpy_and_python_forms_agree(k):
    for records in CASES[k:k + 10]:
        assert rec.time_columns(records) is not None
        dense = rec._compress_time_python(records)
        assert _as_tuples(rec.compress_time(records)) == _as_tuples(dense)
        assert rec.operator_breadths(records) == rec._breadth_by_step_python(dense, rec.num_ops(dense))
        if rec.num_ops(records) < 10**6:
            for steps in (0, rec.num_ops(records) + 3):
                assert rec.breadth_by_step(records, steps) == rec._breadth_by_step_python(records, steps)
        assert rec.positional_maxima(records) == rec._positional_maxima_python(records)
        assert rec.breadth_first_order(records) == rec._breadth_first_order_python(records)


def test_positional_maxima_taken_a_run_of_profiles_at_a_time(monkeypatch):
    """Many records alive together: the (record, profile) pairs are ranked in several runs."""
    records = tuple(UsageRecord(i, i % 50, 50 + i % 70, 1 + (i * 37) % 500) for i in range(400))
    whole = rec.positional_maxima(records)
    monkeypatch.setattr(rec, "_PAIRS_AT_ONCE", 1000)
    rec._last_columns[:] = [None, None]
    assert rec.positional_maxima(records) == whole == rec._positional_maxima_python(records)


def test_numbers_beyond_int64_take_the_python_forms():
    records = (UsageRecord(0, 0, 5, 2**62), UsageRecord(1, 3, 9, 2**62), UsageRecord(2, 7, 8, 1))
    assert rec.time_columns(records) is None
    assert rec.offset_lower_bound(records) == 2**63
    assert rec.positional_maxima(records) == [2**62, 2**62]
    assert rec.breadth_first_order(records) == [0, 1, 2]


@pytest.mark.parametrize("seed", range(4))
def test_strategies_plan_the_same_from_columns_and_beyond_int64(seed):
    # Times shifted beyond int64 take the pure-Python forms of the orders, ranks and groups:
    # the plans must not change (only the relative order of times matters).
    from packager.plan.offsets import greedy_in_order, path_cover, strip_packing
    rng = random.Random(seed)
    records = []
    for i in range(rng.randint(1, 80)):
        first = rng.randint(0, 40)
        records.append(UsageRecord(i, first, first + rng.randint(0, 10), rng.choice([0, 16, 32, 48, 100])))
    shifted = tuple(UsageRecord(r.tensor, r.first_op + (1 << 70), r.last_op + (1 << 70), r.size)
                    for r in records)
    assert rec.time_columns(tuple(records)) is not None and rec.time_columns(shifted) is None
    for module in (strip_packing, greedy_in_order, path_cover):
        for alignment in (1, 16):
            assert module.plan(tuple(records), alignment) == module.plan(shifted, alignment)
