"""What `package` writes: the sidecar plan in both forms and `load` reading it back, the
offline-planned .tflite (every original byte kept, one OfflineMemoryAllocation entry), and
byte-identical output on repeat."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import struct

import flatbuffers
import numpy as np
import pytest

from packager.package import plan_flatbuffer, plan_json
from packager.kernels.tflm_offline_plan import METADATA_NAME
from packager.package.offline_plan import read_offline_plan
from packager.package.tflite_patch import set_metadata_buffer
from packager.errors import ModelError, PackagerError, PlanError
from packager.package.build import package
from packager.package.load import PlanFileError, load, parse_plan
from packager.reader import parse_model
from schemas.tflite import Buffer, Model, SubGraph
from tests.conftest import REPO
from tests.package.support import file_of, model_file, packaged


# -- the sidecar plan and load() ----------------------------------------------------------------

@pytest.mark.parametrize("name", ["mobile_block", "while_loop"])
def test_json_and_flatbuffer_forms_hold_the_same_plan_and_load_back(name):
    result = packaged(name)
    from_json = load(file_of(result, "_plan.json"), model_file(name))
    from_fb = load(file_of(result, "_plan.tplan"), model_file(name))
    assert from_json == from_fb == result.plan
    arena = from_json.arenas[0]
    assert arena.offsets.arena_bytes >= arena.offsets.lower_bound > 0
    assert all(t.pass_ == 0 for t in arena.offsets.tensors)


def test_the_plan_says_when_its_shared_objects_are_optimal():
    # mobile_block's positional-maxima bound is out of reach; the integer program proves the
    # best total optimal, and both forms and the header carry that.
    result = packaged("mobile_block")
    objects = result.plan.arenas[0].objects
    assert objects.total_bytes > objects.lower_bound and objects.optimal
    assert json.loads(file_of(result, "_plan.json").read_bytes())["arenas"][0]["objects"]["optimal"]
    assert b"(optimal: no plan is smaller)" in file_of(result, "_plan.h").read_bytes()


def test_the_json_plan_follows_its_json_schema():
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed ('.[test]')")
    schema = json.loads((REPO / "schemas" / "plan.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    for name, semantics in (("mobile_block", "tflm"), ("inplace_candidates", "tflite"),
                            ("while_loop", "ideal")):
        doc = json.loads(file_of(packaged(name, semantics), "_plan.json").read_bytes())
        jsonschema.Draft202012Validator(schema).validate(doc)
    doc["format_version"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


def test_load_refuses_a_model_with_another_hash(tmp_path):
    plan = file_of(packaged("chain"), "_plan.json")
    other = tmp_path / "chain.tflite"
    other.write_bytes(model_file("residual").read_bytes())
    with pytest.raises(PlanFileError, match="is not the model"):
        load(plan, other)
    with pytest.raises(PlanFileError, match="is not the model"):
        load(file_of(packaged("chain"), "_plan.tplan"), other)


def _edited_json(tmp_path, name: str, edit) -> tuple:
    doc = json.loads(file_of(packaged(name), "_plan.json").read_bytes())
    edit(doc)
    path = tmp_path / "edited_plan.json"
    path.write_text(json.dumps(doc))
    return path, model_file(name)


def test_load_refuses_overlapping_offsets(tmp_path):
    def overlap(doc):
        t = doc["arenas"][0]["offsets"]["tensors"]
        entries = range(len(t["index"]))
        a, b = next((a, b) for a in entries for b in entries
                    if t["index"][a] != t["index"][b] and t["offset"][a] != t["offset"][b]
                    and not (t["last_op"][a] < t["first_op"][b] or t["last_op"][b] < t["first_op"][a]))
        t["offset"][b] = t["offset"][a]

    with pytest.raises(PlanError, match="overlap"):
        load(*_edited_json(tmp_path, "mobile_block", overlap))


def test_load_refuses_edited_lifetimes_even_when_consistent(tmp_path):
    """Shortening a lifetime could make an overlap look legal: the records come from the model."""
    def shorten(doc):
        t = doc["arenas"][0]["offsets"]["tensors"]
        k = max(range(len(t["index"])), key=lambda k: t["last_op"][k] - t["first_op"][k])
        t["last_op"][k] = t["first_op"][k]

    with pytest.raises(PlanError, match="does not match the model"):
        load(*_edited_json(tmp_path, "mobile_block", shorten))


def test_load_refuses_a_wrong_arena_size_or_object(tmp_path):
    def shrink(doc):
        doc["arenas"][0]["offsets"]["arena_bytes"] -= 16

    with pytest.raises(PlanError, match="outside|arena"):
        load(*_edited_json(tmp_path, "mobile_block", shrink))

    def share(doc):
        objects = doc["arenas"][0]["objects"]["tensors"]
        objects["object"] = [0] * len(objects["object"])

    with pytest.raises(PlanError, match="share object|does not fit"):
        load(*_edited_json(tmp_path, "mobile_block", share))


def test_load_refuses_damaged_files(tmp_path):
    result = packaged("mobile_block")
    fb = file_of(result, "_plan.tplan").read_bytes()
    cases = {
        "truncated.tplan": fb[: len(fb) // 3],
        "flipped.tplan": fb[:40] + bytes(b ^ 0xFF for b in fb[40:80]) + fb[80:],
        "truncated.json": file_of(result, "_plan.json").read_bytes()[:500],
        "not_a_plan.bin": b"\x00" * 64,
        "other.json": b'{"format": "something-else", "format_version": 1}',
    }
    for file_name, data in cases.items():
        path = tmp_path / file_name
        path.write_bytes(data)
        with pytest.raises(PackagerError):
            load(path, model_file("mobile_block"))
    with pytest.raises(PlanFileError, match="cannot read"):
        load(tmp_path / "missing.json", model_file("mobile_block"))


def test_both_forms_round_trip_through_their_parsers():
    plan = packaged("if_else").plan
    assert parse_plan(plan_flatbuffer.dumps(plan)) == plan
    assert parse_plan(plan_json.dumps(plan)) == plan


# -- the offline-planned .tflite ---------------------------------------------------------------

def test_the_offline_model_keeps_every_original_byte_and_adds_one_entry():
    result = packaged("mobile_block")
    original = model_file("mobile_block").read_bytes()
    packed = file_of(result, ".tflite").read_bytes()
    prefix = len(packed) - len(original)
    assert packed[prefix:] == original and prefix % 64 == 0
    before, after = parse_model(original), parse_model(packed)
    assert after.subgraphs == before.subgraphs and after.signature_defs == before.signature_defs
    assert [n for n, _ in after.metadata] == [n for n, _ in before.metadata] + [METADATA_NAME]
    offsets = read_offline_plan(packed)
    words = np.frombuffer(after.metadata_bytes(METADATA_NAME), "<i4")
    assert list(words[:3]) == [1, 1, len(offsets)]  # version, subgraphs, tensor count
    assert len(offsets) == sum(len(sg.tensors) for sg in before.subgraphs)
    assert all(o == -1 or o % 16 == 0 for o in offsets)
    planned = {t.index: t.offset for t in result.plan.arenas[0].planned if t.kind == "tensor"}
    assert {g: o for g, o in enumerate(offsets) if o >= 0} == planned
    for b in after.buffers:  # constant data stays 16-byte aligned in the file
        assert b.size == 0 or b.offset % 16 == 0


def test_packaging_a_packaged_model_replaces_its_entry(tmp_path):
    first = packaged("if_else")
    again_in = tmp_path / "if_else.tflite"
    again_in.write_bytes(file_of(first, ".tflite").read_bytes())
    again = package(again_in, tmp_path / "again")
    before = parse_model(file_of(first, ".tflite").read_bytes())
    after = parse_model(file_of(again, ".tflite").read_bytes())
    assert after.metadata == before.metadata  # same entry, same buffer index
    assert len(after.buffers) == len(before.buffers)
    assert read_offline_plan(file_of(again, ".tflite").read_bytes()) == read_offline_plan(
        file_of(first, ".tflite").read_bytes())


@pytest.mark.skipif(importlib.util.find_spec("ai_edge_litert") is None,
                    reason="ai-edge-litert is not installed (pip install 'tflpack[runtimes]')")
@pytest.mark.parametrize("name", ["mobile_block", "while_loop", "quantized_int8"])
def test_tflite_verifies_and_runs_the_offline_model_unchanged(name):
    """LiteRT verifies the flatbuffer before it runs it: the patched file must pass."""
    from ai_edge_litert import interpreter as litert

    def outputs(data: bytes) -> list[bytes]:
        it = litert.Interpreter(model_content=data, experimental_op_resolver_type=
                                litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        it.allocate_tensors()
        rng = np.random.default_rng(7)
        for d in it.get_input_details():
            it.set_tensor(d["index"], rng.uniform(-1, 1, d["shape"]).astype(d["dtype"]))
        it.invoke()
        return [it.get_tensor(d["index"]).tobytes() for d in it.get_output_details()]

    packed = file_of(packaged(name), ".tflite").read_bytes()
    assert outputs(packed) == outputs(model_file(name).read_bytes())


def _model_with_external_buffer() -> bytes:
    b = flatbuffers.Builder(256)
    Buffer.BufferStart(b)
    empty = Buffer.BufferEnd(b)
    Buffer.BufferStart(b)
    Buffer.BufferAddOffset(b, 4096)
    Buffer.BufferAddSize(b, 64)
    external = Buffer.BufferEnd(b)
    SubGraph.SubGraphStart(b)
    sg = SubGraph.SubGraphEnd(b)
    Model.ModelStartBuffersVector(b, 2)
    b.PrependUOffsetTRelative(external)
    b.PrependUOffsetTRelative(empty)
    buffers = b.EndVector()
    Model.ModelStartSubgraphsVector(b, 1)
    b.PrependUOffsetTRelative(sg)
    subgraphs = b.EndVector()
    Model.ModelStart(b)
    Model.ModelAddVersion(b, 3)
    Model.ModelAddSubgraphs(b, subgraphs)
    Model.ModelAddBuffers(b, buffers)
    b.Finish(Model.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def test_patching_refuses_what_shifting_would_break():
    with pytest.raises(ModelError, match="outside the flatbuffer"):
        set_metadata_buffer(_model_with_external_buffer(), METADATA_NAME, b"\0" * 16)
    data = model_file("chain").read_bytes()
    size_prefixed = struct.pack("<I", len(data)) + data
    with pytest.raises(ModelError, match="size-prefixed"):
        set_metadata_buffer(size_prefixed, METADATA_NAME, b"\0" * 16)


# -- determinism -------------------------------------------------------------------------------

def test_packaging_twice_gives_byte_identical_files(tmp_path):
    source = model_file("while_loop")
    first = package(source, tmp_path / "a")
    second = package(source, tmp_path / "b")
    third = package(source, tmp_path / "a")  # over its own earlier output
    names = sorted(f.path.name for f in first.files)
    assert names == sorted(f.path.name for f in second.files) == sorted(f.path.name for f in third.files)
    for n in names:
        assert (tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes(), n
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == names  # no temporary left
    assert hashlib.sha256(source.read_bytes()).hexdigest() == first.plan.source.sha256
