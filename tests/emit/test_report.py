"""The report: every planned tensor drawn once, where its plan puts it; a page that needs no network;
byte-identical output; a PNG of the stated size; the terminal breadth curve within 80 columns."""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from packager.text.breadth_text import breadth_lines
from packager.emit.layout_png import PNG_HEIGHT, PNG_WIDTH, render_layout_png
from packager.compare.measured_layout import measured_layout
from packager.emit.report import render_report_html
from packager.pictures import arena_picture
from packager.arenas import ArenaToPlan, PlannedArena, plan_model
from packager.plan.records import breadth_by_step, offset_lower_bound
from packager.reader import read_model
from tests.conftest import REPO, shared_model_path

FIXTURES = REPO / "fixtures" / "models"
# (model, semantics): aliases, persistent tensors, an inline arena, several arenas, an empty arena.
CASES = [("residual", "tflite"), ("dequantize_fp16", "tflite"), ("if_else", "tflm"),
         ("while_loop", "tflite"), ("variables", "tflite"), ("mobile_block", "ideal")]
TOLERANCE = 0.002  # coordinates are written with three decimals


def _plan(path: Path, semantics: str, strategy: str = "best"):
    model = read_model(path)
    return model, plan_model(model, semantics, strategy)


def _html(model, arenas, name="m.tflite", semantics="tflite", strategy="best", layouts=None, labels=None,
          include_times=False, **kw) -> str:
    pictures = [arena_picture(model, a, strategy, layouts[i] if layouts else None, labels[i] if labels else None)
                for i, a in enumerate(arenas)]
    return render_report_html(pictures, source_name=name, semantics=semantics, strategy=strategy,
                              include_times=include_times, **kw)


def _charts(html: str, kind: str) -> list[ET.Element]:
    """Every inline <svg> of the given data-chart kind, parsed as XML, in page order."""
    svgs = [ET.fromstring(s) for s in re.findall(r"<svg\b.*?</svg>", html, re.S)]
    return [s for s in svgs if s.get("data-chart") == kind]


def _scale(svg: ET.Element) -> tuple[float, float, float, float]:
    return tuple(float(svg.get(k)) for k in ("data-x0", "data-step-width", "data-y0", "data-byte-height"))


def _check_layout(svg: ET.Element, planned: PlannedArena, offsets) -> None:
    """Each record once, at x from its lifetime and y from its offset and size (address upwards)."""
    x0, step, y0, per_byte = _scale(svg)
    rects = [r for r in svg.iter("rect") if "tensor" in r.get("class", "").split()]
    records = planned.result.problem.records
    assert sorted(int(r.get("data-tensor")) for r in rects) == sorted(r.tensor for r in records)
    by_id = {int(r.get("data-tensor")): r for r in rects}
    for record, offset in zip(records, offsets):
        rect = by_id[record.tensor]
        assert (int(rect.get("data-offset")), int(rect.get("data-size")), int(rect.get("data-first-op")),
                int(rect.get("data-last-op"))) == (offset, record.size, record.first_op, record.last_op)
        expect = {"x": x0 + record.first_op * step, "width": (record.last_op - record.first_op + 1) * step,
                  "y": y0 - (offset + record.size) * per_byte, "height": record.size * per_byte}
        for key, value in expect.items():
            assert abs(float(rect.get(key)) - value) <= TOLERANCE, (record, key, rect.get(key), value)
        assert rect.find("title") is not None and f"offset {offset:,} B" in rect.find("title").text


@pytest.mark.parametrize("name,semantics", CASES)
def test_layout_draws_every_planned_tensor_once_where_the_plan_puts_it(name, semantics):
    model, arenas = _plan(FIXTURES / f"{name}.tflite", semantics)
    html = _html(model, arenas, semantics=semantics)
    layouts = _charts(html, "layout")
    assert len(layouts) == len(arenas)
    for svg, planned in zip(layouts, arenas):
        _check_layout(svg, planned, planned.result.best_offsets.plan.offsets)
        # Aliases are marked once each, over their owner, and name it.
        marks = {int(r.get("data-tensor")): int(r.get("data-alias-of"))
                 for r in svg.iter("rect") if r.get("class") == "alias"}
        assert marks == dict(planned.lifetimes.aliases)
        # The bound line sits at the largest breadth.
        bound = [l for l in svg.iter("line") if l.get("class") == "bound"]
        assert [int(l.get("data-bytes")) for l in bound] == [planned.result.problem.offset_lower_bound]


@pytest.mark.parametrize("name,semantics", CASES)
def test_object_rows_hold_every_tensor_in_its_object(name, semantics):
    model, arenas = _plan(FIXTURES / f"{name}.tflite", semantics)
    charts = _charts(_html(model, arenas, semantics=semantics), "objects")
    assert len(charts) == len(arenas)
    for svg, planned in zip(charts, arenas):
        plan = planned.result.best_objects.plan
        members = {int(r.get("data-tensor")): int(r.get("data-object"))
                   for r in svg.iter("rect") if r.get("class") == "member"}
        records = planned.result.problem.records
        assert len([r for r in svg.iter("rect") if r.get("class") == "member"]) == len(records)
        assert members == {r.tensor: k for r, k in zip(records, plan.assignment)}


def test_breadth_curve_matches_the_records_and_its_peak_is_the_bound():
    model, arenas = _plan(FIXTURES / "mobile_block.tflite", "tflite")
    planned = arenas[0]
    records = planned.result.problem.records
    breadths = breadth_by_step(records, planned.lifetimes.num_steps)
    assert max(breadths) == offset_lower_bound(records)
    for step, value in enumerate(breadths):
        assert value == sum(r.size for r in records if r.first_op <= step <= r.last_op)
    (svg,) = _charts(_html(model, arenas), "breadth")
    columns = {int(r.get("data-step")): int(r.get("data-bytes")) for r in svg.iter("rect") if r.get("class") == "hit"}
    assert columns == dict(enumerate(breadths))
    levels = {l.get("class"): int(l.get("data-bytes")) for l in svg.iter("line") if l.get("data-bytes")}
    assert levels == {"bound": max(breadths), "arena": planned.result.best_offsets.total}


def test_persistent_tensors_are_listed_apart():
    model, arenas = _plan(FIXTURES / "dequantize_fp16.tflite", "tflite")
    html = _html(model, arenas)
    persistent = arenas[0].lifetimes.ids("persistent")
    assert persistent and "Persistent tensors" in html
    layout_ids = {int(r.get("data-tensor")) for r in _charts(html, "layout")[0].iter("rect")
                  if r.get("data-tensor")}
    assert not layout_ids & set(persistent)


def test_a_named_object_strategy_is_drawn_end_to_end_and_validated():
    model, arenas = _plan(FIXTURES / "mobile_block.tflite", "tflite", strategy="greedy_by_size")
    # greedy_by_size names both an offset and an object strategy: the offset plan is drawn.
    (svg,) = _charts(_html(model, arenas), "layout")
    _check_layout(svg, arenas[0], next(o for o in arenas[0].result.offsets).plan.offsets)
    model, arenas = _plan(FIXTURES / "mobile_block.tflite", "tflite", strategy="equality")
    picture = arena_picture(model, arenas[0], "equality")
    assert picture.layout_strategy == "equality (objects end to end)"
    (svg,) = _charts(_html(model, arenas, strategy="equality"), "layout")
    _check_layout(svg, arenas[0], [p.offset for p in picture.placed])


def test_measured_layout_is_drawn_beside_ours():
    model, arenas = _plan(FIXTURES / "residual.tflite", "tflite")
    planned = arenas[0]
    offsets = {r.tensor: o for r, o in zip(planned.result.problem.records, planned.result.best_offsets.plan.offsets)}
    measured = measured_layout(model, planned, "stand-in runtime", planned.result.best_offsets.total, offsets,
                               extra=[("im2col", 4096)])
    html = _html(model, arenas, measured=[measured])
    (svg,) = _charts(html, "measured")
    _check_layout(svg, planned, planned.result.best_offsets.plan.offsets)
    assert "im2col: 4,096 B" in html


def test_page_has_no_external_references():
    model, arenas = _plan(FIXTURES / "while_loop.tflite", "tflite")
    html = _html(model, arenas)
    for needle in ("http:", "https:", "//", "@import", "<link", "<img", "<iframe", "href="):
        assert needle not in html.lower(), needle
    assert not re.search(r"\bsrc\s*=", html, re.I)
    assert all(u.startswith("data:") for u in re.findall(r"url\(\s*['\"]?([^)'\"]*)", html, re.I))


def test_names_cannot_smuggle_a_url_in():
    from packager.emit.svg import escape
    assert "//" not in escape("a//b///c") and "<" not in escape("<script>")


def test_output_is_deterministic():
    path = FIXTURES / "mobile_block.tflite"
    pages, pngs = [], []
    for _ in range(2):
        model, arenas = _plan(path, "tflite")
        pages.append(_html(model, arenas))
        pngs.append(render_layout_png(arena_picture(model, arenas[0]), "mobile_block"))
    assert pages[0] == pages[1]
    assert pngs[0] == pngs[1]


def test_times_appear_only_when_asked():
    model, arenas = _plan(FIXTURES / "chain.tflite", "tflite")
    with_times = _html(model, arenas, name="c", include_times=True)
    assert re.search(r"\d ms<", with_times) and not re.search(r"\d ms<", _html(model, arenas))


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_png_is_a_valid_png_of_the_stated_size():
    from PIL import Image
    import io
    model, arenas = _plan(FIXTURES / "mobile_block.tflite", "tflite")
    data = render_layout_png(arena_picture(model, arenas[0]), "mobile_block")
    assert _png_size(data) == (PNG_WIDTH, PNG_HEIGHT)
    image = Image.open(io.BytesIO(data))
    image.verify()
    small = render_layout_png(arena_picture(model, arenas[0]), "x", width=640, height=320)
    assert _png_size(small) == (640, 320)


def test_breadth_text_fits_80_columns_and_marks_the_peak():
    breadths = [10 * i for i in range(500)] + [4990]
    lines = breadth_lines(breadths, lower_bound=4990, arena=6000)
    assert all(len(line) <= 80 for line in lines)
    assert len(lines[0]) - len("breadth ") == 72  # 501 ops, 7 per column
    assert lines[1].rstrip().endswith("^") and "lower bound 4,990 B" in lines[2] and "arena 6,000 B" in lines[3]
    short = breadth_lines([0, 4, 8], lower_bound=8, arena=8, width=80)
    assert short[0] == "breadth  ▄█" and short[1] == "          ^"


def _cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "cli.py"), *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def test_report_command_writes_page_and_png(tmp_path):
    html, png = tmp_path / "r.html", tmp_path / "r.png"
    r = _cli("report", str(FIXTURES / "residual.tflite"), "-o", str(html), "--png", str(png), "--no-times",
             "--no-measure")
    assert r.returncode == 0, r.stderr
    assert _png_size(png.read_bytes()) == (PNG_WIDTH, PNG_HEIGHT)
    first = html.read_bytes()
    assert _cli("report", str(FIXTURES / "residual.tflite"), "-o", str(html), "--no-times",
                "--no-measure").returncode == 0
    assert html.read_bytes() == first
    assert not list(tmp_path.glob(".*.tmp"))


def test_plan_prints_the_breadth_curve():
    r = _cli("plan", str(FIXTURES / "mobile_block.tflite"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    curve = [i for i, line in enumerate(lines) if line.startswith("breadth ")]
    assert len(curve) == 1
    assert all(len(line) <= 80 for line in lines[curve[0]:curve[0] + 4])
    assert "lower bound" in lines[curve[0] + 2]


def test_real_model_layout(tmp_path):
    path = shared_model_path("iris_landmark")
    model, arenas = _plan(path, "tflite")
    html = _html(model, arenas, name=path.name)
    (svg,) = _charts(html, "layout")
    _check_layout(svg, arenas[0], arenas[0].result.best_offsets.plan.offsets)
    assert len(_charts(html, "objects")) == 1


def test_tflite_measured_layout_when_the_runtime_is_installed():
    from packager.compare.measured_layout import tflite_layouts
    path = FIXTURES / "residual.tflite"
    model, arenas = _plan(path, "tflite")
    (measured,) = tflite_layouts(path, model, arenas, "tflite")
    if measured is None:
        pytest.skip("the TFLite runtime is not installed")
    html = _html(model, arenas, measured=[measured])
    (svg,) = _charts(html, "measured")
    drawn = {int(r.get("data-tensor")): int(r.get("data-offset")) for r in svg.iter("rect")
             if r.get("class", "").startswith("tensor")}
    assert drawn == {p.tensor.id: p.offset for p in measured.placed}
    assert set(drawn) == {r.tensor for r in arenas[0].result.problem.records}
    assert tflite_layouts(path, model, arenas, "tflm") == [None]


def test_package_can_draw_its_own_plan_with_scratch_buffers():
    """package draws the plan it writes (not the portfolio's pick) and names its scratch buffers."""
    from dataclasses import replace

    from packager.lifetimes import model_lifetimes
    from packager.plan.portfolio import run_portfolio
    from packager.plan.records import UsageRecord
    from packager.arenas import problem_of

    model = read_model(FIXTURES / "mobile_block.tflite")
    (lifetimes,) = model_lifetimes(model, "tflm")
    scratch_id = 1_000_000
    lifetimes = replace(lifetimes, records=lifetimes.records + (UsageRecord(scratch_id, 2, 2, 4096),))
    result = run_portfolio(problem_of(lifetimes))
    planned = PlannedArena(ArenaToPlan(lifetimes, {}, ()), result, result.best_offsets)
    drawn = max(result.offsets, key=lambda o: o.total)  # deliberately not the best
    labels = {scratch_id: "scratch buffer of CONV_2D"}
    html = _html(model, [planned], semantics="tflm", layouts=[drawn], labels=[labels])
    (svg,) = _charts(html, "layout")
    _check_layout(svg, planned, drawn.plan.offsets)
    assert "scratch buffer of CONV_2D" in html and "the plan as packaged" in html


def test_report_on_bad_input_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "truncated.tflite"
    bad.write_bytes((FIXTURES / "chain.tflite").read_bytes()[:200])
    for args in (["report", str(bad), "-o", str(tmp_path / "x.html")],
                 ["report", str(FIXTURES / "chain.tflite"), "-o", str(tmp_path / "x.html"), "--strategy", "nope"]):
        r = _cli(*args)
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("error: ")
    assert not (tmp_path / "x.html").exists()
