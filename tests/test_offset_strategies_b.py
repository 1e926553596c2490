"""The replayed allocators: the MegEngine-style simulation (a strategy) and BFC (a baseline)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from packager.plan.offsets import bfc, simulated_allocator
from packager.plan.records import UsageRecord, offset_lower_bound
from packager.validate import check_offset_plan

records_st = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 8), st.integers(0, 5000)),
                      max_size=50).map(lambda rows: [UsageRecord(i, a, a + d, s)
                                                      for i, (a, d, s) in enumerate(rows)])


@settings(max_examples=150, deadline=None)
@given(records=records_st, alignment=st.sampled_from([1, 16, 64]))
def test_simulated_allocator_is_valid(records, alignment):
    plan = simulated_allocator.plan(records, alignment)
    check_offset_plan(records, plan)
    assert plan.arena >= offset_lower_bound(records)


@settings(max_examples=150, deadline=None)
@given(records=records_st)
def test_bfc_replay_is_valid(records):
    plan = bfc.replay(records)
    check_offset_plan(records, plan)
    assert all(o % 256 == 0 for o in plan.offsets)


def test_simulated_allocator_reuses_freed_blocks():
    # a frees at op 1; b (same size) starts at op 2 and takes a's block; c grows the pool.
    recs = [UsageRecord(0, 0, 1, 100), UsageRecord(1, 0, 3, 50), UsageRecord(2, 2, 3, 100),
            UsageRecord(3, 2, 3, 30)]
    plan = simulated_allocator.plan(recs)
    assert plan.offsets[2] == plan.offsets[0]
    assert plan.arena == 180


def test_bfc_rounds_splits_and_coalesces():
    assert bfc.round_request(1) == 256 and bfc.round_request(257) == 512
    # Two 256-byte chunks freed side by side coalesce into one 512-byte chunk for the next request.
    recs = [UsageRecord(0, 0, 0, 200), UsageRecord(1, 0, 0, 200), UsageRecord(2, 1, 1, 500)]
    plan = bfc.replay(recs)
    assert plan.offsets[:2] == (0, 256) and plan.offsets[2] == 0 and plan.arena == 500
    # A 1024-byte free chunk serving a 256-byte request is split: the rest serves the next one.
    recs = [UsageRecord(0, 0, 0, 1024), UsageRecord(1, 1, 2, 256), UsageRecord(2, 2, 2, 512)]
    plan = bfc.replay(recs)
    assert plan.offsets[1] == 0 and plan.offsets[2] == 256 and plan.arena == 1024
