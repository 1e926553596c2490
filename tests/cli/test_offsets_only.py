"""`plan --records X.csv --offsets-only`: the best offsets soonest, no shared objects."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from benchmarks import perfect_packing
from benchmarks.bench_exact import random_steps
from packager.arenas import plan_records
from packager.cli import app

runner = CliRunner()


def write_csv(path, records):
    lines = ["id,lower,upper,size"] + [f"{i},{r.first_op},{r.last_op + 1},{r.size}"
                                       for i, r in enumerate(records)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_it_stops_at_the_first_plan_at_the_bound_and_plans_no_objects(tmp_path):
    path = tmp_path / "perfect.csv"
    path.write_text(perfect_packing.csv_text(perfect_packing.cut(40, 3)))
    out = runner.invoke(app, ["plan", "--records", str(path), "--offsets-only", "--json"])
    assert out.exit_code == 0, out.output
    arena = json.loads(out.output)["arenas"][0]
    kinds = {s["kind"] for s in arena["strategies"]}
    assert kinds == {"offsets"} and arena["best_objects"] is None
    best = next(s for s in arena["strategies"] if s["name"] == arena["best_offsets"])
    assert best["total"] == perfect_packing.WIDTH and arena["best_offsets_optimal"]
    assert arena["strategies"][-1]["name"] == arena["best_offsets"]  # nothing ran after it


def test_it_reaches_the_arena_of_best_here_without_the_two_searches(tmp_path):
    records = random_steps(60, 2)
    only = plan_records(records, offsets_only=True)
    best = plan_records(records)
    assert only.best_offsets.total <= best.best_offsets.total or only.offsets_optimal
    assert not only.objects and not only.baselines
    names = [o.strategy for o in only.offsets]
    assert "local_search" not in names and "best_fit_search" not in names


def test_it_needs_records_and_no_strategy(tmp_path):
    path = write_csv(tmp_path / "r.csv", random_steps(5, 1))
    for args in (["plan", "model.tflite", "--offsets-only"],
                 ["plan", "--records", str(path), "--offsets-only", "--strategy", "naive"]):
        out = runner.invoke(app, args)
        assert out.exit_code != 0 and "--offsets-only" in out.output
