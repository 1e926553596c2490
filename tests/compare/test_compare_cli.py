"""The `compare` command, the child-process guard, and the helpers under them."""

from __future__ import annotations

import csv
import json
import random

from typer.testing import CliRunner

from fixtures.write_models import DEFAULT_DIR
from packager.cli import app
from packager.kernels.libstdcxx import introsort, unordered_set_order
from packager.reader import read_model
from packager.compare import tflite_runtime
from packager.runtimes import child
from packager.runtimes import tflm as tflm_runtime
from packager.runtimes.child import MISSING, ProbeResult
from packager.compare.tflite_runtime import classify_subgraph

runner = CliRunner()


def test_compare_writes_csv_and_json_for_a_folder(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    for name in ("chain", "custom_op"):
        (folder / f"{name}.tflite").write_bytes((DEFAULT_DIR / f"{name}.tflite").read_bytes())
    out_csv = tmp_path / "table.csv"
    result = runner.invoke(app, ["compare", str(folder), "--csv", str(out_csv), "--runtime", "litert"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(out_csv.open()))
    assert [r["model"] for r in rows] == ["chain", "custom_op"]
    assert rows[0]["tflite_best"] and rows[0]["ideal_best"]
    assert rows[1]["tflite_measured"] == "" and rows[1]["tflite_best"]  # planned figures stay
    result = runner.invoke(app, ["compare", str(folder / "chain.tflite"), "--json"])
    assert result.exit_code == 0, result.output
    (data,) = json.loads(result.output)
    assert data["name"] == "chain" and data["ideal"]["best"] > 0


def test_without_runtimes_compare_says_what_is_missing(monkeypatch):
    missing = ProbeResult(MISSING, {"missing": "x"}, "ai-edge-litert is not installed")
    monkeypatch.setattr(tflite_runtime, "probe", lambda *a, **k: missing)
    monkeypatch.setattr(tflm_runtime, "probe", lambda *a, **k: missing)
    result = runner.invoke(app, ["compare", str(DEFAULT_DIR / "chain.tflite")],
                           env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "not installed" in result.output and "tflpack[runtimes]" in result.output


def test_bad_path_is_one_line_and_exit_2(tmp_path):
    result = runner.invoke(app, ["compare", str(tmp_path)])
    assert result.exit_code == 2 and "no .tflite files" in result.output


def test_a_crashing_runtime_does_not_take_the_packager_down():
    # Any child that dies by a signal is reported, not raised.
    result = child.run_child(["/bin/sh", "-c", "kill -SEGV $$"], timeout=10)
    assert result.outcome == child.FAILED and "crashed (SIGSEGV)" in result.reason
    result = child.run_child(["/bin/sh", "-c", "sleep 5"], timeout=0.5)
    assert result.outcome == child.TIMED_OUT and result.reason == "did not finish in 0.5 s (stopped)"


def test_persistent_arena_next_to_the_working_one_is_left_out():
    model = read_model(DEFAULT_DIR / "dequantize_fp16.tflite")
    sg = model.main
    base = 1 << 20
    rows = [[t.index, None, 0] for t in sg.tensors]
    rows[0] = [0, base, 3072]  # the input: offset 0
    rows += [[16, base + 3072, 73728]]  # an im2col temporary
    rows[5] = [5, base + 76800, 8192]
    rows[2] = [2, base + 76800 + 8192 + 64, 864]  # a DEQUANTIZE output right after the arena
    arena = classify_subgraph(model, 0, rows)
    assert arena.offsets == {0: 0, 5: 76800} and arena.elsewhere == {2: 864}
    assert arena.scratch == {16: (3072, 73728)}
    assert arena.arena == 76800 + 8192


def test_introsort_sorts_and_the_set_order_is_librarys():
    rng = random.Random(4)
    for n in (0, 1, 5, 17, 100, 1000):
        xs = [(rng.randint(0, 9), i) for i in range(n)]
        assert [k for k, _ in introsort(xs, lambda a, b: a[0] < b[0])] == sorted(k for k, _ in xs)
    assert unordered_set_order([21, 22]) == [22, 21]  # 13 buckets: a new bucket goes in front
    assert unordered_set_order([3, 16, 29]) == [29, 16, 3]  # same bucket: newest first


def test_a_lower_bound_measurement_is_never_called_exact():
    # Two subgraph arenas: one seen whole and equal to the prediction, one whose 0-d tensor's
    # address Python hides. The hidden one makes the measurement a lower bound: not exact, and
    # the JSON and the table both say so.
    from packager.compare.comparison import ArenaCheck, Planned, RuntimeComparison
    from packager.text.compare_view import table_cells

    seen = ArenaCheck(0, 128, 128, 128, 128, 2, (), True, True)
    hidden = ArenaCheck(1, 64, 129, 64, 129, 1, (), True, True, unknown=(3,))
    assert seen.exact and not seen.lower_bound
    assert hidden.arena_matches and hidden.lower_bound and not hidden.exact
    plan = Planned("tflite", 100, 90, ("x",))
    r = RuntimeComparison("tflite", "measured", "", "ai-edge-litert", "2", plan, plan, 257, 257, (),
                          measured=192, measured_model=192, checks=(seen, hidden))
    assert r.partial and r.exact is False and r.saving is None
    assert "0-d" in r.why_not_exact and "subgraph 1" in r.why_not_exact
    resized = ArenaCheck(0, 128, 128, 128, 128, 2, (), True, True, resized=(1,))
    assert not resized.exact and "size" in resized.why_not_exact
    from packager.text import compare_view
    row = {k: None for k in compare_view.ROW_FIELDS} | {
        "model": "m", "tflite_runtime": "ai-edge-litert 2", "tflite_measured": 192, "tflite_measured_partial": True,
        "tflite_predicted": 257, "tflite_exact": False, "tflite_status": "measured",
        "tflm_status": "missing"}
    cells = table_cells(row)
    assert cells[1:4] == ("ai-edge-litert 2", "≥ 192", "257 ?")


def test_compare_json_flags_the_lower_bound(monkeypatch):
    # Where the probe cannot locate 0-d tensors (it reads /proc/self/mem: Linux only), they stay
    # hidden; asking it to locate none gives that measurement here.
    monkeypatch.setattr(tflite_runtime, "_to_locate", lambda model: "")
    result = runner.invoke(app, ["compare", str(DEFAULT_DIR / "while_loop.tflite"), "--json"])
    assert result.exit_code == 0, result.output
    (data,) = json.loads(result.output)
    t = data["tflite"]
    if t["status"] != "measured":
        import pytest
        pytest.skip(f"TFLite did not measure: {t['reason']}")
    assert t["measured_lower_bound"]  # its 0-d counter is hidden from Python
    for check in t["checks"]:
        assert not (check["exact"] and check["measured_lower_bound"])
        assert check["exact"] == (check["not_exact_because"] == "")
    assert t["exact"] == all(c["exact"] for c in t["checks"])
    assert t["measured_lower_bound"] == any(c["measured_lower_bound"] for c in t["checks"])


def test_runtime_option_rejects_an_unknown_version_in_one_line():
    result = runner.invoke(app, ["compare", str(DEFAULT_DIR / "chain.tflite"), "--runtime", "tf3"])
    assert result.exit_code == 2 and "litert, tflite-runtime" in result.output
    assert "Traceback" not in result.output


def test_a_missing_second_environment_is_reported_with_its_setup(monkeypatch):
    monkeypatch.setenv("TFLPACK_TFLITE214_PYTHON", "/nonexistent/python")
    result = runner.invoke(app, ["compare", str(DEFAULT_DIR / "chain.tflite"), "--runtime",
                                 "tflite-runtime", "--json"])
    assert result.exit_code == 0, result.output
    (data,) = json.loads(result.output)
    assert data["tflite"]["status"] == "missing" and "numpy<2" in data["tflite"]["reason"]
    assert data["tflite"]["predicted"] > 0 and data["tflite"]["exact"] is None


def test_by_default_every_installed_tflite_version_gets_a_row(tmp_path):
    from packager.runtimes.tflite_versions import chosen
    installed = [c.package for c in chosen(None)]
    out_csv = tmp_path / "table.csv"
    result = runner.invoke(app, ["compare", str(DEFAULT_DIR / "chain.tflite"), "--csv", str(out_csv)])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(out_csv.open()))
    assert [r["model"] for r in rows] == ["chain"] * len(installed)
    measured = [r["tflite_runtime"].split()[0] for r in rows if r["tflite_status"] == "measured"]
    assert measured == [p for p, r in zip(installed, rows) if r["tflite_status"] == "measured"]


def test_compare_json_measures_every_tensor_of_a_while_loop():
    import sys

    import pytest
    if not sys.platform.startswith("linux"):
        pytest.skip("locating 0-d tensors reads /proc/self/mem (Linux)")
    result = runner.invoke(app, ["compare", str(DEFAULT_DIR / "while_loop.tflite"), "--json"])
    assert result.exit_code == 0, result.output
    (data,) = json.loads(result.output)
    for t in (data["tflite"], *data.get("tflite_also", [])):
        if t["status"] != "measured":
            continue
        assert not t["measured_lower_bound"] and t["exact"], t["not_exact_because"]
        assert all(not c["unknown"] for c in t["checks"])
