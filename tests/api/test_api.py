"""The library API: the figures `package` states, as dataclasses, from a path or the model's bytes."""

from __future__ import annotations

import dataclasses
import json

import pytest
from typer.testing import CliRunner

from packager import api
from packager.cli import app
from packager.errors import PackagerError
from tests.conftest import REPO

MODELS = REPO / "fixtures" / "models"


def test_plan_states_the_figures_package_states(tmp_path):
    r = CliRunner().invoke(app, ["package", str(MODELS / "mobile_block.tflite"), "-o", str(tmp_path),
                                 "--no-verify", "--no-report", "--json"])
    doc = json.loads(r.output)
    f = api.plan(MODELS / "mobile_block.tflite")
    assert (f.source, f.semantics, f.arena_bytes, f.lower_bound) == (doc["source"], doc["semantics"],
                                                                    doc["arena_bytes"], doc["lower_bound"])
    whole = doc["runtime_arena"]
    assert (f.tflm.arena_bytes, f.tflm.head_bytes, f.tflm.tail_bytes, f.tflm.setup_bytes) == (
        whole["arena_bytes"], whole["head_bytes"], whole["tail_bytes"], whole["setup_bytes"])
    # nothing ran either (--no-verify): the same standing, not called exact
    assert (f.tflm.standing, whole["bound"]) == ("unknown", "unknown") and not whole["exact"]
    assert [a.strategy for a in f.arenas] == [a["strategy"] for a in doc["arenas"]]
    assert dataclasses.asdict(f)  # plain dataclasses all the way down


def test_a_model_in_memory_gives_the_same_figures_as_its_file():
    data = (MODELS / "residual.tflite").read_bytes()
    assert api.plan(data, name="residual.tflite") == api.plan(MODELS / "residual.tflite")


def test_standing_says_which_side_of_the_truth():
    assert api.plan(MODELS / "nms.tflite").tflm.standing == "lower"  # an unmodelled kernel only adds
    # a device figure no build of it ran, with a kernel form its build has not proven (float16
    # DEQUANTIZE): either side; chain's forms are all proven on the cortex-m build
    assert api.plan(MODELS / "dequantize_fp16.tflite", target="cortex-m").tflm.standing == "unknown"
    assert api.plan(MODELS / "chain.tflite", target="cortex-m").tflm.standing == "exact"
    assert api.plan(MODELS / "chain.tflite", semantics="tflite").tflm is None


def test_package_writes_the_files_and_returns_their_figures(tmp_path):
    out = api.package((MODELS / "chain.tflite").read_bytes(), tmp_path / "out", name="chain", report=False)
    assert sorted(p.name for p in out.files) == sorted(p.name for p in (tmp_path / "out").iterdir())
    assert "chain_op_resolver.h" in {p.name for p in out.files}
    planned = api.plan(MODELS / "chain.tflite")
    assert dataclasses.replace(out.figures, tflm=None) == dataclasses.replace(planned, tflm=None)
    assert dataclasses.replace(out.figures.tflm, reason="") == dataclasses.replace(planned.tflm, reason="")


def test_bad_input_is_a_packager_error_with_the_commands_message(tmp_path):
    with pytest.raises(PackagerError, match="unknown semantics"):
        api.plan(MODELS / "chain.tflite", semantics="nope")
    with pytest.raises(PackagerError):
        api.plan(b"not a model")
    with pytest.raises(PackagerError, match="no bound"):
        api.plan(MODELS / "dynamic_image.tflite")
    assert api.plan(MODELS / "dynamic_image.tflite", dims=["image_1=8..16", "image_2=8..16"]).arena_bytes > 0


def test_compare_without_runtimes_sets_the_prediction_beside_the_plan():
    c = api.compare(MODELS / "chain.tflite", measure=False)
    assert c.tflm.whole_predicted == api.plan(MODELS / "chain.tflite").tflm.arena_bytes


def test_package_shared_returns_the_figures_the_command_states(tmp_path):
    pair = [MODELS / "chain.tflite", MODELS / "residual.tflite"]
    r = CliRunner().invoke(app, ["package", *map(str, pair), "-o", str(tmp_path / "cli"), "--no-verify",
                                 "--no-report", "--json", "--name", "both"])
    doc = json.loads(r.output)["shared_arena"]
    out = api.package_shared(pair, tmp_path / "api", name="both", report=False)
    assert (out.name, out.target, out.arena_bytes, out.head_bytes, out.tail_bytes, out.binding, out.standing,
            out.reason) == (doc["name"], doc["target"], doc["arena_bytes"], doc["head_bytes"], doc["tail_bytes"],
                            doc["binding"], doc["bound"], doc["reason"])
    assert [(m.source, m.prefix, m.plan_bytes, m.tail_bytes, m.setup_bytes) for m in out.models] == [
        (m["file"], m["prefix"], m["plan_bytes"], m["tail_bytes"], m["setup_bytes"]) for m in doc["models"]]
    assert out.models[0].figures == api.package(pair[0], tmp_path / "one", report=False).figures
    assert sorted(p.name for p in out.files) == sorted(p.name for p in (tmp_path / "api").iterdir())
    assert dataclasses.asdict(out)
    with pytest.raises(PackagerError, match="list of model paths"):
        api.package_shared(MODELS / "chain.tflite", tmp_path / "x")
