"""TFLite's arenas after one Invoke, measured (a forked copy of the probe runs the model on zeroed
inputs) and predicted, under both versions: a WHILE releases its condition's and body's arenas,
the ops past a dynamic output are placed while running, and an IF says why it cannot be exact."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fixtures.runtime_cases import CASES_DIR
from fixtures.write_models import DEFAULT_DIR
from packager.cli import app
from packager.compare.comparison import AFTER_ALLOCATE, compare_tflite, planned
from packager.compare.tflite_runtime import TfliteMeasurement, measure_tflite
from packager.runtimes.tflite_versions import LITERT, SETUP_214, TFLITE_RUNTIME, choice
from packager.reader import read_model

RUNTIMES = [LITERT, TFLITE_RUNTIME]


def _installed(runtime: str) -> None:
    which = choice(runtime)
    if not which.installed:
        pytest.skip(which.missing_reason if runtime == LITERT
                    else f"tflite-runtime 2.14 has no environment here: {SETUP_214}")


@functools.cache
def compared(path: Path, runtime: str):
    model = read_model(path)
    return model, compare_tflite(path, model, planned(model, "tflite"), True, runtime)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_while_releases_its_subgraphs_arenas_after_invoke(runtime):
    _installed(runtime)
    model, r = compared(DEFAULT_DIR / "while_loop.tflite", runtime)
    assert r.status == "measured" and not r.invoke_error, r.invoke_error
    assert r.measured_when == AFTER_ALLOCATE
    cond, body = [c for c in r.after_invoke_checks if c.subgraph in (1, 2)]
    assert cond.measured == cond.predicted == 0 and body.measured == body.predicted == 0
    assert r.after_invoke_exact, r.after_invoke_why_not_exact
    assert r.measured_after_invoke == r.predicted_after_invoke < r.measured


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_ops_past_a_dynamic_output_are_placed_while_running(runtime):
    _installed(runtime)
    path = CASES_DIR / "shape_arithmetic.tflite"
    model = read_model(path)
    result = measure_tflite(path, model, runtime=runtime)
    assert isinstance(result, TfliteMeasurement) and result.after_invoke is not None
    last_output = model.main.operators[-1].outputs[0]
    assert last_output in result.arenas[0].unallocated  # not prepared by allocate_tensors()
    assert last_output in result.after_invoke[0].offsets  # placed in the arena while running
    _, r = compared(path, runtime)
    assert r.after_invoke_exact, r.after_invoke_why_not_exact


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_an_if_says_why_its_arenas_after_invoke_cannot_be_exact(runtime):
    _installed(runtime)
    _, r = compared(DEFAULT_DIR / "if_else.tflite", runtime)
    assert r.measured_after_invoke is not None
    assert r.after_invoke_exact is False and "branch that ran" in r.after_invoke_why_not_exact
    branches = [c for c in r.after_invoke_checks if c.subgraph in (1, 2)]
    assert sorted(c.measured == 0 for c in branches) == [False, True]  # one ran and was released


def test_compare_json_says_which_figure_is_which():
    _installed(LITERT)
    result = CliRunner().invoke(app, ["compare", str(DEFAULT_DIR / "while_loop.tflite"), "--json",
                                      "--runtime", "litert"])
    assert result.exit_code == 0, result.output
    (data,) = json.loads(result.output)
    t = data["tflite"]
    assert t["measured_when"] == "after allocate_tensors()"
    assert t["measured_after_invoke"] < t["measured"] and t["after_invoke_exact"] is True
    assert [c["subgraph"] for c in t["after_invoke_checks"]] == [0, 1, 2]
