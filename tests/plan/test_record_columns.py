"""Records: the bounds checked once when the columns are made, the sequence of UsageRecords they
read as, and what is derived from the columns (the dense timeline, the breadths, the positional
maxima, the breadth-first order) held to plain-Python definitions on random records with dense
and sparse times, ties, empty records and one long-lived record."""

from __future__ import annotations

import bisect
import random

import numpy as np
import pytest

from packager.errors import PlanError
from packager.plan import records as rec
from packager.plan.records import Records, UsageRecord
from tests.pins.pin_cases import random_records


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


# -- the plain-Python definitions ------------------------------------------------------------------

def _compress_time(records):
    starts = sorted({r.first_op for r in records})
    rank = {t: i for i, t in enumerate(starts)}
    # last_op maps to the last start point not after it: conflicts are unchanged.
    return [UsageRecord(r.tensor, rank[r.first_op], bisect.bisect_right(starts, r.last_op) - 1, r.size)
            for r in records]


def _breadth_by_step(records, steps):
    steps = max(steps, max((r.last_op for r in records), default=-1) + 1)
    delta = [0] * (steps + 1)
    for r in records:
        delta[r.first_op] += r.size
        delta[r.last_op + 1] -= r.size
    out, running = [], 0
    for t in range(steps):
        running += delta[t]
        out.append(running)
    return out


def _profiles(dense):
    profiles = [[] for _ in range(max((r.last_op for r in dense), default=-1) + 1)]
    for i, r in enumerate(dense):
        for t in range(r.first_op, r.last_op + 1):
            profiles[t].append(i)
    return profiles


def _positional_maxima(records):
    maxima = []
    for profile in _profiles(_compress_time(records)):
        for k, size in enumerate(sorted((records[i].size for i in profile), reverse=True)):
            if k == len(maxima):
                maxima.append(size)
            maxima[k] = max(maxima[k], size)
    return maxima


def _breadth_first_order(records):
    dense = _compress_time(records)
    profiles = _profiles(dense)
    breadths = _breadth_by_step(dense, 0)
    seen = [False] * len(records)
    order = []
    for op in sorted(range(len(profiles)), key=lambda op: (-breadths[op], op)):
        fresh = sorted((i for i in profiles[op] if not seen[i]), key=lambda i: (-records[i].size, i))
        for i in fresh:
            seen[i] = True
        order += fresh
    return order


def _as_tuples(records):
    return [(r.tensor, r.first_op, r.last_op, r.size) for r in records]


@pytest.mark.parametrize("k", range(0, len(CASES), 10))
def test_the_columns_agree_with_the_plain_definitions(k):
    for records in CASES[k:k + 10]:
        dense = _compress_time(records)
        assert _as_tuples(rec.compress_time(records)) == _as_tuples(dense)
        assert rec.operator_breadths(records) == _breadth_by_step(dense, 0)
        if rec.num_ops(records) < 10**6:
            for steps in (0, rec.num_ops(records) + 3):
                assert rec.breadth_by_step(records, steps) == _breadth_by_step(records, steps)
        assert rec.positional_maxima(records) == _positional_maxima(records)
        assert rec.breadth_first_order(records) == _breadth_first_order(records)


def test_positional_maxima_taken_a_run_of_profiles_at_a_time(monkeypatch):
    """Many records alive together: the (record, profile) pairs are ranked in several runs."""
    records = tuple(UsageRecord(i, i % 50, 50 + i % 70, 1 + (i * 37) % 500) for i in range(400))
    whole = rec.positional_maxima(records)
    monkeypatch.setattr(rec, "_PAIRS_AT_ONCE", 1000)
    assert rec.positional_maxima(Records.of(records)) == whole == _positional_maxima(records)


# -- the value -------------------------------------------------------------------------------------

def test_records_read_as_a_sequence_of_usage_records_and_cannot_change():
    items = (UsageRecord(4, 0, 1, 64), UsageRecord(7, 1, 2, 32), UsageRecord(9, 3, 4, 96))
    records = Records.of(items)
    assert Records.of(records) is records and len(records) == 3 and records[1] == items[1]
    assert tuple(records) == items and records == items and records == list(items)
    assert records[1:] == items[1:] and isinstance(records[1:], Records)
    assert records + (UsageRecord(11, 5, 5, 8),) == items + (UsageRecord(11, 5, 5, 8),)
    assert records == Records([4, 7, 9], [0, 1, 3], [1, 2, 4], [64, 32, 96])
    assert records[0].conflicts(records[1]) and not records[1].conflicts(records[2])
    for column in records.columns():
        assert column.dtype == np.int64
        with pytest.raises(ValueError):
            column[0] = 1
    assert records.maxima is records.maxima  # derived once


@pytest.mark.parametrize("record, why", [
    (UsageRecord(0, 0, 1, -1), "malformed"), (UsageRecord(0, -1, 1, 8), "malformed"),
    (UsageRecord(0, 3, 2, 8), "malformed"), (UsageRecord(0, 0, 1, 2**63), "size beyond int64"),
    (UsageRecord(0, 0, 2**63, 8), "last_op beyond int64"), (UsageRecord(0, 0, 2**62, 8), "below 2\\^62"),
    (UsageRecord(2**64, 0, 1, 8), "tensor beyond int64"), (UsageRecord(0, None, 1, 8), "not an integer"),
])
def test_records_out_of_bounds_are_refused_when_made(record, why):
    good = UsageRecord(1, 0, 0, 16)
    with pytest.raises(PlanError, match=f"^record 1 .*{why}"):
        Records.of([good, record])


def test_sizes_whose_sum_leaves_int64_sums_are_refused():
    Records.of([UsageRecord(0, 0, 5, 2**61), UsageRecord(1, 3, 9, 2**61 - 1)])
    with pytest.raises(PlanError, match="sizes add up to 4611686018427387904 B"):
        Records.of([UsageRecord(0, 0, 5, 2**61), UsageRecord(1, 3, 9, 2**61)])
