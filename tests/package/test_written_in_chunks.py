"""The largest files of `package` are written a chunk at a time (the plan JSON from its checked
text, the C array as its rows are formatted): the chunks must be exactly the file's bytes as a
whole, and the folder must write them in order."""

from __future__ import annotations

import pytest

from packager.arenas import bindings_for
from packager.emit import model_array
from packager.emit.json_text import dumps_indented_text
from packager.package import plan_json
from packager.package.build import make_plan
from packager.package.output_dir import staged_folder
from packager.package.sidecar import SourceModel
from packager.reader import read_model
from tests.package.support import model_file


@pytest.mark.parametrize("size", [0, 1, 11, 12, 13, 12 * 7 + 5, 12 * (1 << 16) + 12 * 3 + 1])
def test_the_c_array_in_chunks_is_the_c_array(monkeypatch, size):
    data = bytes((i * 37 + 11) % 256 for i in range(size))
    whole = bytes(model_array.render_source_bytes("m", data))
    assert b"".join(bytes(c) for c in model_array.source_chunks("m", data)) == whole
    monkeypatch.setattr(model_array, "_ROWS_AT_ONCE", 3)  # many blocks, the last one short
    assert b"".join(bytes(c) for c in model_array.source_chunks("m", data)) == whole


@pytest.mark.parametrize("name,semantics,dims", [("mobile_block", "tflm", ()), ("if_else", "tflite", ()),
                                                 ("dynamic_batch", "tflite", ("image_0=1..4",))])
def test_the_plan_text_in_pieces_is_the_plan_text(monkeypatch, name, semantics, dims):
    model = read_model(model_file(name))
    source = SourceModel(f"{name}.tflite", "0" * 64, len(model.raw), tuple(len(s.tensors) for s in model.subgraphs))
    plan = make_plan(model, semantics, "best", source, bindings_for(model, dims) if dims else None).plan
    monkeypatch.setattr(plan_json, "_ENTRIES_PER_CHUNK", 2)  # entries across several chunks
    text = "".join(plan_json.text_pieces(plan))
    assert text == dumps_indented_text(plan_json.to_dict(plan, fast=True), end="\n")
    assert text.encode("utf-8") == plan_json.dumps(plan)
    assert b"".join(plan_json.encoded_pieces(plan)) == plan_json.dumps(plan)
    assert "\x00" not in text


def test_the_folder_writes_chunks_in_order(tmp_path):
    with staged_folder(tmp_path / "out") as folder:
        folder.add("a.bin", iter([b"ab", memoryview(b"cd"), b"", b"e"]))
        folder.add("b.bin", b"whole")
        folder.commit()
    assert (tmp_path / "out" / "a.bin").read_bytes() == b"abcde" and folder.sizes["a.bin"] == 5
    assert (tmp_path / "out" / "b.bin").read_bytes() == b"whole" and folder.sizes["b.bin"] == 5
