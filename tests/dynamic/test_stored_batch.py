"""A batch that is -1 only in shape_signature is planned at the stored shape by every command, as
`package` does, and each says so; --dim plans a range; a truly dynamic shape still asks."""

from __future__ import annotations

import json

import pytest

from fixtures.builder import ModelBuilder
from fixtures.catalog import CATALOG
from fixtures.layers import Layers
from fixtures.stored_shapes import STORED_SHAPE_BUILDERS
from packager.arenas import plan_model
from packager.dynamic.stored_batch import stored_batch
from packager.reader import parse_model
from tests.cli.test_cli_errors import run_cli
from tests.conftest import SHARED_MODELS
from tests.dynamic.convnext_models import convnext_block

HELLO_WORLD = SHARED_MODELS / "tflm" / "hello_world_int8.tflite"


def write(tmp_path, name, data):
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(data)
    return path


def _models(tmp_path):
    yield write(tmp_path, "dynamic_batch", CATALOG["dynamic_batch"]()), "image_0"
    if HELLO_WORLD.exists():  # TFLite Micro's own example, as its converter wrote it
        yield HELLO_WORLD, "serving_default_dense_input_0_0"


@pytest.mark.parametrize("command", [("plan",), ("plan", "-s", "tflm"), ("inspect",), ("report",)])
def test_every_command_plans_a_signature_only_batch_at_the_stored_shape_and_says_so(tmp_path, command):
    for path, symbol in _models(tmp_path):
        extra = ("-o", str(tmp_path / "r.html")) if command[0] == "report" else ()
        r = run_cli(*command, str(path), *extra)
        assert r.returncode == 0, r.stderr
        notes = [line for line in r.stdout.splitlines() if line.startswith("note: dynamic batch")]
        assert len(notes) == 1 and "runs the stored shape" in notes[0], r.stdout
        assert f"give --dim {symbol}=MIN..MAX to plan for other batches" in notes[0]
        r = run_cli(*command, str(path), *extra, "--json")
        field = json.loads(r.stdout)["stored_shape"]
        assert [(d["symbol"], d["size"]) for d in field["dimensions"]] == [(symbol, 1)]
        assert field["range"].startswith(f"--dim {symbol}=MIN..MAX")
        # --dim plans the range instead, and says nothing of the stored shape.
        r = run_cli(*command, str(path), *extra, "--dim", f"{symbol}=1..4", "--json")
        assert r.returncode == 0 and "stored_shape" not in json.loads(r.stdout), r.stderr


@pytest.mark.parametrize("semantics", ["tflite", "tflm", "ideal"])
def test_the_stored_shape_plan_is_the_plan_at_the_stored_batch(semantics):
    """The stored batch is 1 here: the plan is the one --dim NAME=1 gives, and a range is larger."""
    for data, symbol in ((CATALOG["dynamic_batch"](), "image_0"), (convnext_block(), "image_0")):
        model = parse_model(data)
        stored, at_one, wide = ([p.result.best_offsets.plan.arena for p in plan_model(model, semantics, "greedy_by_size", dims)]
                                for dims in ((), (f"{symbol}=1",), (f"{symbol}=1..4",)))
        assert stored == at_one and all(w > s for w, s in zip(wide, stored))


def test_placeholder_stored_sizes_are_sized_from_the_batch():
    # The converter stores 1 for every -1: the tensordot RESHAPE to [batch*H*W, C] is stored
    # [1, 1], 4 B where batch 1 needs 512 B. The stored batch gives the sizes, not the file.
    model = parse_model(convnext_block())
    batch = stored_batch(model, ())
    assert batch is not None and batch.placeholders > 0
    rows = next(t for t in model.main.tensors if t.name == "reshape_2")
    assert rows.nbytes == 4 and batch.shapes.sizes[rows.index].evaluate(dict(image_0=1)) == 512
    (arena,) = plan_model(model, "tflite", "greedy_by_size")
    planned = {r.tensor: r.size for r in arena.lifetimes.records}
    assert planned[rows.index] == 512


def _batch_then_custom_op() -> bytes:
    """A batch -1 only in the signature, then a custom op whose output length is known only once
    it has run."""
    m = ModelBuilder("batch then custom op")
    nn = Layers(m.subgraph("main"), seed=7)
    x = nn.input("x", [-1, 8])
    h = nn.tensor("picked", [-1])
    nn.g.op("MyCustomOp", [x], [h], custom=True, custom_options=b"\x01")
    y = nn.unary("RELU", h)
    nn.g.inputs([x])
    nn.g.outputs([y])
    return m.build()


def test_a_dynamic_stored_shape_still_asks_for_dim(tmp_path):
    cases = {
        # a size known only once an op has run
        "custom": (_batch_then_custom_op(), "--dim x_0=MIN..MAX (and 1 more)"),
        "dynamic_image": (CATALOG["dynamic_image"](), "--dim image_1=MIN..MAX"),  # not the batch
        "dynamic_sequence": (CATALOG["dynamic_sequence"](), "--dim tokens_1=MIN..MAX"),
        # -1 in the stored shape itself: no size to plan at
        "stored_unknown_batch": (STORED_SHAPE_BUILDERS["stored_unknown_batch"]().build(), "--dim x_0=N"),
    }
    for name, (data, asked) in cases.items():
        path = write(tmp_path, name, data)
        assert stored_batch(parse_model(data), ()) is None, name
        for command in (("plan",), ("plan", "-s", "tflm")):
            r = run_cli(*command, str(path))
            assert r.returncode == 2 and asked in r.stderr, (name, r.stderr)
