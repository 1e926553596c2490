"""`plan --json` (every strategy's every tensor, 400 MB at 100,000 operators, written a piece at a
time) is exactly what json.dumps(indent=2, sort_keys=True) makes of the plain document: dicts per
tensor, lists per arena. Checked on fixture models (control flow, dynamic shapes), a file name
beyond ASCII, synthetic models and usage records read from a CSV file."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from benchmarks.synthetic import SHAPES, tflite_bytes, usage_records
from packager.arenas import plan_model, plan_records
from packager.cli import app
from packager.plan.records import OffsetPlan, overhead_pct
from packager.reader import read_model
from tests.package.support import model_file

runner = CliRunner()


def plain_strategy(outcome, problem) -> dict:
    """One strategy as the plain document states it (the format users parse)."""
    bound = problem.object_lower_bound if outcome.kind == "objects" else problem.offset_lower_bound
    offsets = isinstance(outcome.plan, OffsetPlan)
    view = {"name": outcome.strategy, "kind": outcome.kind, "total": outcome.total, "lower_bound": bound,
            "overhead_pct": overhead_pct(outcome.total, bound),
            "tensors": [{"index": r.tensor, **({"offset": outcome.plan.offsets[i]} if offsets
                                               else {"object": outcome.plan.assignment[i]}),
                         "size": r.size, "first_op": r.first_op, "last_op": r.last_op}
                        for i, r in enumerate(problem.records)]}
    if outcome.kind == "objects":
        view["object_sizes"] = list(outcome.plan.object_sizes)
    if offsets and outcome.plan.time_limit_hit:
        view["time_limit_hit"] = True
    if offsets and outcome.plan.search_stopped:
        view["search_stopped"] = outcome.plan.search_stopped
    return view


def plain_arena(subgraph, inline, result, passes) -> dict:
    p = result.problem
    arena = {"subgraph": subgraph, "inline": inline, "offset_lower_bound": p.offset_lower_bound,
             "object_lower_bound": p.object_lower_bound, "alignment": p.alignment, "records": len(p.records),
             "best_offsets": result.best_offsets.strategy if result.best_offsets else None,
             "best_objects": result.best_objects.strategy if result.best_objects else None,
             "best_objects_optimal": result.objects_optimal, "best_offsets_optimal": result.offsets_optimal,
             "strategies": [plain_strategy(o, p) for o in (*result.offsets, *result.objects, *result.baselines)],
             "skipped": list(result.skipped)}
    if passes is not None:
        arena["dynamic"] = {
            "bounds": {k: list(v) for k, v in sorted(passes.bounds.items())},
            "passes": len(set(passes.passes)), "arena": passes.plan.arena, "lower_bound": passes.lower_bound,
            "tensors": [{"index": r.tensor, "pass": q, "size_expr": str(e), "max_size": r.size, "offset": o}
                        for r, q, e, o in zip(passes.lifetimes.records, passes.passes,
                                              passes.size_expressions, passes.plan.offsets)]}
    return arena


def plain_text(source: str, semantics, arenas) -> str:
    doc = {"source": source, "semantics": semantics, "arenas": [plain_arena(*a) for a in arenas]}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def plan_json(*args: str) -> str:
    r = runner.invoke(app, ["plan", *args, "--json"])
    assert r.exit_code == 0, r.output
    return r.stdout


@pytest.mark.parametrize("name, semantics, dims, strategy", [
    ("mobile_block", "tflite", (), "best"),
    ("while_loop", "tflite", (), "all"),
    ("if_else", "tflm", (), "best"),
    ("dynamic_sequence", "tflite", ("tokens_1=1..64",), "best"),
    ("dynamic_image", "tflm", ("image_1=1..32", "image_2=1..32"), "greedy_by_size"),
])
def test_plan_json_of_fixture_models(name, semantics, dims, strategy):
    path = model_file(name)
    arenas = [(a.lifetimes.subgraph, a.lifetimes.inline, a.result, a.passes)
              for a in plan_model(read_model(path), semantics, strategy, dims)]
    if dims:
        assert any(a[3] is not None for a in arenas)  # the multi-pass plan is in the document
    text = plan_json(str(path), "-s", semantics, "--strategy", strategy, *(f"--dim={d}" for d in dims))
    assert text == plain_text(path.name, semantics, arenas)


def test_plan_json_escapes_a_name_beyond_ascii_as_json_does(tmp_path):
    path = tmp_path / "modèle_😀.tflite"
    path.write_bytes(model_file("mobile_block").read_bytes())
    arenas = [(a.lifetimes.subgraph, a.lifetimes.inline, a.result, a.passes)
              for a in plan_model(read_model(path), "tflite", "best")]
    text = plan_json(str(path))
    assert text.isascii() and text == plain_text(path.name, "tflite", arenas)
    assert json.loads(text)["source"] == path.name


@pytest.mark.parametrize("shape", ["transformer", "branching"])
def test_plan_json_of_synthetic_models_and_records(shape, tmp_path):
    graph = SHAPES[shape](120)
    path = tmp_path / f"{shape}.tflite"
    path.write_bytes(tflite_bytes(graph))
    arenas = [(a.lifetimes.subgraph, a.lifetimes.inline, a.result, a.passes)
              for a in plan_model(read_model(path), "tflite", "best")]
    assert plan_json(str(path)) == plain_text(path.name, "tflite", arenas)

    records = usage_records(graph)
    csv = tmp_path / f"{shape}.csv"
    csv.write_text("id,lower,upper,size\n" + "".join(f"{r.tensor},{r.first_op},{r.last_op + 1},{r.size}\n"
                                                     for r in records))
    result = plan_records(records, "best")
    assert plan_json("--records", str(csv)) == plain_text(csv.name, None, [(None, False, result, None)])
