"""The conventions a user expects of a command line: help, version, exit codes, JSON, quiet, types
in words, tables that never cut a figure when piped, and the semantics every output names."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from packager.cli import app
from tests.conftest import REPO
from tests.package.support import model_file

COMMANDS = ("inspect", "plan", "report", "package", "compare")
runner = CliRunner()


def run_cli(*args: str, columns: int = 60) -> subprocess.CompletedProcess:
    """The CLI as a pipe into a narrow CI log sees it: stdout is not a terminal."""
    env = {**os.environ, "COLUMNS": str(columns)}
    env.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, str(REPO / "cli.py"), *map(str, args)], capture_output=True,
                          text=True, cwd=REPO, timeout=300, env=env)


def test_bare_command_prints_help_and_exits_0():
    r = run_cli()
    assert r.returncode == 0, r.stderr
    assert "Usage:" in r.stdout and all(c in r.stdout for c in COMMANDS)


def test_short_help_and_version():
    for args in (["-h"], ["--help"], *([c, "-h"] for c in COMMANDS)):
        r = runner.invoke(app, args)
        assert r.exit_code == 0 and "Usage:" in r.output, args
    r = run_cli("--version")
    assert r.returncode == 0 and re.fullmatch(r"tflpack \d+\.\d+\.\d+\S*\n", r.stdout)


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_states_the_exit_codes_and_shows_types_as_words(command):
    text = runner.invoke(app, [command, "--help"] if command else ["--help"], terminal_width=100).output
    flat = " ".join(text.split())
    for code, words in (("0", "done"), ("2", "bad input"), ("130", "interrupted")):
        assert f"{code} {words}" in flat, (command, code)
    if command == "package":
        assert "3 the plan is over --budget" in flat
    assert not re.search(r"<(list|str|bool|int|path|Path)\b", text), text  # Python types, not words
    if command is not None:
        assert "--semantics" not in text or "tflite|tflm|ideal" in text


def test_piped_plan_keeps_every_figure():
    model = model_file("mobile_block")
    data = json.loads(run_cli("plan", model, "--json").stdout)
    r = run_cli("plan", model, columns=50)
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    rows = [line for line in r.stdout.splitlines() if line.startswith("│")]
    for s in data["arenas"][0]["strategies"]:
        row = next(line for line in rows if f" {s['name']} " in line and f" {s['kind']} " in line)
        assert f" {s['total']:,} " in row, (s['name'], row)
    assert len(rows) == len(data["arenas"][0]["strategies"])


def test_piped_compare_keeps_every_figure(tmp_path):
    models = [model_file("mobile_block"), model_file("chain")]
    r = run_cli("compare", "--no-runtimes", "--runtime", "litert", "--csv", tmp_path / "rows.csv", *models,
                columns=40)
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    rows = list(csv.DictReader((tmp_path / "rows.csv").open()))
    assert len(rows) == 2
    for m in rows:
        row = next(line for line in r.stdout.splitlines() if line.startswith(f"│ {m['model']} "))
        for field in ("tflite_predicted", "tflite_best", "tflite_lower_bound", "tflm_predicted_head",
                      "tflm_best", "tflm_lower_bound", "ideal_best", "ideal_lower_bound"):
            assert f"{int(m[field]):,}" in row, (m["model"], field, row)


def test_package_json_lists_files_and_figures(tmp_path):
    r = run_cli("package", model_file("chain"), "-o", tmp_path / "out", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["semantics"] == "tflm" and data["arena_bytes"] >= data["lower_bound"] > 0
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert sorted(f["name"] for f in data["files"]) == names
    for f in data["files"]:
        assert (tmp_path / "out" / f["name"]).stat().st_size == f["bytes"]


def test_report_json_and_quiet(tmp_path):
    r = run_cli("report", model_file("chain"), "-o", tmp_path / "r.html", "--no-measure", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["files"][0]["path"] == str(tmp_path / "r.html") and data["semantics"] == "tflite"
    assert data["arenas"][0]["offset_lower_bound"] > 0
    for args in (["report", model_file("chain"), "-o", tmp_path / "q.html", "--no-measure"],
                 ["package", model_file("chain"), "-o", tmp_path / "q"]):
        r = run_cli(*args, "--quiet")
        assert r.returncode == 0 and r.stdout == "" and r.stderr == "", args


def test_every_output_names_its_semantics_and_says_when_it_is_a_default(tmp_path):
    model = model_file("chain")
    plan_text = run_cli("plan", model).stdout
    assert "under tflite semantics" in plan_text and "default of plan" in plan_text
    package_text = run_cli("package", model, "-o", tmp_path / "p").stdout
    assert "tflm semantics" in package_text and "default of package" in package_text
    chosen = run_cli("plan", model, "-s", "tflm").stdout
    assert "under tflm semantics" in chosen and "default" not in chosen
    assert "default of inspect" in run_cli("inspect", model).stdout


def test_progress_goes_to_stderr_only_when_it_is_a_terminal():
    import pty

    model = model_file("mobile_block")
    piped = run_cli("plan", model)
    assert piped.returncode == 0 and piped.stderr == ""  # a log gets no spinner
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    child = subprocess.Popen([sys.executable, str(REPO / "cli.py"), "plan", str(model)], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        seen += chunk
    stdout, _ = child.communicate(timeout=120)
    os.close(master)
    assert child.returncode == 0
    assert b"planning mobile_block.tflite" in seen
    assert b"\x1b[" not in stdout and b"159,744" in stdout  # the results themselves stay plain
