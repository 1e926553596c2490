"""`plan MODEL --gpu`: the TFLite GPU delegate's backends' figures for a model's tensors, by the
delegate's rules (channels padded to 4, texture extents, offsets used when no larger), beside our
best plan; never a figure above the delegate's for ours, and the caveat said."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from packager.cli import app
from packager.plan.gpu_backends import bhwc, gpu_answer
from packager.plan.objects import gpu_delegate
from packager.plan.offsets import gpu_greedy_by_size
from packager.reader import read_model
from tests.conftest import REPO

runner = CliRunner()
MODEL = REPO / "fixtures" / "models" / "mobile_block.tflite"


def test_buffers_by_the_delegates_rules():
    model = read_model(str(MODEL))
    answer = gpu_answer(model)
    rows = {(r.backend, r.storage): r for r in answer.rows}
    assert set(rows) == {("OpenCL", "buffers"), ("Metal", "buffers"), ("OpenGL", "buffers"),
                         ("OpenCL", "2D textures"), ("OpenGL", "2D textures")}
    # The same figures, from the rules written out here: channels padded to 4, FP32 elements.
    from packager.lifetimes import model_lifetimes
    sg = model.subgraphs[0]
    records = sorted((r for r in model_lifetimes(model, "paper")[0].records
                      if r.tensor not in (*sg.inputs, *sg.outputs)), key=lambda r: r.tensor)
    sizes = []
    for r in records:
        b, h, w, c = bhwc(sg.tensors[r.tensor].shape)
        sizes.append(b * h * w * ((c + 3) // 4 * 4) * 4)
    buffers = [type(r)(r.tensor, r.first_op, r.last_op, s) for r, s in zip(records, sizes)]
    objects = gpu_delegate.OBJECTS["GREEDY_BEST"](buffers).total
    offsets = gpu_greedy_by_size.plan(buffers).arena
    assert rows["OpenCL", "buffers"].delegate_bytes == (offsets if offsets <= objects else objects)
    assert rows["OpenGL", "buffers"].delegate_bytes == objects
    for r in answer.rows:
        assert r.ours_bytes <= r.delegate_bytes


def test_cli_text_and_json():
    text = runner.invoke(app, ["plan", str(MODEL), "--gpu"])
    assert text.exit_code == 0, text.output
    assert "not a measurement of a GPU" in text.output and "OpenGL" in text.output
    done = runner.invoke(app, ["plan", str(MODEL), "--gpu", "--json"])
    view = json.loads(done.output)["gpu"]
    assert [b["backend"] for b in view["backends"]] == ["OpenCL", "Metal", "OpenGL", "OpenCL", "OpenGL"]
    assert all(b["saving_bytes"] == b["delegate_bytes"] - b["ours_bytes"] >= 0 for b in view["backends"])


def test_records_refused_in_one_line():
    done = runner.invoke(app, ["plan", "--records", str(MODEL), "--gpu"])
    assert done.exit_code != 0
    assert done.output.strip().startswith("error:") and len(done.output.strip().splitlines()) == 1
