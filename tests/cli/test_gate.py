"""`tflpack gate NEW --baseline OLD`: exit 3 when the arena grew, printing both figures."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from packager.cli import app
from tests.conftest import REPO

MODELS = REPO / "fixtures" / "models"
runner = CliRunner()


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    out = {}
    for name, semantics in (("chain", "tflm"), ("residual", "tflm"), ("chain", "tflite")):
        folder = tmp_path_factory.mktemp(f"{name}-{semantics}")
        r = runner.invoke(app, ["package", str(MODELS / f"{name}.tflite"), "-o", str(folder), "-s", semantics,
                                "--no-verify", "--no-report", "-q"])
        assert r.exit_code == 0, r.output
        out[name, semantics] = folder / f"{name}_plan.json"
    return out


def test_a_smaller_or_equal_arena_passes_and_a_larger_one_fails_with_exit_3(plans):
    small, large = plans["chain", "tflm"], plans["residual", "tflm"]
    r = runner.invoke(app, ["gate", str(small), "--baseline", str(large)])
    assert r.exit_code == 0, r.output
    assert "TFLite Micro arena: 18,384 B (new, chain.tflite) vs 27,936 B (baseline, residual.tflite)" in r.output
    assert runner.invoke(app, ["gate", str(small), "--baseline", str(small)]).exit_code == 0
    r = runner.invoke(app, ["gate", str(large), "--baseline", str(small)])
    assert r.exit_code == 3
    assert "+9,552 B" in r.output and "error: the TFLite Micro arena grew by 9,552 B" in r.output
    # the FlatBuffer form of the plan reads the same
    r = runner.invoke(app, ["gate", str(large.with_suffix(".tplan")), "--baseline", str(small)])
    assert r.exit_code == 3


def test_plans_of_other_semantics_are_not_compared(plans):
    r = runner.invoke(app, ["gate", str(plans["chain", "tflite"]), "--baseline", str(plans["chain", "tflm"])])
    assert r.exit_code == 2 and "not comparable" in r.output


def test_a_file_that_is_not_a_plan_is_one_line(plans, tmp_path):
    bad = tmp_path / "x_plan.json"
    bad.write_text('{"format": "something else"}')
    for path in (bad, tmp_path / "missing.json", MODELS / "chain.tflite"):
        r = runner.invoke(app, ["gate", str(path), "--baseline", str(plans["chain", "tflm"])])
        assert r.exit_code == 2 and r.output.startswith("error: ") and "Traceback" not in r.output, r.output


@pytest.fixture(scope="module")
def split_plans(tmp_path_factory):
    out = {}
    for name in ("op_zoo", "residual", "chain"):
        folder = tmp_path_factory.mktemp(f"{name}-regions")
        r = runner.invoke(app, ["package", str(MODELS / f"{name}.tflite"), "-o", str(folder), "--no-verify",
                                "--no-report", "-q", "--regions", "non-persistent=.dtcm:1M,persistent=.sram:1M"])
        assert r.exit_code == 0, r.output
        out[name] = folder / f"{name}_plan.json"
    return out


def test_a_region_that_grows_fails_even_when_the_whole_arena_shrinks(split_plans):
    # op_zoo's whole arena is far smaller than residual's, its persistent buffer is larger
    r = runner.invoke(app, ["gate", str(split_plans["op_zoo"]), "--baseline", str(split_plans["residual"])])
    assert r.exit_code == 3, r.output
    assert "TFLite Micro arena: 5,952 B (new, op_zoo.tflite) vs 27,936 B (baseline, residual.tflite)" in r.output
    assert "persistent buffer (.sram): 3,888 B (new, op_zoo.tflite) vs 3,376 B (baseline, residual.tflite): " \
           "+512 B (+15.2%) GREW" in r.output
    assert "error: the persistent buffer (.sram) grew by 512 B" in r.output
    # the FlatBuffer form carries the regions too
    r = runner.invoke(app, ["gate", str(split_plans["op_zoo"].with_suffix(".tplan")),
                            "--baseline", str(split_plans["residual"].with_suffix(".tplan"))])
    assert r.exit_code == 3 and "persistent buffer (.sram)" in r.output
    r = runner.invoke(app, ["gate", str(split_plans["chain"]), "--baseline", str(split_plans["residual"])])
    assert r.exit_code == 0 and "non-persistent buffer (.dtcm): 16,384 B" in r.output, r.output


def test_regions_are_gated_only_when_both_plans_have_them(plans, split_plans):
    r = runner.invoke(app, ["gate", str(split_plans["op_zoo"]), "--baseline", str(plans["residual", "tflm"])])
    assert r.exit_code == 0 and "buffer" not in r.output, r.output
