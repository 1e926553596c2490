"""Greedy by size improved on the paths that only show above 64 records: the walks' starting
places found for a whole stage by vector searches (below, by bisect), the opening candidates of a
stage sorted by vector operations (ties everywhere: few operators, few sizes), the objects' sizes
taken at the end; each the same as its Python form, and the plans those of the readable form."""

from __future__ import annotations

import bisect

from hypothesis import HealthCheck, given, settings, strategies as st

from packager.plan.objects import greedy_by_size_improved, greedy_by_size_improved_fast
from packager.plan.objects.greedy_by_size_improved_fast import _Stage
from packager.plan.records import UsageRecord

SOME = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

times_st = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 8)), min_size=65, max_size=200)


def tied_records(draw_rows) -> tuple[UsageRecord, ...]:
    return tuple(UsageRecord(i, a, a + d, s) for i, (a, d, s) in enumerate(draw_rows))


many_tied_records = st.lists(
    st.tuples(st.integers(0, 12), st.integers(0, 6), st.sampled_from([0, 8, 16, 16, 24, 64, 64])),
    min_size=65, max_size=300).map(tied_records)


@SOME
@given(rows=times_st)
def test_a_stages_walks_start_where_bisect_says(rows):
    # Above 64 records by vector searches for the whole stage (below, by bisect when needed).
    first = [a for a, _ in rows]
    last = [a + d for a, d in rows]
    stage = _Stage(first, last)
    assert stage.right_start == [bisect.bisect_right(stage.firsts, e) for e in last]
    assert stage.left_start == [bisect.bisect_left(stage.lasts, s) - 1 for s in first]


@SOME
@given(records=many_tied_records)
def test_many_tied_records_give_the_readable_forms_plans(records):
    # Several stages of tied records: the sorted opening candidates of each stage pop in the
    # order of the readable form's least pairs.
    assert greedy_by_size_improved_fast.plan(records) == greedy_by_size_improved.plan(records)


@SOME
@given(records=many_tied_records, huge=st.booleans())
def test_every_object_takes_its_largest_members_size(records, huge):
    # A size near the records' bound (their sizes sum below 2^62).
    if huge:
        records = records + (UsageRecord(len(records), 0, 0, 2**61),)
    plan = greedy_by_size_improved_fast.plan(records)
    largest = [0] * len(plan.object_sizes)
    for record, obj in zip(records, plan.assignment):
        largest[obj] = max(largest[obj], record.size)
    assert list(plan.object_sizes) == largest
