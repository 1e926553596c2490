"""A stored shape with -1 (fixtures/stored_shapes.py): TFLite Micro runs the stored shape, so the
size must come from `--dim NAME=N`. Without it every command fails with one line naming the tensor
and the option; with it, `package` writes the size into the packaged model, plans that shape, runs
it on TFLite Micro and says which shape it planned. Never a planner's "malformed record"."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fixtures.builder import ModelBuilder
from fixtures.stored_shapes import STORED_SHAPE_BUILDERS
from packager.cli import app
from packager.package.build import package
from packager.reader import parse_model, read_model

runner = CliRunner()
FIXES = {"stored_unknown_batch": ("x", "x_0", [3, 8]), "stored_unknown_sequence": ("tokens", "tokens_1", [1, 5, 16])}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stored")
    paths = {}
    for name, build in STORED_SHAPE_BUILDERS.items():
        paths[name] = folder / f"{name}.tflite"
        paths[name].write_bytes(build().build())
    return paths


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


def one_line_error(code: int, text: str) -> str:
    assert code == 2, text
    assert text.startswith("error: ") and len(text.strip().splitlines()) == 1, text
    assert "malformed" not in text and "Traceback" not in text
    return text


def test_the_reader_keeps_a_stored_minus_one_as_an_unknown_size(files):
    model = read_model(files["stored_unknown_sequence"])
    tokens = model.main.tensors[model.main.inputs[0]]
    assert tokens.unknown_axes == (1,)
    assert tokens.shape_signature == (1, -1, 16) and tokens.is_dynamic_shape


@pytest.mark.parametrize("name", sorted(FIXES))
@pytest.mark.parametrize("command", ["package", "plan"])
def test_without_dim_it_names_the_tensor_and_the_option(files, tmp_path, name, command):
    tensor, symbol, _ = FIXES[name]
    args = [command, files[name]] + (["-o", tmp_path / "out"] if command == "package" else [])
    text = one_line_error(*invoke(*args))
    assert f"'{tensor}'" in text and f"--dim {symbol}=N" in text
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", sorted(FIXES))
@pytest.mark.parametrize("semantics", ["tflm", "tflite"])
def test_inspect_names_the_exact_dim_form(files, name, semantics):
    """inspect reads the model without a size (it plans nothing at that axis) and says which
    --dim gives one, in the form package and plan ask for: one size, NAME=N."""
    tensor, symbol, _ = FIXES[name]
    code, text = invoke("inspect", files[name], "-s", semantics)
    assert code == 0, text
    line = " ".join(text.split())  # the console wraps long lines
    assert f"{symbol}: input '{tensor}' axis" in line
    assert f"unbound: the file stores '{tensor}' [" in line and f"give --dim {symbol}=N (the size it runs at)" in line
    assert "(give --dim)" not in line


def test_tflite_micro_takes_one_size_not_a_range(files, tmp_path):
    text = one_line_error(*invoke("package", files["stored_unknown_batch"], "-o", tmp_path / "out",
                                  "--dim", "x_0=1..8", "--no-verify"))
    assert "one stored shape" in text and "--dim x_0=N" in text
    # TFLite resizes at run time: there a range plans every batch up to 8.
    code, text = invoke("plan", files["stored_unknown_batch"], "--semantics", "tflite", "--dim", "x_0=1..8")
    assert code == 0, text


@pytest.mark.parametrize("name", sorted(FIXES))
def test_with_dim_it_packages_the_shape_it_names(files, tmp_path, name):
    tensor, symbol, shape = FIXES[name]
    n = shape[int(symbol.rsplit("_", 1)[1])]
    code, text = invoke("package", files[name], "-o", tmp_path / "out", "--dim", f"{symbol}={n}", "--no-verify")
    assert code == 0, text
    assert f"--dim {symbol}={n}: '{tensor}' " in text and f"as {shape}" in text
    packed = read_model(tmp_path / "out" / f"{name}.tflite")
    assert packed.main.tensors[packed.main.inputs[0]].shape == tuple(shape)
    assert not any(t.unknown_axes for t in packed.main.tensors)


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_packaged_shape_runs_on_tflite_micro(files, tmp_path, name):
    pytest.importorskip("tflite_micro", reason="tflite-micro is not installed (pip install '.[runtimes]')")
    _, symbol, shape = FIXES[name]
    n = shape[int(symbol.rsplit("_", 1)[1])]
    result = package(files[name], tmp_path / "out", dims=(f"{symbol}={n}",), verify=True, report=False)
    assert result.notes[0].startswith("verified on tflite-micro"), result.notes
    assert "runs in " in result.notes[0] and "not in 16 B less" in result.notes[0]


def test_other_negative_sizes_are_refused_in_plain_words(tmp_path):
    m = ModelBuilder(description="negative")
    g = m.subgraph("main")
    x = g.tensor("x", [-3, 4])
    y = g.tensor("y", [-3, 4])
    g.op("RELU", [x], [y])
    g.inputs([x])
    g.outputs([y])
    (tmp_path / "negative.tflite").write_bytes(m.build())
    with pytest.raises(Exception, match=r"tensor 0 'x': negative dimension in shape \[-3, 4\]"):
        parse_model((tmp_path / "negative.tflite").read_bytes())
    text = one_line_error(*invoke("package", tmp_path / "negative.tflite", "-o", tmp_path / "out"))
    assert "only -1" in text
