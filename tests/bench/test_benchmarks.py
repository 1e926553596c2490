"""The benchmark helpers: synthetic graphs agree with the pipeline, the paper setting leaves the
graph's inputs and outputs out, exponents fit; and `best` on the paper's six networks meets what
docs/benchmarks.md promises."""

from __future__ import annotations

import pytest

from benchmarks.bench_scale import exponent
from benchmarks.paper_setting import paper_problems
from benchmarks.synthetic import SHAPES, tflite_bytes, usage_records
from fixtures.network_cache import network_bytes
from fixtures.networks import NETWORKS
from packager.plan.objects import integer_program
from packager.plan.portfolio import run_portfolio
from packager.lifetimes import model_lifetimes
from packager.reader import parse_model


def _key(records):
    return sorted((r.tensor, r.first_op, r.last_op, r.size) for r in records)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_synthetic_records_equal_the_files_lifetimes(shape):
    graph = SHAPES[shape](300)
    assert graph.tensor_count >= 300
    model = parse_model(tflite_bytes(graph))
    assert _key(model_lifetimes(model, "paper")[0].records) == _key(usage_records(graph))


def test_paper_problem_leaves_graph_io_out():
    model = parse_model(network_bytes("posenet"))
    sg = model.main
    external = {*sg.inputs, *sg.outputs}
    inner = paper_problems(model)[0].records
    every = paper_problems(model, graph_io=True)[0].records
    assert not external & {r.tensor for r in inner}
    assert external <= {r.tensor for r in every}
    assert len(every) - len(inner) == len(external)


def test_exponent_of_a_power_law():
    assert exponent({1_000: 0.01, 10_000: 1.0, 100_000: 100.0}) == pytest.approx(2.0)
    assert exponent({1_000: 0.0001, 10_000: 0.0002}) is None  # too short to trust


def test_best_on_the_paper_networks():
    offsets_at_bound = 0
    for name in NETWORKS:
        problem = paper_problems(parse_model(network_bytes(name, "planning")))[0]
        result = run_portfolio(problem, baselines=False)
        offsets_at_bound += result.best_offsets.total == problem.offset_lower_bound
        assert result.best_objects.total <= 1.10 * problem.object_lower_bound, name
        # and no plan does better: the rest of the gap is the bound's
        solution = integer_program.solve(problem.records)
        assert solution.proven_optimal and solution.plan.total == result.best_objects.total, name
    assert offsets_at_bound >= 5


def test_phase_table_times_every_phase_and_strategy(tmp_path):
    """The scale benchmark's per-phase table: every phase and every strategy has a row, and each
    size a time (or a reason), on a small model."""
    from benchmarks.phases import phase_rows, render_phases
    from benchmarks.synthetic import SHAPES, tflite_bytes
    from packager.plan.registry import OBJECT_STRATEGIES, OFFSET_STRATEGIES

    def path_of(n):
        path = tmp_path / f"chain_{n}.tflite"
        if not path.exists():
            path.write_bytes(tflite_bytes(SHAPES["chain"](n)))
        return path

    rows = phase_rows(path_of, [40, 80], budget=60.0)
    names = [r.name for r in rows]
    assert names[:3] == ["read", "lifetimes", "lower bounds"] and names[-1] == "validation (every plan)"
    assert {f"{s.kind} {s.name}" for s in (*OFFSET_STRATEGIES, *OBJECT_STRATEGIES)} <= set(names)
    for r in rows:
        assert all(n in r.seconds or n in r.notes for n in (40, 80)), r.name
    table = render_phases(rows, [40, 80], exponent)
    assert "k (fit)" in table and "strip_packing" in table


def test_strategy_rows_time_each_strategys_whole_work():
    # The registry makes the shared-object greedy by size once per problem (objects_end_to_end
    # lays those objects end to end): the table still times each strategy alone, bounds kept.
    from benchmarks.bench_strategies import alone
    from benchmarks.synthetic import SHAPES, usage_records
    from packager.plan.problem import Problem
    from packager.plan.registry import OBJECT_STRATEGIES, OFFSET_STRATEGIES
    problem = Problem(records=tuple(usage_records(SHAPES["chain"](200))))
    bound = problem.offset_lower_bound
    next(s for s in OFFSET_STRATEGIES if s.name == "objects_end_to_end").run(problem)
    copy = alone(problem)
    assert "_greedy_by_size_objects" in problem.__dict__
    assert "_greedy_by_size_objects" not in copy.__dict__
    assert copy.__dict__["offset_lower_bound"] == bound and copy.records is problem.records
    gbs = next(s for s in OBJECT_STRATEGIES if s.name == "greedy_by_size")
    assert gbs.run(copy) == gbs.run(problem)


def test_min_cost_flow_table_gives_both_solvers_flow_costs(monkeypatch, capsys):
    # The two solvers are exact: the table shows both flow costs and that they are equal.
    from benchmarks import bench_min_cost_flow
    monkeypatch.setattr("sys.argv", ["bench_min_cost_flow", "--sizes", "300", "--numpy-up-to", "400"])
    bench_min_cost_flow.main()
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("shape"))
    assert "loop flow" in lines[header] and "tree flow" in lines[header]
    rows = [line.split() for line in lines[header + 1:]]
    assert len(rows) == 5
    for row in rows:
        assert row[4] == "yes" and row[5] == row[7] and row[8] == "yes", row


def test_tiling_table_counts_the_nodes_to_each_perfect_packing(capsys):
    from benchmarks import bench_tiling

    assert bench_tiling.main(["--sizes", "60", "--seeds", "1,2", "--nodes-per-record", "50"]) == 0
    table = capsys.readouterr().out
    assert table.count("packed") == 2 and "perfect 60, seed 2" in table


def test_lower_bound_table_grows_windows_until_one_stays_open(tmp_path, capsys):
    from benchmarks import bench_lower_bound, perfect_packing

    path = perfect_packing.write(tmp_path / "p.csv", 60, 1)  # packs at its bound: every window does
    assert bench_lower_bound.main([str(path), "--nodes", "5000", "--tiling-nodes", "5000"]) == 0
    out = capsys.readouterr().out
    windows, tiling = out.split("\n\n")
    assert "open" not in windows and windows.count("packs") >= 2
    assert "| 60 of 60 |" in windows  # grown to the whole instance
    assert tiling.count("packs") == 3  # each order of the tiling probe packs it at the bound
