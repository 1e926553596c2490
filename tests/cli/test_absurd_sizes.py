"""A tensor no device can hold is named, with its size, by every command before any work."""

from __future__ import annotations

import pytest

from fixtures.builder import ModelBuilder
from tests.cli.test_cli_errors import run_cli


def absurd_model(tmp_path):
    m = ModelBuilder()
    g = m.subgraph("main")
    x, y = g.tensor("x", [1, 4]), g.tensor("huge", [2**20, 2**20, 2**20])
    z = g.tensor("z", [1, 4])
    g.op("RELU", [x], [y])
    g.op("RELU", [y], [z])
    g.inputs([x])
    g.outputs([z])
    path = tmp_path / "absurd.tflite"
    path.write_bytes(m.build())
    return path


@pytest.mark.parametrize("command", ["inspect", "plan", "compare", "package", "report"])
def test_every_command_names_the_absurd_tensor_and_its_size(tmp_path, command):
    path = absurd_model(tmp_path)
    extra = {"package": ["-o", str(tmp_path / "out")], "report": ["-o", str(tmp_path / "r.html")],
             "compare": ["--no-runtimes"]}.get(command, [])
    r = run_cli(command, str(path), *extra)
    assert r.returncode == 2, (command, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: absurd.tflite: tensor 1 'huge'"), r.stderr
    assert f"{4 * 2**60:,} B (4.6 EB)" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["absurd.tflite"]  # nothing written


@pytest.mark.parametrize("command", ["inspect", "plan", "package"])
def test_a_bound_that_makes_a_tensor_absurd_is_named(tmp_path, command):
    from tests.package.support import model_file
    extra = ["-o", str(tmp_path / "out")] if command == "package" else []
    r = run_cli(command, str(model_file("dynamic_sequence")), "--dim", "tokens_1=1..100000000", *extra)
    assert r.returncode == 2, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --dim tokens_1=1..100000000: tensor 0 'tokens' "
                                                   "would need 6,400,000,000 B (6.4 GB)"), r.stderr
    assert not (tmp_path / "out").exists()
