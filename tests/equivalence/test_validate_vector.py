"""The checker's vector form (numpy, sort-based) against its sweep over time: the same verdict on
random good and bad plans, and one fault among 100,000 records found and named as the sweep
names it."""

from __future__ import annotations

import random

import pytest

from packager.errors import PlanError
from packager.plan import validate_vector
from packager.plan.objects import greedy_by_size
from packager.plan.records import ObjectPlan, OffsetPlan, Records, UsageRecord
from packager.plan.validate import check_object_plan, check_offset_plan, object_fault, offset_fault


def _sweep_passes(fault, records, plan) -> bool:
    return fault(Records.of(records), plan) is None


def _offsets_pass(records, plan):
    return validate_vector.offsets_pass(Records.of(records), plan)


def _objects_pass(records, plan):
    return validate_vector.objects_pass(Records.of(records), plan)


def _random_records(rng: random.Random) -> tuple[UsageRecord, ...]:
    steps = rng.choice([3, 8, 30, 1000])
    out = []
    for i in range(rng.randrange(0, 14)):
        first = rng.randrange(steps)
        last = min(steps - 1, first + rng.randrange(rng.choice([1, 3, steps])))
        out.append(UsageRecord(i, first, last, rng.choice([0, 1, 2, 3, 4, 8, 16])))
    return tuple(out)


@pytest.mark.parametrize("seed", range(4))
def test_both_forms_give_the_same_verdict_on_random_offset_plans(seed):
    rng = random.Random(seed)
    verdicts = set()
    for _ in range(1500):
        records = _random_records(rng)
        top = rng.choice([4, 8, 20, 60])  # a low ceiling makes overlaps common, a high one rare
        offsets = tuple(rng.randrange(top) for _ in records)
        plan = OffsetPlan("random", offsets, max((o + r.size for o, r in zip(offsets, records)), default=0))
        by_sweep = _sweep_passes(offset_fault, records, plan)
        assert _offsets_pass(records, plan) is by_sweep, (records, offsets)
        verdicts.add(by_sweep)
    assert verdicts == {True, False}  # both kinds of plan were drawn


@pytest.mark.parametrize("seed", range(2))
def test_both_forms_agree_where_offsets_are_too_large_to_pack_with_the_node(seed):
    """Offsets near 2^58 cannot share an int64 key with a tree node: the vector form ranks them
    first. Same random plans, moved up by 2^58 (the arena too), same verdicts."""
    rng = random.Random(200 + seed)
    base = 1 << 58
    verdicts = set()
    for _ in range(600):
        records = _random_records(rng)
        top = rng.choice([4, 8, 20])
        offsets = tuple(base + rng.randrange(top) for _ in records)
        plan = OffsetPlan("random", offsets, max((o + r.size for o, r in zip(offsets, records)), default=0))
        by_sweep = _sweep_passes(offset_fault, records, plan)
        assert _offsets_pass(records, plan) is by_sweep, (records, offsets)
        verdicts.add(by_sweep)
    assert verdicts == {True, False}


@pytest.mark.parametrize("seed", range(4))
def test_both_forms_give_the_same_verdict_on_random_object_plans(seed):
    rng = random.Random(100 + seed)
    verdicts = set()
    for _ in range(1500):
        records = _random_records(rng)
        count = rng.randrange(1, 5)
        plan = ObjectPlan("random", tuple(rng.randrange(count) for _ in records),
                          tuple(rng.choice([0, 4, 16]) for _ in range(count)))
        by_sweep = _sweep_passes(object_fault, records, plan)
        assert _objects_pass(records, plan) is by_sweep, (records, plan)
        verdicts.add(by_sweep)
    assert verdicts == {True, False}


@pytest.mark.parametrize("seed", range(3))
def test_both_forms_agree_on_hundreds_of_records_deep_in_the_tree(seed):
    """Hundreds of records over a long timeline put pieces on many levels of the tree, short and
    long-lived ones together: clashes with ancestors several steps up, found the same way."""
    rng = random.Random(300 + seed)
    verdicts = set()
    for _ in range(60):
        steps = rng.choice([50, 400, 3000])
        records = []
        for i in range(rng.randrange(100, 400)):
            first = rng.randrange(steps)
            last = min(steps - 1, first + rng.randrange(rng.choice([2, 10, steps])))
            records.append(UsageRecord(i, first, last, rng.choice([0, 8, 16, 24])))
        records = tuple(records)
        # A tight valid plan (slots of 24 bytes shared as greedy by size shares objects), then
        # often one record moved to a random slot.
        slots = list(greedy_by_size.plan(records).assignment)
        if rng.random() < 0.7:
            slots[rng.randrange(len(slots))] = rng.randrange(max(slots) + 1)
        offsets = tuple(24 * slot for slot in slots)
        plan = OffsetPlan("random", offsets, max((o + r.size for o, r in zip(offsets, records)), default=0))
        by_sweep = _sweep_passes(offset_fault, records, plan)
        assert _offsets_pass(records, plan) is by_sweep, (records, offsets)
        verdicts.add(by_sweep)
        objects = ObjectPlan("random", tuple(slots), (24,) * (max(slots) + 1))
        by_sweep = _sweep_passes(object_fault, records, objects)
        assert _objects_pass(records, objects) is by_sweep
    assert verdicts == {True, False}


N = 100_000


def _chain() -> tuple[tuple[UsageRecord, ...], list[int]]:
    """Each record alive over two operators, so neighbours overlap in time: two slots suffice,
    and one long-lived record above them all."""
    records = [UsageRecord(i, i, i + 1, 16) for i in range(N - 1)]
    records.append(UsageRecord(N - 1, 10, N - 10, 32))
    offsets = [16 * (i % 2) for i in range(N - 1)] + [32]
    return tuple(records), offsets


def test_a_valid_plan_of_100000_records_passes():
    records, offsets = _chain()
    check_offset_plan(records, OffsetPlan("chain", tuple(offsets), 64, 16))


@pytest.mark.parametrize("moved, offset, pair", [
    (50_000, 16, "tensors 49999 and 50000"),  # onto its neighbour's slot
    (77_777, 40, "tensors 99999 and 77777"),  # into the long-lived record, far away in order
])
def test_one_overlap_among_100000_records_is_caught_and_named(moved, offset, pair):
    records, offsets = _chain()
    offsets[moved] = offset
    plan = OffsetPlan("one overlap", tuple(offsets), 64, 8)
    assert _offsets_pass(records, plan) is False
    with pytest.raises(PlanError, match=f"{pair} are alive together .* overlap in memory"):
        check_offset_plan(records, plan)


def test_one_shared_object_among_100000_records_is_caught_and_named():
    records, _ = _chain()
    assignment = [i % 2 for i in range(N - 1)] + [2]
    check_object_plan(records, ObjectPlan("chain", tuple(assignment), (16, 16, 32)))
    assignment[60_001] = 0  # now alive together with 60,000 in object 0
    with pytest.raises(PlanError, match="tensors 60000 and 60001 share object 0 while both alive"):
        check_object_plan(records, ObjectPlan("one shared", tuple(assignment), (16, 16, 32)))
