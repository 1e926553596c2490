"""Re-packaging into a used folder, signals while writing, and the report's files: DIR always ends
with exactly one run's files of ours beside the user's own, never a half-written or hidden file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from packager.cli import app
from tests.conftest import REPO
from tests.package.support import model_file

runner = CliRunner()


def package_json(*args) -> dict:
    r = runner.invoke(app, ["package", *map(str, args), "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def package(*args) -> list[str]:
    return sorted(f["name"] for f in package_json(*args)["files"])


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_repackaging_leaves_exactly_the_new_runs_files(tmp_path):
    out, model = tmp_path / "out", model_file("chain")
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "mine_plan.json").write_text('{"not": "a plan of ours"}')
    (out / "mine_plan.h").write_text("mine too")
    first = package(model, "-o", out)
    assert "chain.tflite" in first and "chain_report.html" in first
    # Another semantics: no offline-planned .tflite and no TFLite Micro op resolver any more.
    second = package_json(model, "-o", out, "-s", "tflite")
    assert second["removed"] == ["chain.tflite", "chain_op_resolver.h"]
    assert listing(out) == sorted([*(f["name"] for f in second["files"]), "notes.txt", "mine_plan.json", "mine_plan.h"])
    # --no-report: the old report goes too, and the summary names it.
    r = runner.invoke(app, ["package", str(model), "-o", str(out), "--no-report", "-s", "tflite"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    at = lines.index("removed (an earlier run's files of ours that this run does not write):")
    assert lines[at + 1] == "  chain_report.html" and not lines[at + 2].startswith("  ")
    third = package(model, "-o", out, "--no-report")
    assert listing(out) == sorted([*third, "notes.txt", "mine_plan.json", "mine_plan.h"])
    # Another --name: the chain_* set is replaced by the other_* set.
    fourth = package_json(model, "-o", out, "--name", "other")
    assert fourth["removed"] == sorted(third)
    assert all(f["name"].startswith("other") for f in fourth["files"])
    assert listing(out) == sorted([*(f["name"] for f in fourth["files"]), "notes.txt", "mine_plan.json", "mine_plan.h"])
    assert (out / "notes.txt").read_text() == "mine" and (out / "mine_plan.h").read_text() == "mine too"


def test_the_input_model_in_the_folder_is_never_removed(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    model = out / "net.tflite"
    model.write_bytes(model_file("chain").read_bytes())
    package(model, "-o", out, "--name", "packed")  # tflm: writes packed.tflite beside net.tflite
    package(model, "-o", out, "--name", "net_pkg", "-s", "tflite")
    assert "net.tflite" in listing(out) and "packed.tflite" not in listing(out)


def test_packaging_another_model_into_the_folder_keeps_the_first_ones_files(tmp_path):
    """`package models/a.tflite -o models` once replaced a.tflite with its offline-planned copy,
    and a later `package models/b.tflite -o models` removed it and all of a's files."""
    models = tmp_path / "models"
    models.mkdir()
    for name, fixture in (("a", "chain"), ("b", "mobile_block")):
        (models / f"{name}.tflite").write_bytes(model_file(fixture).read_bytes())
    r = runner.invoke(app, ["package", str(models / "a.tflite"), "-o", str(models)])
    assert r.exit_code == 2 and "would replace the input model" in r.output
    first = package(models / "a.tflite", "-o", models, "--name", "a_pkg")
    before = contents(models)
    second = package_json(models / "b.tflite", "-o", models, "--name", "b_pkg")
    assert second["removed"] == []
    after = contents(models)
    assert {n: after[n] for n in before} == before  # a.tflite, b.tflite and all of a_pkg's files
    assert sorted(after) == sorted([*before, *(f["name"] for f in second["files"])])
    assert "a_pkg.tflite" in first


def test_a_hand_written_plan_does_not_make_the_users_files_ours(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "x_plan.json").write_text(json.dumps({"alignment": 16, "arenas": [], "semantics": "tflm",
                                                 "source": {"file": "chain.tflite"}}))
    for name in ("x.tflite", "x_model.c", "x_report.html"):
        (out / name).write_text(f"the user's {name}")
    before = contents(out)
    result = package_json(model_file("chain"), "-o", out)
    assert result["removed"] == []
    assert {n: b for n, b in contents(out).items() if n.startswith("x")} == before
    # Nor does a name another tool's plan lists, or a file of ours the user has since edited.
    r = runner.invoke(app, ["package", str(model_file("chain")), "-o", str(out), "--name", "x"])
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert r.output.startswith(f"error: {out / 'x.tflite'} (and 3 more): in the way and not written by this tool")
    assert {n: b for n, b in contents(out).items() if n.startswith("x")} == before
    with open(out / "chain_model.c", "a") as f:
        f.write("// my edit\n")
    edited = (out / "chain_model.c").read_bytes()
    result = package_json(model_file("chain"), "-o", out, "--name", "renamed")
    assert "chain_model.c" not in result["removed"] and "chain_plan.h" in result["removed"]
    assert (out / "chain_model.c").read_bytes() == edited


def test_sigterm_while_writing_leaves_the_folder_as_it_was(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real_write, calls = Path.write_bytes, []

    def write_then_terminated(self, data):
        calls.append(self.name)
        if len(calls) == 3:  # mid-write: the staging folder holds two files and part of a third
            real_write(self, data[: len(data) // 2])
            os.kill(os.getpid(), signal.SIGTERM)
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", write_then_terminated)
    previous = signal.getsignal(signal.SIGTERM)
    try:
        r = runner.invoke(app, ["package", str(model_file("chain")), "-o", str(out)])
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert len(calls) == 3
    assert r.exit_code == 128 + signal.SIGTERM, r.output  # 143, as a shell reports SIGTERM
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no hidden staging folder either
    assert listing(tmp_path) == ["out"]


def test_signals_at_any_moment_leave_a_whole_folder_or_none(tmp_path):
    """A real child process stopped by SIGTERM or SIGHUP at several moments of its run."""
    model = model_file("mobile_block")
    complete = package(model, "-o", tmp_path / "reference")
    for k, (sig, delay) in enumerate([(signal.SIGTERM, 0.3), (signal.SIGHUP, 0.8), (signal.SIGTERM, 1.3),
                                      (signal.SIGHUP, 1.8), (signal.SIGTERM, 2.5)]):
        work = tmp_path / f"run{k}"
        work.mkdir()
        child = subprocess.Popen([sys.executable, str(REPO / "cli.py"), "package", str(model), "-o",
                                  str(work / "out")], cwd=REPO, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        child.send_signal(sig)
        _, err = child.communicate(timeout=120)
        # -sig: stopped while Python was starting or shutting down, when no handler is in place.
        assert child.returncode in (0, 128 + sig, -sig), (sig, delay, child.returncode, err)
        assert "Traceback" not in err
        if child.returncode == 128 + sig:
            assert err.strip() == "interrupted", err
        # Whole or none, whenever the signal came: never a part, never a hidden staging folder.
        assert listing(work) in ([], ["out"]), listing(work)
        if child.returncode == 0:
            assert listing(work) == ["out"]
        if (work / "out").exists():
            assert listing(work / "out") == complete, (sig, delay, child.returncode)


def test_a_report_whose_picture_cannot_be_written_writes_nothing(tmp_path):
    (tmp_path / "pic.png").mkdir()  # a folder where the picture must go
    r = runner.invoke(app, ["report", str(model_file("chain")), "-o", str(tmp_path / "r.html"),
                            "--png", str(tmp_path / "pic.png"), "--no-measure"])
    assert r.exit_code == 2 and "pic.png" in r.output
    assert listing(tmp_path) == ["pic.png"] and listing(tmp_path / "pic.png") == []
    r = runner.invoke(app, ["report", str(model_file("chain")), "-o", str(tmp_path / "r.html"),
                            "--png", str(tmp_path / "ok.png"), "--no-measure"])
    assert r.exit_code == 0, r.output
    assert listing(tmp_path) == ["ok.png", "pic.png", "r.html"]
