"""The report page is written a block of text at a time (package/build.py): the blocks must be
exactly the page's bytes as one string, whatever the block size and wherever a character of
more than one byte falls."""

from __future__ import annotations

import gc

import pytest

from packager.emit import encoded_blocks
from packager.emit.encoded_blocks import encoded_in_blocks
from packager.emit.report import render_report_html
from packager.emit.svg import svg, svg_chunks
from packager.package import build
from packager.pictures import arena_picture
from packager.package.runtime_arena import whole_arena_sentences
from packager.reader import read_model
from tests.package.support import model_file

PIECES = ["<p>", "operators 1–7", "", "é", "😀 wide", "–", "ascii only", "\n", "x" * 50]


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 1 << 20])
def test_blocks_are_the_whole_text_encoded(block):
    blocks = list(encoded_in_blocks(iter(PIECES), block))
    assert b"".join(blocks) == "".join(PIECES).encode("utf-8")
    assert all(blocks)  # no empty write
    assert list(encoded_in_blocks(iter([]), block)) == []


def test_the_collector_is_on_again_after_the_blocks():
    assert gc.isenabled()
    list(encoded_in_blocks(iter(PIECES), 2))
    assert gc.isenabled()


def test_a_chart_in_pieces_is_the_chart():
    children = ['<rect x="1"/>', "", '<title>a – b</title>']
    assert "".join(svg_chunks(10.5, 20, children, **{"class": "chart"})) == svg(10.5, 20, children, **{"class": "chart"})
    assert "".join(svg_chunks(10, 20, [])) == svg(10, 20, []) == "".join(svg_chunks(10, 20, [""]))


@pytest.mark.parametrize("name,semantics", [("residual", "tflite"), ("mobile_block", "tflm"),
                                            ("if_else", "tflm"), ("while_loop", "tflite")])
def test_the_packaged_report_is_the_page_as_one_string(tmp_path, monkeypatch, name, semantics):
    monkeypatch.setattr(encoded_blocks, "BLOCK_CHARACTERS", 5)  # many blocks, characters split across them
    result = build.package(model_file(name), tmp_path / "out", semantics=semantics, verify=False)
    written = next(f.path for f in result.files if f.path.name.endswith("_report.html")).read_bytes()
    model = read_model(model_file(name))
    planned = build.make_plan(model, semantics, "best", result.plan.source, None)
    pictures = [arena_picture(model, p, "best", layout_outcome=p.offsets, labels=p.arena.scratch)
                for p in planned.arenas]
    page = render_report_html(pictures, source_name=result.plan.source.file, semantics=semantics,
                              strategy="best", include_times=False,
                              first=whole_arena_sentences(result.plan.runtime_arena))
    assert written == page.encode("utf-8")


@pytest.mark.parametrize("name,semantics", [("mobile_block", "tflm"), ("dynamic_batch", "tflite")])
def test_the_c_header_in_blocks_is_the_header(monkeypatch, name, semantics):
    from packager.arenas import bindings_for
    from packager.package import c_header
    from packager.package.sidecar import SourceModel
    model = read_model(model_file(name))
    source = SourceModel(f"{name}.tflite", "0" * 64, len(model.raw), tuple(len(s.tensors) for s in model.subgraphs))
    dims = ("image_0=1..4",) if name == "dynamic_batch" else ()
    plan = build.make_plan(model, semantics, "best", source, bindings_for(model, dims) if dims else None).plan
    monkeypatch.setattr(encoded_blocks, "BLOCK_CHARACTERS", 7)
    whole = c_header.render(plan, model, "m").encode("ascii")
    assert b"".join(c_header.render_chunks(plan, model, "m")) == whole
    assert whole.endswith(b"\n") and b"M_TENSOR_OFFSETS" in whole
