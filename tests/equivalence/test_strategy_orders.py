"""The record orders some strategies take as vector sorts (above 64 records, or from the
shared-object strategies' FAST_FROM) are the very orders of their Python sorts (ties often: few
distinct times and sizes)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from packager.plan.objects import _common
from packager.plan.objects._common import by_first_op, by_size_desc
from packager.plan.objects.greedy_by_size_improved_fast import _Stage
from packager.plan.offsets import simulated_allocator
from packager.plan.offsets.bfc import event_orders
from packager.plan.records import UsageRecord

records_st = st.lists(st.tuples(st.integers(0, 20), st.integers(0, 6), st.sampled_from([0, 8, 16, 64])),
                      min_size=65, max_size=200).map(
    lambda rows: tuple(UsageRecord(i, a, a + d, s) for i, (a, d, s) in enumerate(rows)))


@settings(max_examples=60, deadline=None)
@given(records=records_st)
def test_vector_sorts_give_the_python_sorts_orders(records):
    ids = [i for i, r in enumerate(records) if r.size > 0]
    by_first = sorted(ids, key=lambda i: (records[i].first_op, i))
    by_last = sorted(ids, key=lambda i: (records[i].last_op, i))
    assert event_orders(records) == (by_first, by_last)
    assert simulated_allocator._orders(records) == (
        sorted(ids, key=lambda i: (records[i].first_op, -records[i].size, i)), by_last)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_common, "FAST_FROM", 0)  # the shared-object strategies' vector sorts
        assert by_size_desc(records) == sorted(range(len(records)), key=lambda i: (-records[i].size, i))
        assert by_first_op(records) == sorted(range(len(records)), key=lambda i: (records[i].first_op, i))
    first = [r.first_op for r in records]
    last = [r.last_op for r in records]
    stage = _Stage(first, last)
    assert stage.by_first == sorted(range(len(first)), key=lambda k: (first[k], k))
    assert stage.by_last == sorted(range(len(last)), key=lambda k: (last[k], -k))


@settings(max_examples=60, deadline=None)
@given(records=records_st, objects=st.lists(st.integers(0, 40), min_size=200, max_size=200))
def test_conflict_index_per_operator_leaves_give_the_general_answers(records, objects):
    # One operator index per leaf takes the short form of add and busy: the same bitsets as the
    # general form (buckets of indices) gives on the same index.
    from packager.plan.objects.conflicts import ConflictIndex
    short, general = ConflictIndex(records), ConflictIndex(records)
    assert short._width == 1 and type(short).__name__ == "_PerIndexLeaves"
    for pos, obj in zip(range(len(records)), objects):
        short.add(obj, pos)
        ConflictIndex.add(general, obj, pos)
        if pos % 50 == 0 or pos == len(records) - 1:
            assert [short.busy(p) for p in range(len(records))] == \
                [ConflictIndex.busy(general, p) for p in range(len(records))]
