"""Offset strategies: validity on random records, the known small cases, and the exact TFLite /
TFLite Micro behaviour (tie rules, and literal step-by-step restatements of their C++ loops)."""

from __future__ import annotations

import bisect
import functools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packager.errors import PlanError
from packager.plan.offsets import (
    greedy_by_breadth,
    greedy_by_size_tflite,
    greedy_by_size_tflm,
    greedy_in_order,
    naive,
    objects_end_to_end,
    path_cover,
    strip_packing,
)
from packager.plan.records import ObjectPlan, UsageRecord, align_up, offset_lower_bound
from packager.plan.validate import check_offset_plan
from tests.plan.record_strategies import records_of, tied_records, usage_records

STRATEGIES = [naive, greedy_in_order, greedy_by_size_tflite, greedy_by_size_tflm,
              greedy_by_breadth, strip_packing, path_cover, objects_end_to_end]
GREEDY_BY_SIZE = [greedy_by_size_tflite, greedy_by_size_tflm]
ALIGNMENTS = [1, 16, 64]

FEW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- every strategy, any input


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda m: m.NAME)
@pytest.mark.parametrize("alignment", ALIGNMENTS)
@FEW
@given(records=usage_records())
def test_random_records_give_valid_plans(strategy, alignment, records):
    plan = strategy.plan(records, alignment)
    assert plan.strategy == strategy.NAME
    assert plan.alignment == alignment
    check_offset_plan(records, plan)
    assert all(o % alignment == 0 for o in plan.offsets)
    assert plan.arena == max((o + r.size for o, r in zip(plan.offsets, records)), default=0)
    assert plan.arena >= offset_lower_bound(records)
    assert strategy.plan(records, alignment) == plan  # deterministic


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda m: m.NAME)
@pytest.mark.parametrize("triples", [
    [],
    [(0, 0, 0)],
    [(0, 0, 0), (0, 0, 0), (0, 0, 10)],
    [(0, 0, 7)],
    [(0, 0, 7), (0, 0, 7), (0, 0, 7)],          # one operator
    [(2, 5, 30)] * 6,                             # identical intervals
    [(0, 9, 5), (3, 3, 0), (9, 9, 5), (0, 0, 1)],
    [(10**9, 10**9 + 5, 10), (10**9 + 3, 2 * 10**9, 20), (0, 5, 7), (4, 10**9 + 4, 3)],
], ids=["empty", "one-empty", "empties", "one", "one-op", "identical", "mixed", "sparse-ops"])
@pytest.mark.parametrize("alignment", ALIGNMENTS)
def test_degenerate_inputs(strategy, triples, alignment):
    records = records_of(triples)
    plan = strategy.plan(records, alignment)
    check_offset_plan(records, plan)
    assert plan.arena >= offset_lower_bound(records)


def test_identical_intervals_stack_exactly():
    records = records_of([(2, 5, 30)] * 4)
    for strategy in STRATEGIES:
        assert strategy.plan(records).arena == 120, strategy.NAME
    for strategy in STRATEGIES:
        assert strategy.plan(records, 64).arena == 3 * 64 + 30, strategy.NAME


# ---------------------------------------------------------------- known small cases

PAPER_EXAMPLE = [(0, 1, 32), (1, 4, 28), (2, 5, 36), (3, 5, 16), (4, 5, 8), (5, 7, 64),
                 (6, 8, 10), (7, 8, 40)]


@pytest.mark.parametrize("strategy", GREEDY_BY_SIZE, ids=lambda m: m.NAME)
def test_paper_example_reaches_the_lower_bound(strategy):
    records = records_of(PAPER_EXAMPLE)
    assert offset_lower_bound(records) == 124
    assert strategy.plan(records).arena == 124


def test_naive_paper_example_is_the_sum_of_sizes():
    assert naive.plan(records_of(PAPER_EXAMPLE)).arena == sum(s for _, _, s in PAPER_EXAMPLE)


@pytest.mark.parametrize("strategy", GREEDY_BY_SIZE + [path_cover, strip_packing, greedy_in_order,
                                                        greedy_by_breadth],
                         ids=lambda m: m.NAME)
@pytest.mark.parametrize("n", [2, 3, 10, 51])
def test_staircase_chain_uses_two_slots(strategy, n):
    records = records_of([(i, i + 1, 48) for i in range(n)])
    plan = strategy.plan(records, 16)
    assert plan.arena == 2 * 48 if n > 1 else 48
    assert set(plan.offsets) == {0, 48}


@pytest.mark.parametrize("strategy", GREEDY_BY_SIZE, ids=lambda m: m.NAME)
def test_three_chained_tensors_use_the_gap_at_zero(strategy):
    plan = strategy.plan(records_of([(0, 1, 100), (1, 2, 80), (2, 3, 60)]))
    assert plan.offsets == (0, 100, 0)
    assert plan.arena == 180


# ---------------------------------------------------------------- TFLite CPU arena


def test_tflite_equal_sizes_earlier_first_op_then_tensor_index_first():
    # Same size: the one allocated at op 0 goes first (offset 0) even though it comes second.
    records = records_of([(1, 2, 32), (0, 2, 32)])
    assert greedy_by_size_tflite.plan(records).offsets == (32, 0)
    # Same size and same first op: the lower tensor index first.
    records = [UsageRecord(7, 0, 1, 32), UsageRecord(3, 0, 1, 32)]
    assert greedy_by_size_tflite.plan(records).offsets == (32, 0)


def test_tflite_first_of_equal_gaps_wins():
    # Two 40-byte holes, [10, 50) and [60, 100): the lower one wins.
    conflicts = [(0, 10, 0, 0), (50, 60, 0, 0), (100, 110, 0, 0)]
    assert greedy_by_size_tflite.arena_offset(conflicts, 40, 1) == 10
    assert greedy_by_size_tflite.arena_offset(conflicts, 30, 1) == 10
    assert greedy_by_size_tflite.arena_offset(conflicts, 41, 1) == 110


def test_tflite_order_and_exact_fit():
    records = records_of([(0, 0, 100), (1, 1, 100), (0, 1, 100), (0, 0, 40), (1, 1, 40),
                          (0, 1, 40)])
    # Order: the 100s by first op (positions 0, 2, then 1), then the 40s the same way (3, 5, 4);
    # the last 40 fits exactly in the hole [200, 240) at op 1.
    plan = greedy_by_size_tflite.plan(records)
    assert plan.offsets == (0, 0, 100, 200, 200, 240)


def test_tflite_whole_run_records_go_first_by_position():
    records = records_of([(0, 3, 10), (1, 2, 500), (0, 3, 20)])
    plan = greedy_by_size_tflite.plan(records, 64, whole_run=frozenset({2, 0}))
    assert plan.offsets == (0, 128, 64)
    with pytest.raises(PlanError):
        greedy_by_size_tflite.plan(records, whole_run=frozenset({3}))


def test_tflite_zero_size_takes_no_part():
    records = records_of([(0, 1, 0), (0, 1, 30)])
    assert greedy_by_size_tflite.plan(records, 64, whole_run=frozenset({0})).offsets == (0, 0)


def test_tflite_gap_compares_aligned_but_remembers_unaligned():
    # Placed, conflicting: [0,1) [192,256) [256,300) [448,512). A 128-byte record, 64-aligned:
    # hole 1 starts at 64 (aligned gap 128, remembered as 192 - 1 = 191); hole 2 starts at 320
    # (aligned gap 128 < 191): TFLite takes hole 2, a "first equal gap wins" reading would not.
    conflicts = [(0, 1, 0, 0), (192, 256, 0, 0), (256, 300, 0, 0), (448, 512, 0, 0)]
    assert greedy_by_size_tflite.arena_offset(conflicts, 128, 64) == 320
    assert greedy_by_size_tflite.arena_offset(conflicts, 128, 1) == 300  # 148 < 191
    assert greedy_by_size_tflite.arena_offset(conflicts, 300, 64) == 512


def tflite_literal(records, alignment, whole_run):
    """ArenaPlanner + SimpleMemoryArena, step by step: a comparator sort, then a scan of every
    active allocation (skipping those that do not overlap in time), upper_bound insertion."""

    def before(a, b):
        wa, wb = a in whole_run, b in whole_run
        if wa or wb:
            return (a < b) if (wa and wb) else wa
        ra, rb = records[a], records[b]
        if ra.size != rb.size:
            return ra.size > rb.size
        if ra.first_op != rb.first_op:
            return ra.first_op < rb.first_op
        return (ra.tensor, a) < (rb.tensor, b)

    order = sorted(range(len(records)),
                   key=functools.cmp_to_key(lambda a, b: -1 if before(a, b) else 1))
    offsets = [0] * len(records)
    active = []  # (offset, size, first, last), sorted by offset
    for i in order:
        r = records[i]
        if r.size == 0:
            continue
        best, best_fit, current = None, float("inf"), 0
        for off, size, first, last in active:
            if last < r.first_op or first > r.last_op:
                continue
            aligned = align_up(current, alignment)
            if aligned + r.size <= off and off - aligned < best_fit:
                best, best_fit = aligned, off - current
            current = max(current, off + size)
            if best_fit == 0:
                break
        if best is None:
            best = align_up(current, alignment)
        offsets[i] = best
        keys = [a[0] for a in active]
        active.insert(bisect.bisect_right(keys, best), (best, r.size, r.first_op, r.last_op))
    return tuple(offsets)


@pytest.mark.parametrize("alignment", ALIGNMENTS)
@FEW
@given(records=st.one_of(tied_records, usage_records()), data=st.data())
def test_tflite_matches_its_step_by_step_statement(alignment, records, data):
    whole_run = frozenset(data.draw(st.sets(st.integers(0, max(len(records) - 1, 0)), max_size=3))
                          if records else set())
    plan = greedy_by_size_tflite.plan(records, alignment, whole_run=whole_run)
    assert plan.offsets == tflite_literal(records, alignment, whole_run)
    check_offset_plan(records, plan)


# ---------------------------------------------------------------- TFLite Micro


def test_tflm_equal_sizes_later_added_first():
    # Same size, same lifetime: TFLite Micro places the later-added buffer first (offset 0),
    # where TFLite's CPU arena would place the earlier one first.
    records = records_of([(0, 1, 32), (0, 1, 32)])
    assert greedy_by_size_tflm.plan(records).offsets == (32, 0)
    assert greedy_by_size_tflite.plan(records).offsets == (0, 32)


def test_tflm_takes_the_first_gap_not_the_smallest():
    # At op 1 the fixed buffers leave holes [40, 140) and [240, 300): TFLite Micro puts the
    # 30-byte buffer in the first one, TFLite's best fit in the tighter one.
    records = records_of([(0, 1, 100), (1, 1, 100), (0, 1, 40), (1, 1, 30)])
    fixed = {0: 140, 2: 0, 1: 300}
    plan = greedy_by_size_tflm.plan(records, fixed=fixed)
    assert plan.offsets == (140, 300, 0, 40)
    conflicts = [(0, 40, 0, 1), (140, 240, 0, 1), (300, 400, 1, 1)]
    assert greedy_by_size_tflm.first_gap_offset(conflicts, 30) == 40
    assert greedy_by_size_tflite.arena_offset(conflicts, 30, 1) == 240


def test_tflm_rounds_sizes_before_planning():
    # 20 bytes become 32 at 16-byte alignment: the second buffer starts at 32, not 20 or 16*2.
    records = records_of([(0, 1, 20), (0, 1, 20)])
    assert greedy_by_size_tflm.plan(records, 16).offsets == (32, 0)
    assert greedy_by_size_tflm.plan(records, 1).offsets == (20, 0)


def test_tflm_fixed_offsets_are_kept_and_planned_around():
    records = records_of([(0, 2, 64), (0, 2, 32), (1, 1, 32), (0, 0, 16)])
    plan = greedy_by_size_tflm.plan(records, 16, fixed={1: 64})
    assert plan.offsets[1] == 64
    check_offset_plan(records, plan)
    # The 64-byte record first at 0 (before the fixed one in offset order: gap [0,64) fits).
    assert plan.offsets[0] == 0
    with pytest.raises(PlanError):
        greedy_by_size_tflm.plan(records, 16, fixed={1: 8})  # not aligned
    with pytest.raises(PlanError):
        greedy_by_size_tflm.plan(records, 16, fixed={0: 0, 1: 32})  # overlap


def tflm_literal(records, alignment, fixed):
    """GreedyMemoryPlanner::CalculateOffsetsIfNeeded, step by step: arrays filled head (offline)
    and tail (online), a stable bubble sort of the online part, then the linked-list walk."""
    n = len(records)
    if n == 0:
        return ()
    size = [align_up(r.size, alignment) for r in records]
    sizes_sorted, ids_sorted, offsets = [0] * n, [0] * n, [-1] * n
    head, tail = 0, n
    for i in range(n):
        if i not in fixed:
            tail -= 1
            sizes_sorted[tail], ids_sorted[tail] = size[i], i
        else:
            sizes_sorted[head], ids_sorted[head] = size[i], i
            offsets[i] = fixed[i]
            head += 1
    swapped = True
    while swapped:
        swapped = False
        for k in range(head + 1, n):
            if sizes_sorted[k - 1] < sizes_sorted[k]:
                sizes_sorted[k - 1], sizes_sorted[k] = sizes_sorted[k], sizes_sorted[k - 1]
                ids_sorted[k - 1], ids_sorted[k] = ids_sorted[k], ids_sorted[k - 1]
                swapped = True
    entries = []  # ListEntry: [offset, buffer id, next index]
    first_entry = 0
    b = ids_sorted[0]
    if b not in fixed:
        offsets[b] = 0
    entries.append([offsets[b], b, -1])

    def overlaps(entry, f, l):
        r = records[entry[1]]
        return not (r.first_op > l or f > r.last_op)

    def next_active(start, f, l):
        k = first_entry if start is None else start[2]
        while k != -1:
            if overlaps(entries[k], f, l):
                return entries[k]
            k = entries[k][2]
        return None

    for k in range(1, n):
        b = ids_sorted[k]
        r = records[b]
        candidate = 0
        if b not in fixed:
            prior = None
            while True:
                nxt = next_active(prior, r.first_op, r.last_op)
                if prior is not None:
                    candidate = max(candidate, prior[0] + size[prior[1]])
                if nxt is None or nxt[0] - candidate >= size[b]:
                    break
                prior = nxt
        else:
            candidate = fixed[b]
        offsets[b] = candidate
        entries.append([candidate, b, -1])
        new = len(entries) - 1
        if entries[first_entry][0] > candidate:
            entries[new][2] = first_entry
            first_entry = new
        else:
            cur = entries[first_entry]
            while cur[2] != -1 and entries[cur[2]][0] <= candidate:
                cur = entries[cur[2]]
            entries[new][2], cur[2] = cur[2], new
    return tuple(offsets)


@st.composite
def records_with_fixed(draw):
    records = draw(st.one_of(tied_records, usage_records()))
    alignment = draw(st.sampled_from(ALIGNMENTS))
    chosen = draw(st.lists(st.integers(0, max(len(records) - 1, 0)), max_size=4, unique=True)
                  if records else st.just([]))
    # Give the chosen records disjoint aligned offsets, with random holes between them.
    fixed, top = {}, 0
    for i in chosen:
        top = align_up(top + draw(st.integers(0, 200)), alignment)
        fixed[i] = top
        top += align_up(records[i].size, alignment)
    return records, alignment, fixed


@FEW
@given(case=records_with_fixed())
def test_tflm_matches_its_step_by_step_statement(case):
    records, alignment, fixed = case
    plan = greedy_by_size_tflm.plan(records, alignment, fixed=fixed)
    assert plan.offsets == tflm_literal(records, alignment, fixed)
    check_offset_plan(records, plan)
    assert all(plan.offsets[i] == o for i, o in fixed.items())


# ---------------------------------------------------------------- the other strategies


def test_greedy_in_order_climbs_where_greedy_by_size_does_not():
    # In start order the 10 goes in first, and the 100 must go above it.
    records = records_of([(0, 1, 10), (1, 2, 100), (2, 3, 10)])
    assert greedy_in_order.plan(records).offsets == (0, 10, 0)
    assert greedy_by_size_tflite.plan(records).offsets == (100, 0, 100)


def test_path_cover_groups_are_few_and_disjoint():
    records = records_of([(0, 1, 5), (2, 3, 5), (1, 2, 5), (4, 4, 5), (0, 4, 1)])
    groups = path_cover.groups_of(records)
    assert len(groups) == 3  # the most records alive at once
    for g in groups:
        for a, b in zip(g, g[1:]):
            assert records[a].last_op < records[b].first_op
    # Best fit: the record starting at 4 joins the group that ended latest (at op 3).
    assert [0, 1, 3] in groups


def test_strip_packing_puts_the_longest_lived_record_at_the_bottom():
    records = records_of([(0, 1, 50), (0, 9, 10), (5, 9, 20), (2, 3, 5)])
    plan = strip_packing.plan(records)
    assert plan.offsets[1] == 0
    check_offset_plan(records, plan)


def test_objects_end_to_end_lays_given_objects_out():
    records = records_of([(0, 1, 10), (2, 3, 7), (0, 3, 20)])
    objects = ObjectPlan("given", assignment=(0, 0, 1), object_sizes=(10, 20))
    plan = objects_end_to_end.plan(records, 16, objects=objects)
    assert plan.offsets == (0, 0, 16)
    assert plan.arena == 36
    with pytest.raises(PlanError):
        objects_end_to_end.plan(records, objects=ObjectPlan("bad", (0, 0, 0), (10,)))  # too small
    with pytest.raises(PlanError):
        objects_end_to_end.plan(records, objects=ObjectPlan("bad", (0, 1), (10, 20)))


def test_objects_end_to_end_without_objects_shares_them():
    records = records_of([(0, 1, 10), (2, 3, 7), (0, 3, 20)])
    plan = objects_end_to_end.plan(records)
    assert plan.arena == 30


# ---------------------------------------------------------------- speed


def random_records(n: int, n_ops: int, seed: int = 0) -> list[UsageRecord]:
    rnd = random.Random(seed)
    out = []
    for t in range(n):
        first = rnd.randrange(n_ops)
        life = min(int(rnd.expovariate(1 / 20)), n_ops - 1 - first)
        out.append(UsageRecord(t, first, first + life, rnd.randint(64, 1_000_000)))
    return out


def test_greedy_by_size_plans_ten_thousand_records():
    # Its speed at this size and beyond is measured by benchmarks/bench_random.py.
    records = random_records(10_000, 2_000)
    plan = greedy_by_size_tflite.plan(records, 64)
    check_offset_plan(records, plan)
    assert plan.arena >= offset_lower_bound(records)
