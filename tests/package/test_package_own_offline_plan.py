"""A model that carries its own OfflineMemoryAllocation (Vela writes one): `package` keeps it only
when the independent validator proves it (with the ethos-u scratch rule: the operator's input and
output maps may lie inside its scratch area, where Vela placed them), says whose plan the head is,
and replaces it, saying why, when it cannot be proven; --keep-offline-plan on such a plan fails."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from fixtures.builder import ModelBuilder, Quantization
from packager.cli import app
from packager.package.build import package
from packager.package.existing_plan import existing_plan, unproven
from packager.package.load import load
from packager.package.offline_plan import with_offline_plan
from packager.reader import parse_model, read_model
from tests.conftest import SHARED_MODELS

runner = CliRunner()
SCRATCH = 1024


def vela_like(offsets: list[int]) -> bytes:
    """An ethos-u operator as Vela writes it (command stream, weights, scratch, fast scratch, input
    map; one output map), with `offsets` as its OfflineMemoryAllocation and a vela_version."""
    m = ModelBuilder(description="vela_like: one ethos-u operator")
    g = m.subgraph("main")
    q = Quantization(scale=[0.5], zero_point=[0])
    out = g.tensor("output", [1, 4], "INT8", quantization=q)
    cms = g.const("command_stream", np.arange(64, dtype=np.uint8))
    flash = g.const("flash", np.arange(128, dtype=np.uint8))
    scratch = g.tensor("scratch", [SCRATCH], "UINT8")
    fast = g.tensor("scratch_fast", [SCRATCH], "UINT8")
    x = g.tensor("input", [1, 256], "INT8", quantization=q)
    g.op("ethos-u", [cms, flash, scratch, fast, x], [out], custom=True)
    g.inputs([x])
    g.outputs([out])
    m.metadata("vela_version", b"3.10.0")
    return with_offline_plan(m.build(), offsets, 1)


# Vela's own layout: scratch and fast scratch at 0, the input and the output inside the scratch.
VELA = [0, -1, -1, 0, 0, 0]


def test_vela_plan_is_proven_under_the_ethos_u_rule_and_only_then():
    model = parse_model(vela_like(VELA))
    assert unproven(model, existing_plan(model)) is None
    # The input running past the scratch area is no longer the NPU's business: refused.
    model = parse_model(vela_like([0, -1, -1, 0, 0, SCRATCH - 16]))
    assert "overlap" in unproven(model, existing_plan(model))
    # The same overlaps without an ethos-u operator to own them: refused.
    model = parse_model(vela_like([0, -1, -1, 0, 0, 0]).replace(b"ethos-u", b"ethos-x"))
    assert unproven(model, existing_plan(model)) is not None


def test_a_proven_vela_plan_is_kept_and_named_as_the_head(tmp_path):
    path = tmp_path / "vela_like.tflite"
    path.write_bytes(vela_like(VELA))
    result = runner.invoke(app, ["package", str(path), "-o", str(tmp_path / "o"), "--no-verify"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert f"= head {SCRATCH:,} (the model's own Vela plan)" in lines[2]
    assert "(the plan)" not in result.output
    assert any(line.startswith("  this plan, not used (the model's own Vela plan is kept)") for line in lines)
    assert "passes the validator under the ethos-u scratch rule" in result.output
    assert (tmp_path / "o" / "vela_like.tflite").read_bytes() == path.read_bytes()
    header = (tmp_path / "o" / "vela_like_plan.h").read_text()
    assert "_ARENA_HEAD_BYTES: the head, the model's own Vela plan (kept in the model" in header
    doc = json.loads((tmp_path / "o" / "vela_like_plan.json").read_text())
    assert doc["runtime_arena"]["head_plan"] == "the model's own Vela plan"
    assert doc["runtime_arena"]["head_bytes"] == SCRATCH
    for suffix in ("_plan.json", "_plan.tplan"):  # both forms carry it and read back
        assert load(tmp_path / "o" / f"vela_like{suffix}", path).runtime_arena.head_plan == \
            "the model's own Vela plan"


def header_offsets(header: str) -> list[int]:
    table = header.split("_TENSOR_OFFSETS[", 1)[1].split("};", 1)[0].split("{", 1)[1]
    return [int(line.split(",", 1)[0]) for line in table.strip().splitlines()]


def test_a_kept_plan_s_offsets_are_the_header_s_offsets(tmp_path):
    """TFLite Micro places every tensor where the kept plan says: the header's offsets are those,
    not this plan's (which lays the input beside the scratch area, not inside it)."""
    path = tmp_path / "vela_like.tflite"
    path.write_bytes(vela_like(VELA))
    result = package(path, tmp_path / "o", report=False, keep_offline_plan=True)
    header = (tmp_path / "o" / "vela_like_plan.h").read_text()
    assert header_offsets(header) == VELA
    assert "The offsets are those of the model's own Vela plan, kept in the model" in header
    ours = {t.index: t.offset for t in result.plan.arenas[0].offsets.tensors}
    assert ours[5] != VELA[5]  # the input: ours is not where TFLite Micro puts it
    # Replaced (the plan is not kept): the header's offsets are this plan's again.
    replaced = tmp_path / "bad.tflite"
    replaced.write_bytes(vela_like([0, -1, -1, 0, 0, SCRATCH - 16]))
    result = package(replaced, tmp_path / "r", report=False)
    ours = {t.index: t.offset for t in result.plan.arenas[0].offsets.tensors}
    assert header_offsets((tmp_path / "r" / "bad_plan.h").read_text()) == [ours.get(t, -1) for t in range(6)]


def test_an_unproven_plan_is_replaced_saying_why_and_cannot_be_kept(tmp_path):
    path = tmp_path / "bad.tflite"
    path.write_bytes(vela_like([0, -1, -1, 0, 0, SCRATCH - 16]))
    result = package(path, tmp_path / "o", report=False)
    note = next(n for n in result.notes if "OfflineMemoryAllocation written by Vela" in n)
    assert "replaced by this plan" in note and "the validator cannot prove it" in note
    assert result.plan.runtime_arena.head_plan == ""
    assert read_model(tmp_path / "o" / "bad.tflite").raw != path.read_bytes()
    out = runner.invoke(app, ["package", str(path), "-o", str(tmp_path / "k"), "--keep-offline-plan"])
    assert out.exit_code == 2 and out.output.startswith("error: --keep-offline-plan")
    assert len(out.output.strip().splitlines()) == 1 and "does not pass the validator" in out.output
    assert not (tmp_path / "k").exists()


def test_the_real_vela_model_keeps_its_proven_plan(tmp_path):
    path = SHARED_MODELS / "tflm" / "person_detect_vela.tflite"
    if not path.exists():
        pytest.skip("person_detect_vela.tflite not present (../shared/models is absent)")
    model = read_model(path)
    assert unproven(model, existing_plan(model)) is None
    result = package(path, tmp_path / "o", report=False)
    assert result.plan.runtime_arena.head_plan == "the model's own Vela plan"
    assert result.plan.runtime_arena.head_bytes == 74464
    header = (tmp_path / "o" / "person_detect_vela_plan.h").read_text()
    assert header_offsets(header) == list(existing_plan(model).offsets)  # what TFLite Micro uses


def test_a_kernel_not_modelled_is_named_and_the_figure_marked_a_lower_bound(tmp_path):
    # custom_op's MyCustomOp stands for any kernel the tool does not model: its memory only adds.
    from tests.package.support import model_file
    result = runner.invoke(app, ["package", str(model_file("custom_op")), "-o", str(tmp_path / "o"), "--no-verify"])
    assert result.exit_code == 0, result.output
    first, _, split = result.output.splitlines()[:3]
    assert first.startswith("not run on TFLite Micro (--no-verify): declare at least ")
    assert "(host, a lower bound)" in first
    assert "MyCustomOp kernel(s) is not modelled (the runtime may need more)" in split
    assert any(line.startswith("note: custom op MyCustomOp") for line in result.output.splitlines())
    header = (tmp_path / "o" / "custom_op_plan.h").read_text()
    assert "A lower bound: by TFLite Micro's kernels' rules, not run (--no-verify)" in header
    assert "the memory of TFLite Micro's MyCustomOp kernel(s) is not modelled" in header
    assert '#define CUSTOM_OP_ARENA_BOUND "lower"' in header and "#define CUSTOM_OP_ARENA_EXACT 0" in header
    doc = json.loads((tmp_path / "o" / "custom_op_plan.json").read_text())
    assert doc["runtime_arena"]["exact"] is False and doc["runtime_arena"]["bound"] == "lower"
    assert "MyCustomOp" in doc["runtime_arena"]["reason"]
