"""`tflpack batch`: one row per model, the figures one `package --json` run per model states, the same
rows in the same order whatever --jobs; a model that fails is reported in its row and the exit is 2."""

from __future__ import annotations

import csv
import json

import pytest

from typer.testing import CliRunner

from packager.cli import app
from tests.conftest import REPO

MODELS = REPO / "fixtures" / "models"
runner = CliRunner()


def _row_of_package_run(path, tmp_path, root=MODELS) -> dict:
    name = path.relative_to(root).as_posix()
    r = runner.invoke(app, ["package", str(path), "-o", str(tmp_path / name), "--no-verify", "--no-report", "--json"])
    base = {"model": name, "semantics": "tflm", "target": "host"}
    if r.exit_code != 0:
        error = next(line for line in r.output.splitlines() if line.startswith("error: "))
        return {**base, "status": "error", "error": error[len("error: "):], "tflm_arena_bytes": None, "standing": None,
                "head_bytes": None, "tail_bytes": None, "setup_bytes": None, "plan_bytes": None,
                "lower_bound": None, "strategy": None}
    doc = json.loads(r.output)
    whole = doc["runtime_arena"]
    return {**base, "status": "ok", "error": "", "tflm_arena_bytes": whole["arena_bytes"],
            "standing": whole["bound"], "head_bytes": whole["head_bytes"],
            "tail_bytes": whole["tail_bytes"], "setup_bytes": whole["setup_bytes"],
            "plan_bytes": doc["arena_bytes"], "lower_bound": doc["lower_bound"],
            "strategy": "+".join(a["strategy"] for a in doc["arenas"])}


def test_batch_gives_the_rows_of_one_package_run_per_model_whatever_the_jobs(tmp_path):
    out1, out2 = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    r1 = runner.invoke(app, ["batch", str(MODELS), "-o", str(out1), "--jobs", "1"])
    r2 = runner.invoke(app, ["batch", str(MODELS), "-o", str(out2), "--jobs", "2"])
    assert out1.read_bytes() == out2.read_bytes()
    rows = [json.loads(line) for line in out1.read_text().splitlines()]
    paths = sorted(MODELS.rglob("*.tflite"), key=lambda p: p.relative_to(MODELS).as_posix())
    assert rows == [_row_of_package_run(p, tmp_path / "pkg") for p in paths]
    failed = [r for r in rows if r["status"] == "error"]
    assert failed and len(failed) < len(rows)  # the dynamic models without --dim, in their rows
    assert r1.exit_code == r2.exit_code == 2
    assert f"{len(rows)} models, {len(rows) - len(failed)} planned, {len(failed)} failed" in r1.output


def test_over_the_shared_models_the_rows_are_those_of_one_package_run_per_model(tmp_path):
    """The batch over ../shared/models (its tflm/ folder too) on 2 processes states what `package` states for
    each model run alone (benchmarks/bench_batch.py times the two; docs/api.md quotes it)."""
    shared = REPO.parent / "shared" / "models"
    if not shared.is_dir():
        pytest.skip("../shared/models is absent")
    out = tmp_path / "rows.jsonl"
    r = runner.invoke(app, ["batch", str(shared), "-o", str(out), "--jobs", "2"])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    paths = sorted(shared.rglob("*.tflite"), key=lambda p: p.relative_to(shared).as_posix())
    assert len(rows) == len(paths) >= 12
    assert rows == [_row_of_package_run(p, tmp_path / "pkg", shared) for p in paths]
    assert r.exit_code == 0 and all(row["status"] == "ok" for row in rows)


def test_csv_rows_and_a_folder_that_all_plans_exits_0(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    for name in ("chain", "residual"):
        (folder / f"{name}.tflite").write_bytes((MODELS / f"{name}.tflite").read_bytes())
    r = runner.invoke(app, ["batch", str(folder), "-o", str(tmp_path / "rows.csv")])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((tmp_path / "rows.csv").open()))
    assert [row["model"] for row in rows] == ["chain.tflite", "residual.tflite"]
    assert rows[0]["tflm_arena_bytes"] == "18384" and rows[0]["standing"] == "unknown"  # nothing ran it


def test_a_broken_model_is_its_row_not_a_traceback(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "broken.tflite").write_bytes((MODELS / "chain.tflite").read_bytes()[:100])
    (folder / "chain.tflite").write_bytes((MODELS / "chain.tflite").read_bytes())
    r = runner.invoke(app, ["batch", str(folder), "-o", str(tmp_path / "rows.jsonl")])
    assert r.exit_code == 2 and "Traceback" not in r.output
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert [(row["model"], row["status"]) for row in rows] == [("broken.tflite", "error"), ("chain.tflite", "ok")]
    assert rows[0]["error"]


def test_bad_usage_is_one_line(tmp_path):
    r = runner.invoke(app, ["batch", str(MODELS), "-o", str(tmp_path / "rows.txt")])
    assert r.exit_code == 2 and "error: " in r.output and ".jsonl or a .csv" in r.output
    r = runner.invoke(app, ["batch", str(tmp_path / "nowhere"), "-o", str(tmp_path / "rows.csv")])
    assert r.exit_code == 2 and "not a folder" in r.output
    assert not (tmp_path / "rows.csv").exists()
