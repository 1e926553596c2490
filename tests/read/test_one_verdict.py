"""One reader verdict for every command: a file the reader accepts is one every command's rules can
read, and one it refuses is refused by every command in the same one line (exit 2)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from fixtures.builder import ModelBuilder
from tests.conftest import REPO

COMMANDS = (["inspect"], ["plan"], ["package", "--no-verify", "--no-report", "-o"])


def verdicts(path, tmp_path) -> list[tuple[int, str]]:
    """(exit code, stderr) of inspect, plan and package on one file, in child processes."""
    out = []
    for command in COMMANDS:
        args = [*command, str(tmp_path / "out")] if command[0] == "package" else command
        done = subprocess.run([sys.executable, str(REPO / "cli.py"), args[0], str(path), *args[1:]],
                              capture_output=True, text=True, cwd=REPO, timeout=300)
        out.append((done.returncode, done.stderr))
    return out


def _svdf(inputs: int, weights_shape: list[int]) -> bytes:
    m = ModelBuilder()
    g = m.subgraph("main")
    x = g.tensor("x", [1, 8])
    wf = g.const("weights_feature", np.ones(weights_shape, np.float32))
    wt = g.const("weights_time", np.ones([4, 5], np.float32))
    b = g.const("bias", np.ones([2], np.float32))
    state = g.tensor("state", [1, 20], is_variable=True)
    y = g.tensor("y", [1, 2])
    g.op("SVDF", [x, wf, wt, b, state][:inputs], [y], options_table="SVDFOptions",
         options=dict(rank=2, fused_activation_function="NONE"))
    g.inputs([x])
    g.outputs([y])
    return m.build()


def _lstm(weight_rank: int) -> bytes:
    m = ModelBuilder()
    g = m.subgraph("main")
    x = g.tensor("x", [1, 6, 8])
    w = [g.const(f"w{k}", np.ones([12, 8] if weight_rank == 2 else [96], np.float32)) for k in range(8)]
    bias = [g.const(f"b{k}", np.ones([12], np.float32)) for k in range(4)]
    h, c = g.tensor("h", [1, 12], is_variable=True), g.tensor("c", [1, 12], is_variable=True)
    y = g.tensor("y", [1, 6, 12])
    g.op("UNIDIRECTIONAL_SEQUENCE_LSTM", [x, *w, -1, -1, -1, *bias, -1, -1, h, c, -1, -1, -1, -1], [y],
         options_table="UnidirectionalSequenceLSTMOptions",
         options=dict(fused_activation_function="TANH", cell_clip=0.0, proj_clip=0.0, time_major=False))
    g.inputs([x])
    g.outputs([y])
    return m.build()


def _conv_without_filter() -> bytes:
    m = ModelBuilder()
    g = m.subgraph("main")
    x, y = g.tensor("x", [1, 4, 4, 3]), g.tensor("y", [1, 4, 4, 2])
    g.op("CONV_2D", [x], [y], options=dict(padding="SAME", stride_w=1, stride_h=1))
    g.inputs([x])
    g.outputs([y])
    return m.build()


def _corrupt_options() -> bytes:
    """A model whose SUM's options table says its field table lies far beyond the file: only a
    command that reads that option would notice, unless the reader checks every table."""
    from schemas.tflite.Model import Model as FbModel
    m = ModelBuilder()
    g = m.subgraph("main")
    x, y = g.tensor("x", [1, 4, 4, 3]), g.tensor("y", [1, 3])
    axes = g.const("axes", np.array([1, 2], np.int32))
    g.op("SUM", [x, axes], [y], options=dict(keep_dims=False))
    g.inputs([x])
    g.outputs([y])
    data = bytearray(m.build())
    table = FbModel.GetRootAs(bytes(data), 0).Subgraphs(0).Operators(0).BuiltinOptions().Pos
    data[table:table + 4] = (-0x10000000).to_bytes(4, "little", signed=True)  # vtable far past the end
    return bytes(data)


@pytest.mark.parametrize("name, data, words", [
    ("svdf_two_inputs", lambda: _svdf(2, [4, 8]), "operator 0 (SVDF) has no input 2"),
    ("svdf_rank1_weights", lambda: _svdf(5, [32]), "operator 0 (SVDF): input 1 has 1 dimensions"),
    ("lstm_rank1_weights", lambda: _lstm(1), "operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM): input 4 has 1 dimensions"),
    ("conv_without_filter", _conv_without_filter, "operator 0 (CONV_2D) has no input 1"),
    ("corrupt_options", _corrupt_options, "the ReducerOptions of subgraph 0 operator 0 (SUM)"),
])
def test_a_model_no_rule_can_read_is_refused_alike_by_every_command(tmp_path, name, data, words):
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(data())
    results = verdicts(path, tmp_path)
    for (code, err), command in zip(results, COMMANDS):
        assert "Traceback" not in err, (command, err)
        assert code == 2 and len(err.splitlines()) == 1 and err.startswith(f"error: {path.name}: "), (command, err)
        assert words in err, (command, err)
    assert len({err for _, err in results}) == 1, results  # the same line from every command
    assert not (tmp_path / "out").exists()


def test_the_models_these_are_made_from_are_read_by_every_command(tmp_path):
    """The refusals above come from the damage, not from the op: the intact models pass."""
    for name, data in (("svdf", _svdf(5, [4, 8])), ("lstm", _lstm(2))):
        path = tmp_path / f"{name}.tflite"
        path.write_bytes(data)
        assert [code for code, _ in verdicts(path, tmp_path / name)] == [0, 0, 0], name
