"""min_cost_flow above LOOP_RECORDS: the range-tree solver finds a flow of the same (optimal) cost as
the loop on random records, the benchmark's shapes and the fixture models; compiled and uncompiled
it gives the same assignment; plan() takes it only above LOOP_RECORDS, and refuses when its work
budget runs out rather than hand in another plan."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.synthetic import SHAPES, usage_records as shape_records
from packager.errors import SolverLimitError
from packager.plan import kernels
from packager.plan.kernels import min_cost_flow_range
from packager.plan.objects import min_cost_flow
from packager.plan.problem import Problem
from packager.plan.records import UsageRecord
from packager.plan.portfolio import run_portfolio
from packager.plan.validate import check_object_plan
from tests.pins.pin_cases import random_records
from tests.equivalence.test_min_cost_flow import FIXTURE_MODELS, compiled_form, flow_cost, readable_form, random_cases
from tests.plan.test_object_strategies import best_reuse_cost

REPO = Path(__file__).resolve().parents[2]


def range_form(records, **kwargs):
    return min_cost_flow._range_reused_records(records, **kwargs)


def test_same_flow_cost_as_the_loop_on_small_random_inputs():
    for records in random_cases(300, seed=3):
        assert flow_cost(records, range_form(records)) == flow_cost(records, readable_form(records))


def test_same_flow_cost_as_the_loop_on_random_inputs_of_thousands_of_records():
    rng = random.Random(11)
    for k in range(8):
        n = rng.choice([1000, 2000, 3000, 4000])
        records = random_records(500 + k, n, rng.choice([n // 8, n // 2, n]), rng.choice([3, 40, 200]),
                                 rng.choice([40, 5000, 100_000]))
        assert flow_cost(records, range_form(records)) == flow_cost(records, compiled_form(records)), k


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_same_flow_cost_as_the_loop_on_the_benchmark_shapes(shape):
    records = shape_records(SHAPES[shape](3000))
    assert flow_cost(records, range_form(records)) == flow_cost(records, compiled_form(records))


def test_the_flow_is_the_optimal_one():
    rng = random.Random(9)
    for k in range(150):
        n = rng.randrange(1, 7)
        records = random_records(k, n, rng.randrange(1, 8), rng.randrange(1, 5), rng.choice([8, 40]))
        assert flow_cost(records, range_form(records)) == best_reuse_cost(records)


@pytest.mark.parametrize("semantics", ["tflite", "tflm"])
def test_same_flow_cost_as_the_loop_on_the_fixture_models(semantics):
    from packager.arenas import arenas_to_plan
    from packager.reader import read_model

    assert FIXTURE_MODELS
    for path in FIXTURE_MODELS:
        for arena in arenas_to_plan(read_model(str(path)), semantics):
            records = list(arena.lifetimes.records)
            expected = flow_cost(records, readable_form(records))
            assert flow_cost(records, range_form(records)) == expected, path.name


def test_compiled_and_uncompiled_give_the_same_assignment():
    seeds = list(range(40))
    code = ("import json, sys\n"
            "from packager.plan.objects import min_cost_flow\n"
            "from tests.pins.pin_cases import random_records\n"
            "cases = [random_records(s, 30 + 7 * s, 25, 9, 300) for s in json.loads(sys.argv[1])]\n"
            "print(json.dumps([min_cost_flow._range_reused_records(records) for records in cases]))\n")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(seeds)], cwd=REPO, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    uncompiled = json.loads(done.stdout)
    compiled = [range_form(random_records(s, 30 + 7 * s, 25, 9, 300)) for s in seeds]
    assert uncompiled == compiled


def test_plan_takes_the_range_solver_only_above_the_loops_limit(monkeypatch):
    records = random_records(21, 600, 300, 30, 100_000)
    calls = []
    solver = min_cost_flow._range_reused_records
    monkeypatch.setattr(min_cost_flow, "_range_reused_records", lambda r: calls.append(len(r)) or solver(r))
    loop_plan = min_cost_flow.plan(records)
    assert calls == []
    monkeypatch.setattr(min_cost_flow, "LOOP_RECORDS", 500)
    plan = min_cost_flow.plan(records)
    assert calls == [600]
    check_object_plan(records, plan)
    assert plan.strategy == "min_cost_flow"
    # both exact: the flows cost the same, whatever plans the ties lead to
    assert flow_cost(records, solver(records)) == flow_cost(records, readable_form(records))
    assert loop_plan.total > 0 and plan.total > 0


def test_a_large_chain_plans_above_the_loops_limit():
    records = shape_records(SHAPES["chain"](min_cost_flow.LOOP_RECORDS + 1000))
    plan = min_cost_flow.plan(records)
    check_object_plan(records, plan)
    assert plan.strategy == "min_cost_flow"


def test_out_of_work_it_refuses_and_best_leaves_it_out(monkeypatch):
    records = random_records(4, 800, 400, 30, 100_000)
    with pytest.raises(SolverLimitError, match="work budget"):
        range_form(records, work_limit=1)
    monkeypatch.setattr(min_cost_flow, "LOOP_RECORDS", 100)
    monkeypatch.setattr(min_cost_flow, "WORK_LIMIT", 1)
    with pytest.raises(SolverLimitError, match="work budget"):
        min_cost_flow.plan(records)
    result = run_portfolio(Problem(records=tuple(records)), offset_names=[], local=False, baselines=False)
    assert "min_cost_flow" in result.skipped
    assert all(o.strategy != "min_cost_flow" for o in result.objects)


def test_past_the_size_order_trial_it_solves_again_in_order_of_first_op(monkeypatch):
    # Rows may join in any order; the second solve (order of first_op) finds the same flow cost.
    calls = []
    assign = kernels.compiled(min_cost_flow_range).assign

    def counted(order, *args):
        calls.append(args[-1])
        return assign(order, *args)

    records = random_records(8, 700, 350, 30, 100_000)
    monkeypatch.setattr(min_cost_flow, "SIZE_ORDER_WORK", 1)
    reused = range_form(records, kernel=counted)
    solved = sum(1 for r in records if r.size)  # records of size 0 stay out of the solve
    assert calls == [solved, min_cost_flow.WORK_LIMIT - solved]
    assert flow_cost(records, reused) == flow_cost(records, readable_form(records))


def test_records_of_size_zero_share_objects_among_themselves():
    # They cost the flow nothing either way; chained, they add as few objects as can be.
    records = [UsageRecord(i, i, i + 1, 0) for i in range(0, 40, 2)] + random_records(6, 300, 150, 20, 5000)
    records = [UsageRecord(i, r.first_op, r.last_op, r.size) for i, r in enumerate(records)]
    reused = range_form(records)
    assert all(reused[i] >= 0 for i in range(1, 20))
    assert flow_cost(records, reused) == flow_cost(records, readable_form(records))
    check_object_plan(records, min_cost_flow.plan_of_chains(records, reused))


def test_on_random_records_of_100000_it_refuses_within_a_small_part_of_its_budget(monkeypatch):
    # Its runs grow with the rows before them there: both solves stop once they are on a pace to
    # pass their budget, so `best` does not spend the whole budget (12 s) on a refusal.
    from benchmarks.bench_min_cost_flow import random_records as bench_random_records
    assign = kernels.compiled(min_cost_flow_range).assign

    spent = []

    def counted(order, *args):
        held, work = assign(order, *args)
        spent.append(work)
        return held, work

    records = bench_random_records(100_000)
    with pytest.raises(SolverLimitError, match="work budget"):
        range_form(records, kernel=counted)
    assert len(spent) == 2 and all(work < 0 for work in spent)
    assert sum(-1 - work for work in spent) < min_cost_flow.WORK_LIMIT // 8


def test_the_early_stops_leave_a_solve_they_do_not_stop_as_it_was():
    # The same assignment with the checks on (not stopping) as with them off.
    assign = kernels.compiled(min_cost_flow_range).assign

    for seed in range(6):
        records = [r for r in random_records(40 + seed, 1500, 700, 30, 100_000) if r.size]
        graph = min_cost_flow._Graph(records)
        args = (graph.usable.astype(np.int64), np.array([r.size for r in records], dtype=np.int64),
                np.array([records[i].size for i in graph.by_last], dtype=np.int64))
        order = np.arange(len(records), dtype=np.int64)
        plain, work = assign(order, *args, 0, 0, len(records) + 1, 10 ** 12)
        assert work > 0
        early, early_work = assign(order, *args, len(records) // 32, work, len(records) // 32, 10 ** 12)
        assert early_work == work and early.tolist() == plain.tolist()
        _, stopped = assign(order, *args, len(records), work // 2, len(records) + 1, 10 ** 12)
        assert stopped < 0 and -1 - stopped <= work
