"""The check of a plan against its model compares whole columns; whatever differs is found and
worded by the entry-by-entry check, so a tampered plan gets the same one-line error as before."""

from __future__ import annotations

from dataclasses import replace

import pytest

from packager.arenas import problem_of
from packager.errors import PlanError
from packager.package import check
from packager.package.check import check_package_plan, expected_arenas
from packager.reader import read_model
from tests.package.support import model_file, packaged

CASES = [("inplace_candidates", "tflite"), ("residual", "ideal"), ("mobile_block", "tflm"),
         ("while_loop", "tflite")]


def _first_arena(name: str, semantics: str):
    plan = packaged(name, semantics).plan
    model = read_model(model_file(name))
    arena = expected_arenas(plan, model)[0]
    return plan, model, plan.arenas[0], problem_of(arena.lifetimes)


@pytest.mark.parametrize("name,semantics", CASES)
def test_a_true_plan_passes_by_its_columns_with_the_same_offsets(name, semantics):
    plan, model, section, problem = _first_arena(name, semantics)
    by_columns = check._matching_offsets(section, problem)
    assert by_columns is not None  # the column path is the one that runs on a true plan
    assert by_columns == check._stated_offsets(section, problem, plan.alignment)
    check_package_plan(plan, model)


def _mutations(section):
    """(what, changed tensor entries): each one a plan that is not the model's."""
    tensors = list(section.offsets.tensors)
    planned = [k for k, t in enumerate(tensors) if t.alias_of is None]
    aliases = [k for k, t in enumerate(tensors) if t.alias_of is not None]
    k, j = planned[0], planned[-1]

    def edited(at: int, **fields):
        out = list(tensors)
        out[at] = replace(out[at], **fields)
        return tuple(out)
    yield "a first step", edited(k, first_op=tensors[k].first_op + 1)
    yield "a last step", edited(k, last_op=tensors[k].last_op + 1)
    yield "a size", edited(k, size=tensors[k].size + 16)
    yield "an index", edited(j, index=tensors[j].index + 10_000)
    yield "a tensor listed twice", (*tensors, tensors[k])
    yield "a tensor missing", tuple(t for i, t in enumerate(tensors) if i != j)
    yield "a new alias", edited(j, alias_of=tensors[k].index)
    for a in aliases[:1]:
        yield "an alias's offset", edited(a, offset=tensors[a].offset + 16)
        yield "an alias's owner", edited(a, alias_of=tensors[j].index)
        yield "an alias's steps", edited(a, last_op=tensors[a].last_op + 1)
        yield "an alias made planned", edited(a, alias_of=None)


@pytest.mark.parametrize("name,semantics", CASES)
def test_a_changed_plan_gets_the_entry_by_entry_error(name, semantics):
    plan, model, section, problem = _first_arena(name, semantics)
    seen = 0
    for what, tensors in _mutations(section):
        changed = replace(section, offsets=replace(section.offsets, tensors=tensors))
        assert check._matching_offsets(changed, problem) is None, what
        with pytest.raises(PlanError) as by_entries:
            check._stated_offsets(changed, problem, plan.alignment)
        bad = replace(plan, arenas=(changed, *plan.arenas[1:]))
        with pytest.raises(PlanError) as e:
            check_package_plan(bad, model)
        assert str(e.value).endswith(str(by_entries.value)), what
        seen += 1
    assert seen >= 7


def test_an_optimal_claim_at_the_breadth_bound_needs_no_search(monkeypatch):
    plan, model, section, problem = _first_arena("mobile_block", "tflm")
    assert section.offsets.optimal and section.offsets.arena_bytes == problem.offset_lower_bound
    from packager.plan.offsets import exact_search
    searched = []  # the exact search's instances built for the claim (before any probe)
    real = exact_search._Instance
    monkeypatch.setattr(exact_search, "_Instance", lambda *a: searched.append(a) or real(*a))
    check_package_plan(plan, model)
    assert not searched
    # above the bound the claim goes to the exact search's probe, as before (here it finds a smaller plan)
    with pytest.raises(PlanError, match=r"stated optimal at \d+ B, but a plan of \d+ B exists"):
        check._check_optimal_offsets(problem, problem.offset_lower_bound + 16, plan.alignment)
    assert searched


@pytest.mark.parametrize("name,semantics", CASES)
def test_names_pass_by_columns_and_a_changed_name_or_place_is_named_entry_by_entry(name, semantics):
    plan, model, section, _ = _first_arena(name, semantics)
    assert check._names_match(section, model)
    check._check_names(section, model)
    tensors = list(section.offsets.tensors)
    k = next(i for i, t in enumerate(tensors) if t.kind == "tensor")
    n_sub = len(model.subgraphs)
    for fields, message in (({"name": tensors[k].name + "x"}, f"tensor {tensors[k].index} is called"),
                            ({"tensor": 10**6}, f"tensor {tensors[k].index} points to subgraph"),
                            ({"subgraph": n_sub}, f"tensor {tensors[k].index} points to subgraph"),
                            ({"subgraph": -1}, f"tensor {tensors[k].index} points to subgraph")):
        changed_tensors = (*tensors[:k], replace(tensors[k], **fields), *tensors[k + 1:])
        changed = replace(section, offsets=replace(section.offsets, tensors=changed_tensors))
        assert not check._names_match(changed, model), fields
        with pytest.raises(PlanError, match=message):
            check._check_names(changed, model)


@pytest.mark.parametrize("name,semantics", CASES)
def test_the_object_assignment_is_taken_by_columns_and_a_changed_one_is_refused(name, semantics):
    plan, model, section, problem = _first_arena(name, semantics)
    assigned = dict(section.objects.assignment)
    assert check._objects_in_record_order(section, problem) == tuple(assigned[r.tensor] for r in problem.records)
    pairs = section.objects.assignment
    for what, changed in (("a tensor missing", pairs[:-1]), ("a tensor twice", (*pairs[:-1], pairs[0])),
                          ("a tensor not planned", (*pairs[:-1], (10**6, pairs[-1][1])))):
        bad_section = replace(section, objects=replace(section.objects, assignment=changed))
        assert check._objects_in_record_order(bad_section, problem) is None, what
        bad = replace(plan, arenas=(bad_section, *plan.arenas[1:]))
        with pytest.raises(PlanError, match="does not cover exactly the planned tensors"):
            check_package_plan(bad, model)
    past = len(section.objects.object_sizes)
    moved = tuple((t, past if i == 0 else k) for i, (t, k) in enumerate(pairs))
    bad = replace(plan, arenas=(replace(section, objects=replace(section.objects, assignment=moved)),
                                *plan.arenas[1:]))
    with pytest.raises(PlanError):  # an object past the stated ones
        check_package_plan(bad, model)


def test_the_planners_proofs_spare_a_second_proof_of_the_same_numbers_only(monkeypatch):
    """`package` hands the check the proofs of the plans it ships: the stated plan with those
    numbers is not proven again; without a proof of its numbers, it is."""
    from packager.arenas import plan_arenas
    plan, model, section, problem = _first_arena("mobile_block", "tflm")
    planned = plan_arenas(model, "tflm", None, "best", to_ship=True)
    proofs = [o.proven for p in planned for o in (p.offsets, p.result.best_objects)]
    proven_again = []
    monkeypatch.setattr(check, "validate", lambda problem, plan: proven_again.append(plan.strategy))
    check_package_plan(plan, model, proofs)
    assert proven_again == []  # the offsets and the objects: the planner's own numbers
    check_package_plan(plan, model, proofs[1:])  # without the offsets' proof: proven again
    assert proven_again == [section.offsets.strategy]
