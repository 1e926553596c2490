"""The TFLite GPU delegate's memory strategies, reproduced: each is run beside the delegate's own code
(gpu_assign, built by .ci/build_gpu_delegate.sh) on the shared models' arenas under three
semantics, the paper's six networks and random records with ties, 50 to 5,000 records: the same
object for every record, the same object sizes and extents, the same offsets. And our heuristics
that differ from the delegate's are never larger than them on those inputs."""

from __future__ import annotations

import pytest

from benchmarks import gpu_delegate_inputs as inputs
from benchmarks import gpu_delegate_oracle as oracle
from packager.plan.objects import gpu_delegate, gpu_equality, gpu_greedy_in_order
from packager.plan.offsets import gpu_greedy_by_size as offsets_greedy_by_size
from packager.plan.problem import Problem
from packager.plan.registry import OBJECT_STRATEGIES
from packager.plan.validate import check_object_plan, check_offset_plan

# MINCOSTFLOW's search is slow in Python (about 1-4 s at 200 records): it runs up to this size.
MIN_COST_FLOW_UP_TO = 130


@pytest.fixture(scope="module")
def gpu_assign():
    exe, why = oracle.locate()
    if exe is None:
        pytest.skip(why)
    return exe


def _all_inputs():
    models = inputs.model_inputs()
    if not models:
        models = []  # ../shared absent: the networks and random records still run
    return models + inputs.network_inputs() + inputs.random_inputs(seeds=(0,))


@pytest.fixture(scope="module")
def cases():
    return _all_inputs()


def _same_objects(ours, theirs, name):
    assert ours.assignment == theirs.object_ids, name
    assert tuple(ours.object_sizes) == theirs.object_sizes, name


@pytest.mark.parametrize("strategy", [s for s in gpu_delegate.OBJECTS if s != "MINCOSTFLOW"])
def test_objects_byte_for_byte(gpu_assign, cases, strategy):
    for name, records in cases:
        ours = gpu_delegate.OBJECTS[strategy](records)
        assert ours.strategy == strategy
        check_object_plan(records, ours)
        _same_objects(ours, oracle.run(gpu_assign, records, strategy), f"{strategy} on {name}")


def test_min_cost_flow_byte_for_byte(gpu_assign, cases):
    small = [c for c in cases if len(c[1]) <= MIN_COST_FLOW_UP_TO]
    small += [(f"random-{n}", inputs.random_records(n, 5, ties)) for n in (60, 120) for ties in (True, False)]
    for name, records in small:
        _same_objects(gpu_delegate.OBJECTS["MINCOSTFLOW"](records),
                      oracle.run(gpu_assign, records, "MINCOSTFLOW"), name)


@pytest.mark.parametrize("strategy", ["GREEDY_BY_SIZE", "GREEDY_BY_BREADTH", "GREEDY_BEST"])
def test_order_free_strategies_in_tensor_order(gpu_assign, cases, strategy):
    """The delegate's callers pass buffers in value-id order, not by first task: the strategies that
    do not sweep in order still give the delegate's plan, ties and all."""
    for name, records in cases[:60]:
        shuffled = tuple(sorted(records, key=lambda r: (r.size * 7 + r.tensor) % 13))
        _same_objects(gpu_delegate.OBJECTS[strategy](shuffled),
                      oracle.run(gpu_assign, shuffled, strategy), f"{strategy} on {name}")


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("strategy,module", [("EQUALITY", gpu_equality), ("GREEDY_IN_ORDER", gpu_greedy_in_order)])
def test_texture_extents_byte_for_byte(gpu_assign, cases, dims, strategy, module):
    for k, (name, records) in enumerate(cases):
        if len(records) > 1000:
            continue
        extents = inputs.random_extents(records, dims, k)
        ours = module.plan_extents(records, extents)
        theirs = oracle.run(gpu_assign, records, strategy, extents=extents)
        assert ours.assignment == theirs.object_ids, name
        assert ours.object_extents == theirs.object_sizes, name
        assert ours.total == theirs.total, name


@pytest.mark.parametrize("alignment", [1, 64])
def test_offsets_byte_for_byte(gpu_assign, cases, alignment):
    for name, records in cases:
        if alignment > 1 and len(records) > 1000:  # the readable placement is quadratic: 5,000 once
            continue
        ours = offsets_greedy_by_size.plan(records, alignment)
        check_offset_plan(records, ours)
        theirs = oracle.run(gpu_assign, records, "GREEDY_BY_SIZE", offsets=True, align=alignment)
        assert (ours.offsets, ours.arena) == (theirs.offsets, theirs.arena), name


@pytest.mark.parametrize("ours,theirs", [("greedy_in_order", "GREEDY_IN_ORDER"),
                                         ("greedy_by_size_improved", "GREEDY_BY_SIZE"),
                                         ("greedy_by_size", "GREEDY_BY_SIZE")])
def test_ours_never_larger_than_the_delegates(gpu_assign, cases, ours, theirs):
    strategy = next(s for s in OBJECT_STRATEGIES if s.name == ours)
    for name, records in cases:
        plan = strategy.run(Problem(records=records))
        assert plan.strategy == ours
        assert plan.total <= oracle.run(gpu_assign, records, theirs).total, name


def test_greedy_by_size_never_larger_than_the_delegates(cases):
    """Our greedy_by_size (shared objects) is another algorithm than the delegate's GREEDY_BY_SIZE and
    alone is larger on most of these inputs: the strategy keeps the delegate's plan where that is
    smaller, ours where smaller or equal. On the benchmark's inputs (random records of three seeds),
    against the reproduction, which the tests above hold to the delegate's code: no oracle needed."""
    from packager.plan.objects import greedy_by_size

    strategy = next(s for s in OBJECT_STRATEGIES if s.name == "greedy_by_size")
    kept_theirs = 0
    for name, records in cases + inputs.random_inputs(seeds=(1, 2)):
        alone = greedy_by_size.plan(records)
        theirs = gpu_delegate.OBJECTS["GREEDY_BY_SIZE"](records)
        plan = strategy.run(Problem(records=records))
        check_object_plan(records, plan)
        assert plan.strategy == "greedy_by_size", name
        assert plan.total == min(alone.total, theirs.total), name
        if alone.total <= theirs.total:
            assert plan == alone, name  # ties keep ours
        else:
            assert (plan.assignment, plan.object_sizes) == (theirs.assignment, theirs.object_sizes), name
            kept_theirs += 1
    assert kept_theirs  # the rule is needed on these inputs


def test_texture_2d_never_larger_than_the_delegates(gpu_assign, cases):
    """texture_2d in the delegate's units (one byte a texel, each record its texture's size) against
    the delegate's own 2D GREEDY_IN_ORDER."""
    from dataclasses import replace

    from packager.plan.objects import texture_2d
    for k, (name, records) in enumerate(cases):
        if len(records) > 1000:
            continue
        extents = inputs.random_extents(records, 2, k)
        records = [replace(r, size=w * h) for r, (w, h) in zip(records, extents)]
        plan = texture_2d.plan(records, extents, 1)
        check_object_plan(records, plan, extents)
        assert plan.total <= oracle.run(gpu_assign, records, "GREEDY_IN_ORDER", extents=extents).total, name


def test_in_first_task_order_maps_plans_back():
    """Records given out of order are swept by first task and the objects come back to their
    positions: on sorted records that is the plan itself, on others a valid plan of equal total."""
    records = inputs.random_records(80, 3, True)
    assert gpu_delegate.in_first_task_order(gpu_equality.plan, records) == gpu_equality.plan(records)
    shuffled = records[1::2] + records[::2]
    plan = gpu_delegate.in_first_task_order(gpu_equality.plan, shuffled)
    check_object_plan(shuffled, plan)
    assert plan.total == gpu_equality.plan(records).total
    assert gpu_equality.plan(shuffled).assignment != plan.assignment  # the sweep did need the order


def test_delegate_strategies_run_when_named_only():
    """`plan --strategy GREEDY_BEST` (and each delegate name) runs the delegate's strategy, validated;
    `best` and `all` never run them, so their plans and tables are ours alone."""
    from packager.arenas import plan_records
    from packager.errors import SolverLimitError

    records = inputs.random_records(120, 4, True)
    for name in gpu_delegate.OBJECTS:
        result = plan_records(records, name)
        assert [o.strategy for o in result.objects] == [name]
        expected = gpu_delegate.OBJECTS[name](records)
        assert result.objects[0].plan.assignment == expected.assignment  # records already by first task
    offsets = plan_records(records, "GREEDY_BY_SIZE").offsets
    assert [o.strategy for o in offsets] == ["GREEDY_BY_SIZE"]
    assert offsets[0].plan == offsets_greedy_by_size.plan(records)
    everything = plan_records(records, "all")
    names = {o.strategy for o in everything.offsets + everything.objects}
    assert not names & set(gpu_delegate.OBJECTS)
    with pytest.raises(SolverLimitError):
        gpu_delegate.OBJECTS["MINCOSTFLOW"](inputs.random_records(401, 0, False))


def test_the_locator_says_why_it_has_no_oracle(monkeypatch, tmp_path):
    monkeypatch.setattr(oracle, "ORACLE", tmp_path / "absent")
    exe, why = oracle.locate()
    assert exe is None and "absent" in why
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.cc").write_text("int main() {}\n")
    monkeypatch.setattr(oracle, "ORACLE", tmp_path)
    monkeypatch.setenv("TFLPACK_CACHE", str(tmp_path / "cache"))
    exe, why = oracle.locate()
    assert exe is None and "bash .ci/build_gpu_delegate.sh" in why
