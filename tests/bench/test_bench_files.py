"""The table of the renderers `package` runs after planning: a row for each file it renders, on
a model packaged first, and the timing wrappers taken out again."""

from __future__ import annotations

from benchmarks import bench_files
from fixtures.write_models import DEFAULT_DIR as FIXTURES_DIR
from packager.package import build


def test_every_renderer_has_a_row(capsys):
    write_files, report_html = build.write_files, build.report_html
    assert bench_files.main([str(FIXTURES_DIR / "mobile_block.tflite"), "--runs", "1"]) == 0
    assert (build.write_files, build.report_html) == (write_files, report_html)
    rows = [line.split("|")[1:4] for line in capsys.readouterr().out.splitlines() if line.startswith("| ")][2:]
    assert [label.strip() for label, _, _ in rows] == [
        f"mobile_block.tflite: {name}" for name in ("report: pictures", "report: page text", "C header",
                                                    "C array of the model", "all four")]
    made = [int(size.strip().replace(",", "")) for _, _, size in rows[:4]]
    assert made[0] == 1 and all(size > 0 for size in made)


def test_a_missing_model_is_said(capsys, tmp_path):
    assert bench_files.main([str(tmp_path / "none.tflite")]) == 1
    assert "no model at" in capsys.readouterr().out
