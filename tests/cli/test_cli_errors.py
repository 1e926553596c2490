"""Bad input at the command line: one line on stderr, exit code 2, never a traceback."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import REPO


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "cli.py"), *args], capture_output=True,
                          text=True, cwd=REPO, timeout=120)


def _bad_files(tmp_path):
    from fixtures.builder import ModelBuilder
    files = {
        "empty.tflite": b"",
        "truncated.tflite": (REPO / "fixtures" / "models" / "chain.tflite").read_bytes()[:200],
        "random.tflite": bytes(range(256)) * 4,
        "other_id.tflite": b"\x10\x00\x00\x00BFBS" + b"\x00" * 40,
    }
    m = ModelBuilder()
    g = m.subgraph("main")
    x, y = g.tensor("x", [1, 4]), g.tensor("y", [1, 4], buffer=999)
    g.op("RELU", [x], [y])
    g.inputs([x])
    g.outputs([y])
    files["missing_buffer.tflite"] = m.build()
    m = ModelBuilder()
    g = m.subgraph("main")
    x, y = g.tensor("x", [2**31 - 1] * 3), g.tensor("y", [1])
    g.op("RELU", [x], [y])
    g.inputs([x])
    files["overflow.tflite"] = m.build()
    paths = []
    for name, data in files.items():
        p = tmp_path / name
        p.write_bytes(data)
        paths.append(p)
    return paths


@pytest.mark.parametrize("command", ["inspect", "plan"])
def test_bad_models_give_one_line_and_exit_2(tmp_path, command):
    for path in _bad_files(tmp_path):
        r = run_cli(command, str(path))
        assert r.returncode == 2, (path.name, r.stderr)
        assert "Traceback" not in r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (path.name, r.stderr)
        assert path.name in lines[0]


def test_bad_records_csv(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("id,lower,upper,size\n0,5,3,10\n")
    r = run_cli("plan", "--records", str(p))
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr


@pytest.mark.parametrize("rows, why", [
    ("0,0,2,9223372036854775808\n1,1,3,5\n", r"record 0 \(tensor 0\) is malformed: .*size beyond int64"),
    ("0,0,2,4611686018427387904\n1,1,3,4611686018427387904\n", "the records' sizes add up to 9223372036854775808 B"),
    ("0,0,4611686018427387905,1\n", r"record 0 \(tensor 0\) ends at step 4611686018427387904"),
])
def test_records_csv_with_numbers_no_plan_can_sum_gives_one_line(tmp_path, rows, why):
    """Records are bounded when made: a size or time beyond what int64 sums hold is refused
    with one line naming the file, not a traceback from deep inside a planner."""
    p = tmp_path / "huge.csv"
    p.write_text("id,lower,upper,size\n" + rows)
    r = run_cli("plan", "--records", str(p))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert re.match(f"error: huge.csv: {why}", lines[0]), lines[0]


def test_unknown_semantics_and_strategy():
    model = str(REPO / "fixtures" / "models" / "chain.tflite")
    for args in (["inspect", model, "--semantics", "gpu"], ["plan", model, "--strategy", "magic"]):
        r = run_cli(*args)
        assert r.returncode == 2 and "error: unknown" in r.stderr


@pytest.mark.parametrize("args", [["plan", "--bogus"], ["inspect"], ["package", "fixtures/models/chain.tflite"],
                                  ["bogus"], ["plan", "fixtures/models/chain.tflite", "-s"]])
def test_usage_errors_are_one_error_line(args):
    """Click's four-line usage block is not what the README promises: one `error:` line, exit 2."""
    r = run_cli(*args)
    assert r.returncode == 2 and r.stdout == "", (args, r.stdout)
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("error: "), (args, r.stderr)
    assert "--help" in r.stderr and "Usage:" not in r.stderr


def test_names_taken_from_the_file_are_escaped_and_cut_short(tmp_path):
    """A tensor name is whatever bytes the file holds: quoted in an error, it is escaped (no
    terminal control codes, no line breaks) and cut short."""
    from fixtures.builder import ModelBuilder
    m = ModelBuilder()
    g = m.subgraph("main")
    name = "\x1b[2J\x1b[31m" + "A" * 400 + "\nerror: forged second line"
    x, y = g.tensor("x", [1, 4]), g.tensor(name, [1, 4], buffer=999)
    g.op("RELU", [x], [y])
    g.inputs([x])
    g.outputs([y])
    path = tmp_path / "named.tflite"
    path.write_bytes(m.build())
    r = run_cli("inspect", str(path))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "\x1b" not in r.stderr and "\\x1b" in r.stderr
    assert len(r.stderr) < 200 and "points to buffer 999" in r.stderr, r.stderr
