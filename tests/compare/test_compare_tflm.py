"""TFLite Micro's head, measured from its allocation recording in a child process, against our
prediction: tflm lifetimes, the kernels' scratch requests and the GreedyMemoryPlanner."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from fixtures.catalog import RUNS_IN_TFLITE, RUNS_IN_TFLM
from fixtures.write_models import DEFAULT_DIR
from packager.kernels.tflm_head import predict_tflm
from packager.reader import read_model
from packager.runtimes.tflm import TflmMeasurement, measure_tflm
from packager.runtimes.child import Unavailable
from tests.conftest import shared_model_path

pytest.importorskip("tflite_micro",
                    reason="tflite-micro is not installed (pip install '.[runtimes]')")

BOTH_RUN = sorted(RUNS_IN_TFLITE & RUNS_IN_TFLM)


@functools.cache
def measured(path: str):
    model = read_model(path)
    return model, measure_tflm(Path(path), model)


@pytest.mark.parametrize("name", BOTH_RUN)
def test_fixture_heads_are_predicted_exactly(name):
    model, result = measured(str(DEFAULT_DIR / f"{name}.tflite"))
    assert isinstance(result, TflmMeasurement), result
    prediction = predict_tflm(model)
    assert not prediction.uncovered_ops
    assert result.head == prediction.head


@pytest.mark.parametrize("name", ["hand_recrop", "iris_landmark"])
def test_shared_model_heads_are_predicted_exactly(name):
    model, result = measured(str(shared_model_path(name)))
    assert isinstance(result, TflmMeasurement), result
    assert result.head == predict_tflm(model).head


def test_mean_scratch_buffers_are_planned():
    # A float MEAN asks for two scratch buffers (temp index, resolved axes): without them the
    # predicted head of dynamic_image would be 32 bytes short.
    model, result = measured(str(DEFAULT_DIR / "dynamic_image.tflite"))
    prediction = predict_tflm(model)
    assert [name for name, _, _ in prediction.scratch] == ["MEAN", "MEAN"]
    assert result.head == prediction.head > prediction.model_head


def test_unsupported_model_gives_a_one_line_reason():
    _, result = measured(str(DEFAULT_DIR / "dequantize_fp16.tflite"))
    assert isinstance(result, Unavailable) and result.outcome == "refused"
    assert result.reason and "\n" not in result.reason
