"""Dynamic shapes ask only what they must: symbols that follow from others are derived, only free
input dimensions are asked for, and bounds the graph contradicts are refused in one line."""

from __future__ import annotations

import json

import pytest

from packager.dynamic.shapes import DimError, analyse, bounds_of, parse_dim, plan_passes
from packager.dynamic.symbolic import evaluate
from packager.lifetimes import model_lifetimes
from packager.reader import parse_model
from tests.cli.test_cli_errors import run_cli
from tests.dynamic.convnext_models import convnext_block
from tests.dynamic.sequence_models import sequence_fixed, sequence_reshapes


def write(tmp_path, name, data):
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(data)
    return path


def test_reshape_outputs_are_derived_and_only_the_input_axis_is_asked(tmp_path):
    shapes = analyse(parse_model(sequence_reshapes()))
    assert [(s.name, s.source) for s in shapes.symbols] == [("tokens_1", "input 'tokens' axis 1")]
    path = write(tmp_path, "seq", sequence_reshapes())
    r = run_cli("package", str(path), "-o", str(tmp_path / "out"))
    assert r.returncode == 2 and not (tmp_path / "out").exists()
    assert r.stderr.strip() == ("error: symbol 'tokens_1' (input 'tokens' axis 1) has no bound: "
                                "give --dim tokens_1=MIN..MAX")


@pytest.mark.parametrize("command", ["plan", "package", "inspect"])
def test_a_bound_the_graph_contradicts_is_refused_naming_the_implied_range(tmp_path, command):
    path = write(tmp_path, "seq", sequence_reshapes())
    extra = ["-o", str(tmp_path / "out")] if command == "package" else []
    r = run_cli(command, str(path), "--dim", "tokens_1=1..3", *extra)
    assert r.returncode == 2, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --dim tokens_1=1..3 contradicts the graph"), r.stderr
    assert "'groups'" in lines[0] and "the graph implies tokens_1 >= 4" in lines[0]
    assert not (tmp_path / "out").exists()
    # A range whose smallest values the graph cannot take is refused too: the user learns the range.
    r = run_cli(command, str(path), "--dim", "tokens_1=1..64", *extra)
    assert r.returncode == 2 and "would be 0 at tokens_1 = 1" in r.stderr
    assert "the graph implies tokens_1 >= 4" in r.stderr and not (tmp_path / "out").exists()
    assert run_cli(command, str(path), "--dim", "tokens_1=4..64", *extra).returncode == 0


def test_a_symbol_the_graph_fixes_is_not_asked_and_other_values_are_refused(tmp_path):
    shapes = analyse(parse_model(sequence_fixed()))
    assert bounds_of(shapes, []) == {"tokens_1": (4, 4)}
    with pytest.raises(DimError, match=r"--dim tokens_1=1\.\.8 contradicts the graph: .*so tokens_1 = 4$"):
        bounds_of(shapes, [parse_dim("tokens_1=1..8")])
    path = write(tmp_path, "fixed", sequence_fixed())
    r = run_cli("package", str(path), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    r = run_cli("plan", str(path), "--dim", "tokens_1=5")
    assert r.returncode == 2 and "so tokens_1 = 4" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_the_plan_holds_in_the_real_runtime_and_no_planned_size_is_zero():
    litert = pytest.importorskip("ai_edge_litert.interpreter",
                                 reason="TFLite runtime not installed (pip install '.[runtimes]')")
    from tests.dynamic.test_dynamic import _run

    data = sequence_reshapes()
    model = parse_model(data)
    shapes = analyse(model)
    bounds = bounds_of(shapes, [parse_dim("tokens_1=4..32")])
    (arena,) = model_lifetimes(model, "tflite", plan_dynamic=True)
    pp = plan_passes(arena, shapes, bounds)
    planned = {r.tensor: r.size for r in pp.lifetimes.records}
    assert planned and min(planned.values()) > 0
    for seq in (4, 12, 32):
        real = _run(data, {"tokens": [1, seq, 16]}, seed=seq)
        for t, expr in shapes.sizes.items():
            assert real[t][0] == evaluate(expr, {"tokens_1": seq}), (t, seq)
            if t in planned:
                assert real[t][0] <= planned[t], (t, seq)
    assert litert is not None


def test_a_convnext_block_asks_only_for_its_batch(tmp_path):
    # Keras LayerNormalization, Dense on 4-D tensors (tf.tensordot: SHAPE -> GATHER -> REDUCE_PROD
    # -> PACK -> RESHAPE) and Reshape, as the converter writes them for a batch of -1: every
    # RESHAPE's dimensions follow from the batch, so the batch is the one thing asked.
    shapes = analyse(parse_model(convnext_block()))
    assert [s.name for s in shapes.symbols] == ["image_0"]
    path = write(tmp_path, "convnext", convnext_block())
    r = run_cli("inspect", str(path), "--json")
    assert [s["name"] for s in json.loads(r.stdout)["symbols"]] == ["image_0"], r.stderr
    r = run_cli("plan", str(path), "--dim", "image_0=1..4", "--json")
    assert r.returncode == 0, r.stderr
    assert list(json.loads(r.stdout)["arenas"][0]["dynamic"]["bounds"]) == ["image_0"]
    r = run_cli("package", str(path), "--dim", "image_0=1..4", "-s", "tflite", "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr


def test_the_convnext_blocks_sizes_are_the_real_runtimes():
    litert = pytest.importorskip("ai_edge_litert.interpreter",
                                 reason="TFLite runtime not installed (pip install '.[runtimes]')")
    from tests.dynamic.test_dynamic import _run

    data = convnext_block()
    shapes = analyse(parse_model(data))
    for batch in (1, 2, 5):
        real = _run(data, {"image": [batch, 4, 4, 3]}, seed=batch)
        for t, expr in shapes.sizes.items():
            assert real[t][0] == evaluate(expr, {"image_0": batch}), (t, batch)
    assert litert is not None
