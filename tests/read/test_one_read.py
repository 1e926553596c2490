"""One read of the model per command: `package` (planning, the check of the plan, the files and
their read-back checks, the verification on TFLite Micro) and `plan`, `inspect` and `report`
parse the input file once. The read-back checks read the files written, never the input again;
a stored -1 given a size by --dim has only the tensors written to read again."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import packager.reader as reader
from fixtures.stored_shapes import STORED_SHAPE_BUILDERS
from packager.cli import app
from packager.package.stored_shapes import with_stored_sizes
from tests.package.support import model_file

runner = CliRunner()


@pytest.fixture
def parses(monkeypatch):
    """The size of every file the reader parses, in order."""
    seen: list[int] = []
    real = reader._Parser.model

    def counted(self):
        seen.append(len(self.data))
        return real(self)
    monkeypatch.setattr(reader._Parser, "model", counted)
    return seen


@pytest.mark.parametrize("name", ["mobile_block", "while_loop", "quantized_int8", "residual"])
@pytest.mark.parametrize("semantics", ["tflm", "tflite"])
def test_package_parses_the_model_once(name, semantics, tmp_path, parses):
    path = model_file(name)
    result = runner.invoke(app, ["package", str(path), "-o", str(tmp_path / "out"), "-s", semantics,
                                 "--no-verify", "-q"])
    assert result.exit_code == 0, result.output
    assert parses == [path.stat().st_size]


def test_package_with_verification_parses_the_model_once(tmp_path, parses):
    pytest.importorskip("tflite_micro", reason="tflite-micro is not installed (pip install '.[runtimes]')")
    path = model_file("mobile_block")
    result = runner.invoke(app, ["package", str(path), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 0, result.output
    assert parses == [path.stat().st_size]


@pytest.mark.parametrize("command", [["plan"], ["plan", "--strategy", "all"], ["inspect", "--records"],
                                     ["report", "-o", "{out}", "--no-measure"]])
def test_other_commands_parse_the_model_once(command, tmp_path, parses):
    path = model_file("mobile_block")
    args = [a.replace("{out}", str(tmp_path / "report.html")) for a in command]
    result = runner.invoke(app, [args[0], str(path), *args[1:]])
    assert result.exit_code == 0, result.output
    assert parses == [path.stat().st_size]


@pytest.mark.parametrize("name, dim", [("stored_unknown_batch", "x_0=3"), ("stored_unknown_sequence", "tokens_1=5")])
def test_sizes_written_into_a_stored_minus_one_give_the_model_a_full_parse_gives(name, dim, parses):
    model = reader.parse_model(STORED_SHAPE_BUILDERS[name]().build())
    fixed = with_stored_sizes(model, "tflm", (dim,)).model
    assert len(parses) == 1  # the written tensors are read again, not the model
    assert fixed.raw != model.raw and fixed == reader.parse_model(fixed.raw)
    assert not any(t.unknown_axes for t in fixed.main.tensors)
