"""A constant stored shorter than its shape makes a runtime read past its data, so outputs cannot be
compared run against run: `package` says the plan is unverified and why, instead of blaming the
plan for outputs that differ (TFLite Micro gave different outputs on the same bytes)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fixtures.builder import ModelBuilder
from packager.package.constant_data import short_constant
from packager.reader import parse_model
from tests.conftest import REPO

MODELS = sorted((REPO / "fixtures" / "models").glob("*.tflite"))


def _fully_connected(weight_bytes: int, custom: bool = False) -> bytes:
    m = ModelBuilder(description="short constant")
    sg = m.subgraph("main")
    x = sg.tensor("x", [1, 8])
    w = sg.tensor("w", [4, 8], buffer=m.buffer(bytes(weight_bytes)))
    y = sg.tensor("y", [1, 4])
    if custom:
        sg.op("MY_KERNEL", [x, w], [y], custom=True)
    else:
        sg.op("FULLY_CONNECTED", [x, w, -1], [y], options=dict(keep_num_dims=False))
    sg.inputs([x])
    sg.outputs([y])
    return m.build()


def test_a_constant_shorter_than_its_shape_is_named():
    line = short_constant(parse_model(_fully_connected(16)))
    assert line == "constant tensor 'w' stores 16 B but its shape [4, 8] needs 128 B: a runtime reads past its data"


def test_a_whole_constant_and_a_custom_kernels_input_are_not():
    assert short_constant(parse_model(_fully_connected(128))) is None
    assert short_constant(parse_model(_fully_connected(16, custom=True))) is None


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_no_fixture_model_stores_a_short_constant(path):
    assert short_constant(parse_model(path.read_bytes())) is None


def test_package_writes_the_plan_and_says_why_it_is_unverified(tmp_path):
    model = tmp_path / "fc_short.tflite"
    model.write_bytes(_fully_connected(16))
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, str(REPO / "cli.py"), "package", str(model), "-o", str(out)],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "unverified: constant tensor 'w' stores 16 B but its shape [4, 8] needs 128 B" in run.stdout + run.stderr
    assert (out / "fc_short_plan.h").exists()
