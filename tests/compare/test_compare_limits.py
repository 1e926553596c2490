"""compare over many models: a runtime try that never ends is stopped and its row says so; a file
that cannot be compared gets a row saying why, the others are compared, and the exit code fails."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fixtures.edge_cases import endless_while, view_after_dynamic_reshape
from tests.conftest import REPO

MODELS = REPO / "fixtures" / "models"


def compare(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "cli.py"), "compare", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=600)


def test_a_model_that_never_ends_is_stopped_at_each_runtimes_first_try(tmp_path):
    pytest.importorskip("tflite_micro", reason="tflite-micro is not installed (pip install -e '.[runtimes]')")
    path = tmp_path / "endless.tflite"
    path.write_bytes(endless_while().build())
    started = time.monotonic()
    r = compare(str(path), "--timeout", "3", "--runtime", "litert")
    took = time.monotonic() - started
    assert r.returncode == 0, r.stderr
    # TFLite's child and TFLite Micro's first try, 3 s each: no bisection of tries that time out.
    assert took < 40, took
    row = next(line for line in r.stdout.splitlines() if "endless" in line and "│" in line)
    assert row.count("did not finish") == 3, row  # TFLite's arena, TFLM's head, TFLM's arena
    assert "tflite: did not finish in 3 s" in r.stdout and "tflm: did not finish in 3 s" in r.stdout
    # nothing left running: the copy of the probe that runs the Invoke is stopped with the probe
    assert _running_with(str(path)) == [], "a runtime child outlived compare"


def _running_with(argument: str) -> list[int]:
    """The processes whose command line holds `argument` (Linux: /proc)."""
    if not Path("/proc/self/cmdline").exists():
        pytest.skip("no /proc to look for leftover processes")
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and argument.encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:  # ended while we looked
            continue
    return found


def test_the_time_limit_is_an_option_with_a_default_in_the_help():
    r = subprocess.run([sys.executable, str(REPO / "cli.py"), "compare", "--help"], capture_output=True,
                       text=True, cwd=REPO, timeout=60)
    flat = " ".join(r.stdout.split())
    assert "--timeout SECONDS" in flat and "default: 60" in flat.lower(), flat


@pytest.mark.parametrize("as_json", [False, True])
def test_a_bad_file_gets_its_row_and_the_others_are_compared(tmp_path, as_json):
    folder = tmp_path / "models"
    folder.mkdir()
    for name in ("chain", "residual"):
        shutil.copy(MODELS / f"{name}.tflite", folder)
    (folder / "broken.tflite").write_bytes((MODELS / "branches.tflite").read_bytes()[:100])
    r = compare(str(folder), "--no-runtimes", *(["--json"] if as_json else []))
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == ["error: broken.tflite: corrupt or truncated model: the file ends at "
                                     "byte 100; the model needs 104 bytes"], r.stderr
    if as_json:
        entries = json.loads(r.stdout)
        assert [e["name"] for e in entries] == ["broken", "chain", "residual"]
        assert entries[0]["error"].startswith("broken.tflite: corrupt") and "tflm" in entries[1]
    else:
        rows = [line for line in r.stdout.splitlines() if "│" in line]
        names = [row.split("│")[1].strip() for row in rows]  # a row per TFLite version found
        assert list(dict.fromkeys(names)) == ["broken", "chain", "residual"], r.stdout
        assert names.count("broken") == 1 and "bad file" in rows[0] and "16,384" in rows[1]


def test_an_alias_of_a_tensor_allocated_while_running_is_compared(tmp_path):
    """The plan compared with TFLite's arena holds only what that arena holds: a view of a tensor
    TFLite allocates after a dynamic op goes with it, rather than pointing at nothing (which
    refused the whole model as an invalid plan)."""
    path = tmp_path / "view.tflite"
    path.write_bytes(view_after_dynamic_reshape().build())
    r = compare(str(path), "--no-runtimes", "--json")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    tflite = json.loads(r.stdout)[0]["tflite"]
    assert tflite["planned"]["best"] >= tflite["planned"]["bound"] > 0


def test_a_plan_of_ours_that_fails_the_check_is_a_bug_not_bad_input(monkeypatch):
    """Internal errors are never reported as bad input: their own line and exit code 1."""
    from typer.testing import CliRunner

    from packager.cli import app
    from packager.plan import portfolio
    from packager.plan.validate import check_offset_plan

    def broken(records, plan, *rest):
        return check_offset_plan(records, type(plan)(plan.strategy, (0,) * len(plan.offsets), plan.arena,
                                                     plan.alignment), *rest)

    monkeypatch.setattr(portfolio, "check_offset_plan", broken)
    r = CliRunner().invoke(app, ["plan", str(MODELS / "chain.tflite")])
    assert r.exit_code == 1, r.output
    assert r.output.startswith("internal error: invalid plan") and "a bug" in r.output
    assert len(r.output.splitlines()) == 1 and "Traceback" not in r.output
