"""Re-packaging into a used folder, signals while writing, and the report's files: DIR always ends
with exactly one run's files of ours beside the user's own, never a half-written or hidden file."""

from __future__ import annotations

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


def package(*args) -> list[str]:
    r = runner.invoke(app, ["package", *map(str, args), "--json"])
    assert r.exit_code == 0, r.output
    import json
    return sorted(f["name"] for f in json.loads(r.output)["files"])


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
    # Another semantics: no offline-planned .tflite any more.
    second = package(model, "-o", out, "-s", "tflite")
    assert "chain.tflite" not in second
    assert listing(out) == sorted([*second, "notes.txt", "mine_plan.json", "mine_plan.h"])
    # --no-report: the old report goes too.
    third = package(model, "-o", out, "--no-report")
    assert listing(out) == sorted([*third, "notes.txt", "mine_plan.json", "mine_plan.h"])
    # Another --name: the chain_* set is replaced by the other_* set.
    fourth = package(model, "-o", out, "--name", "other")
    assert all(n.startswith("other") for n in fourth)
    assert listing(out) == sorted([*fourth, "notes.txt", "mine_plan.json", "mine_plan.h"])
    assert (out / "notes.txt").read_text() == "mine" and (out / "mine_plan.h").read_text() == "mine too"


def test_the_input_model_in_the_folder_is_never_removed(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    model = out / "net.tflite"
    model.write_bytes(model_file("chain").read_bytes())
    package(model, "-o", out, "--name", "packed")  # tflm: writes packed.tflite beside net.tflite
    package(model, "-o", out, "--name", "net_pkg", "-s", "tflite")
    assert "net.tflite" in listing(out) and "packed.tflite" not in listing(out)


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
    assert r.exit_code == 130, r.output
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
        assert child.returncode in (0, 130, -sig), (sig, delay, child.returncode, err)
        assert "Traceback" not in err
        if child.returncode == 130:
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
