"""The independent validator, rule by rule: each rule it checks, shown failing on a hand-made bad plan
(and the same plan, repaired, passing), so that no rule can silently stop being checked."""

from __future__ import annotations

import pytest

from packager.errors import PlanError
from packager.plan.portfolio import validate
from packager.plan.problem import Problem
from packager.plan.records import ObjectPlan, OffsetPlan, UsageRecord
from packager.plan.validate import check_object_plan, check_offset_plan, check_records

# Three tensors: 0 and 1 alive together at op 1; 2 after both.
RECORDS = (UsageRecord(0, 0, 1, 64), UsageRecord(1, 1, 2, 32), UsageRecord(2, 3, 4, 96))
GOOD_OFFSETS = OffsetPlan("hand-made", (0, 64, 0), 96, 16)
GOOD_OBJECTS = ObjectPlan("hand-made", (0, 1, 0), (96, 32))


def test_the_good_plans_pass():
    check_offset_plan(RECORDS, GOOD_OFFSETS)
    check_object_plan(RECORDS, GOOD_OBJECTS)


@pytest.mark.parametrize("record", [UsageRecord(0, 0, 1, -1), UsageRecord(0, -1, 1, 8),
                                    UsageRecord(0, 3, 2, 8)])
def test_a_malformed_record_is_refused(record):
    with pytest.raises(PlanError, match="malformed"):
        check_records([record])
    with pytest.raises(PlanError, match="malformed"):
        check_offset_plan([record], OffsetPlan("x", (0,), 64))
    with pytest.raises(PlanError, match="malformed"):
        check_object_plan([record], ObjectPlan("x", (0,), (64,)))


# -- offset plans ---------------------------------------------------------------------------------

def test_every_record_needs_an_offset():
    with pytest.raises(PlanError, match="a record has no place"):
        check_offset_plan(RECORDS, OffsetPlan("short", (0, 64), 96, 16))


@pytest.mark.parametrize("offset", [-16, None])
def test_an_offset_must_be_a_non_negative_number(offset):
    with pytest.raises(PlanError, match="no valid offset"):
        check_offset_plan(RECORDS, OffsetPlan("bad", (0, 64, offset), 96, 16))


def test_offsets_are_aligned():
    with pytest.raises(PlanError, match="not 16-byte aligned"):
        check_offset_plan(RECORDS, OffsetPlan("unaligned", (0, 72, 0), 104, 16))
    check_offset_plan(RECORDS, OffsetPlan("unaligned", (0, 72, 0), 104, 8))  # fine at 8


def test_every_record_lies_inside_the_arena():
    with pytest.raises(PlanError, match="outside the 95-byte arena"):
        check_offset_plan(RECORDS, OffsetPlan("small", (0, 64, 0), 95, 16))


def test_records_alive_together_never_overlap():
    with pytest.raises(PlanError, match="tensors 0 and 1 are alive together .* overlap"):
        check_offset_plan(RECORDS, OffsetPlan("overlap", (0, 48, 0), 96, 16))
    # Records not alive together may share bytes, and empty records take none.
    check_offset_plan(RECORDS + (UsageRecord(3, 1, 1, 0),), OffsetPlan("empty", (0, 64, 0, 16), 96, 16))


def test_an_overlap_far_apart_in_record_order_is_found():
    records = [UsageRecord(i, i, i, 16) for i in range(50)] + [UsageRecord(99, 10, 40, 16)]
    offsets = tuple([0] * 50 + [0])
    with pytest.raises(PlanError, match="overlap"):
        check_offset_plan(records, OffsetPlan("late", offsets, 16, 16))


def test_an_alias_must_point_to_a_planned_tensor_that_covers_it():
    with pytest.raises(PlanError, match="alias 7 points to tensor 5, which is not planned"):
        check_offset_plan(RECORDS, GOOD_OFFSETS, aliases={7: 5}, alias_intervals={7: (0, 1)})
    with pytest.raises(PlanError, match="alias 7 lives over ops 0..2 but tensor 0"):
        check_offset_plan(RECORDS, GOOD_OFFSETS, aliases={7: 0}, alias_intervals={7: (0, 2)})
    check_offset_plan(RECORDS, GOOD_OFFSETS, aliases={7: 0}, alias_intervals={7: (0, 1)})


def test_the_portfolio_gate_also_checks_the_alignment_the_plan_was_made_for():
    problem = Problem(records=RECORDS, alignment=64)
    with pytest.raises(PlanError, match="made for alignment 16, not 64"):
        validate(problem, OffsetPlan("other alignment", (0, 64, 0), 96, 16))
    validate(problem, OffsetPlan("right alignment", (0, 64, 0), 96, 64))


# -- shared-object plans --------------------------------------------------------------------------

def test_every_record_needs_an_object():
    with pytest.raises(PlanError, match="3 records but 2 assignments"):
        check_object_plan(RECORDS, ObjectPlan("short", (0, 1), (96, 32)))
    with pytest.raises(PlanError, match="tensor 2 has no object"):
        check_object_plan(RECORDS, ObjectPlan("nowhere", (0, 1, 2), (96, 32)))


def test_an_object_holds_each_of_its_tensors():
    with pytest.raises(PlanError, match=r"tensor 2 \(96 B\) does not fit object 0 \(64 B\)"):
        check_object_plan(RECORDS, ObjectPlan("too small", (0, 1, 0), (64, 32)))


def test_tensors_alive_together_never_share_an_object():
    with pytest.raises(PlanError, match="tensors 0 and 1 share object 0 while both alive"):
        check_object_plan(RECORDS, ObjectPlan("shared", (0, 0, 0), (96,)))


def test_a_texture_covers_its_tensors_in_both_dimensions():
    extents = [(4, 4), (2, 2), (8, 2)]
    textures = ObjectPlan("textures", (0, 1, 0), (96, 32), object_extents=((8, 4), (2, 2)))
    check_object_plan(RECORDS, textures, extents)
    with pytest.raises(PlanError, match=r"tensor 2 \(8x2\) does not fit object 0 \(4x4\)"):
        check_object_plan(RECORDS, ObjectPlan("narrow", (0, 1, 0), (96, 32), object_extents=((4, 4), (2, 2))),
                          extents)
    with pytest.raises(PlanError, match="needs object extents"):
        check_object_plan(RECORDS, GOOD_OBJECTS, extents)
    with pytest.raises(PlanError, match="extents do not match"):
        check_object_plan(RECORDS, ObjectPlan("mismatch", (0, 1, 0), (96, 32), object_extents=((8, 4),)),
                          extents)


# -- a plan proven: a value ------------------------------------------------------------------------

def test_a_proof_names_the_plan_and_records_and_holds_only_for_the_same_numbers():
    """`package` meets the plan it ships again (placed, then read back from its files): a plan
    with the numbers a Proven holds, for the same records, needs no second proof; any other
    number, or other records, do not match."""
    proven = check_offset_plan(RECORDS, GOOD_OFFSETS)
    assert proven.plan is GOOD_OFFSETS and proven.records == RECORDS
    assert proven.same_numbers(OffsetPlan("read back", tuple([0, 64, 0]), 96, 16), proven.records)
    assert proven.same_numbers(OffsetPlan("read back", [0, 64, 0], 96, 16), list(RECORDS))  # type: ignore[arg-type]
    assert not proven.same_numbers(OffsetPlan("read back", (0, 32, 0), 96, 16), RECORDS)
    assert not proven.same_numbers(OffsetPlan("read back", (0, 64, 0), 95, 16), RECORDS)
    assert not proven.same_numbers(OffsetPlan("read back", (0, 64, 0), 96, 8), RECORDS)
    assert not proven.same_numbers(GOOD_OFFSETS, RECORDS[:2] + (UsageRecord(2, 3, 4, 97),))
    assert not proven.same_numbers(GOOD_OBJECTS, RECORDS)
    objects = check_object_plan(RECORDS, GOOD_OBJECTS)
    assert objects.same_numbers(ObjectPlan("read back", (0, 1, 0), (96, 32)), RECORDS)
    assert not objects.same_numbers(ObjectPlan("read back", (0, 0, 0), (96, 32)), RECORDS)
    assert not objects.same_numbers(ObjectPlan("read back", (0, 1, 0), (96, 31)), RECORDS)


def test_no_verdict_is_kept_between_checks():
    """The checker keeps nothing: a plan whose numbers change under it is proven again."""
    offsets = [0, 64, 0]
    check_offset_plan(RECORDS, OffsetPlan("a list", offsets, 96, 16))  # type: ignore[arg-type]
    offsets[1] = 32  # the same list, changed: the clash is found
    with pytest.raises(PlanError, match="overlap in memory"):
        check_offset_plan(RECORDS, OffsetPlan("a list", offsets, 96, 16))  # type: ignore[arg-type]
    check_offset_plan(RECORDS, GOOD_OFFSETS)
    with pytest.raises(PlanError, match="overlap in memory"):
        check_offset_plan(RECORDS, OffsetPlan("hand-made", (0, 32, 0), 96, 16))


def test_the_portfolio_outcomes_carry_their_proofs():
    from packager.plan.portfolio import run_portfolio
    problem = Problem(records=RECORDS, alignment=16)
    result = run_portfolio(problem)
    for outcome in (*result.offsets, *result.objects):
        assert outcome.proven is not None and outcome.proven.plan is outcome.plan
        assert outcome.proven.same_numbers(outcome.plan, problem.records)
