"""TFLite's real arena, measured in a child process, against our prediction from the file alone:
every model tensor at the same offset, the same temporaries, the same arena size."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from fixtures.catalog import RUNS_IN_TFLITE
from fixtures.write_models import DEFAULT_DIR
from packager.compare.comparison import check_arena, planned
from packager.compare.predict_tflite import predict_tflite
from packager.kernels.tflite_scratch import rules_for
from packager.reader import read_model
from packager.compare.tflite_runtime import TfliteMeasurement, Unavailable, measure_tflite
from tests.conftest import shared_model_path

pytest.importorskip("ai_edge_litert.interpreter",
                    reason="ai-edge-litert is not installed (pip install '.[runtimes]')")

# NON_MAX_SUPPRESSION_V5 resizes its outputs to max_output_size at Prepare: sizes the file stores
# as unknown (-1 -> 1), so the file alone cannot give TFLite's layout. Its test says so below.
EXACT_FIXTURES = sorted(RUNS_IN_TFLITE - {"nms"})
RUNNABLE_SHARED = ("face_detection_short_range", "hand_recrop", "iris_landmark")


@functools.cache
def measured(path: str):
    model = read_model(path)
    result = measure_tflite(Path(path), model)
    return model, result


def fixture_path(name: str) -> str:
    return str(DEFAULT_DIR / f"{name}.tflite")


def assert_exact(path: str) -> None:
    model, result = measured(path)
    assert isinstance(result, TfliteMeasurement), result
    predictions = predict_tflite(model, rules_for(result.runtime, result.version))
    assert len(predictions) == len(result.arenas)
    for m, p in zip(result.arenas, predictions):
        check = check_arena(m, p)
        where = f"{path} subgraph {m.subgraph}"
        assert not check.mismatched, (where, {t: (m.offsets.get(t), p.offsets.get(t))
                                             for t in check.mismatched})
        assert check.scratch_equal, (where, m.scratch, p.scratch)
        assert not p.uncovered_ops, (where, p.uncovered_ops)
        if m.anchored and not m.unknown:
            assert m.arena == p.arena, where  # byte for byte
        else:  # 0-d tensors reach Python as copies: their slots are invisible, not missing
            assert check.arena_matches, where


@pytest.mark.parametrize("name", EXACT_FIXTURES)
def test_fixture_arenas_are_predicted_exactly(name):
    assert_exact(fixture_path(name))


@pytest.mark.parametrize("name", RUNNABLE_SHARED)
def test_shared_model_arenas_are_predicted_exactly(name):
    assert_exact(str(shared_model_path(name)))


def test_scratch_is_part_of_the_prediction():
    model, result = measured(fixture_path("mobile_block"))
    (arena,) = result.arenas
    (prediction,) = predict_tflite(model, rules_for(result.runtime, result.version))
    if result.runtime == "ai-edge-litert":
        # The strided 3x3 CONV_2D needs an im2col buffer; MEAN three small temporaries.
        assert {s.what for s in prediction.scratch if s.offset is not None} == {
            "im2col", "temp_index", "resolved_axis", "temp_accum"}
    assert sorted(arena.scratch.values()) == sorted(
        (s.offset, s.nbytes) for s in prediction.scratch if s.offset is not None)


def test_ties_follow_the_runtime_sort():
    # SPLIT and UNPACK write two outputs of the same size at the same node: std::sort leaves them
    # in the order of TFLite's unordered_set, second output first, and so do we.
    model, result = measured(fixture_path("op_zoo"))
    (arena,) = result.arenas
    half_0, half_1 = 21, 22
    assert arena.offsets[half_1] < arena.offsets[half_0]
    (prediction,) = predict_tflite(model, rules_for(result.runtime, result.version))
    assert prediction.offsets[half_1] == arena.offsets[half_1]


def test_runtime_resized_outputs_are_reported_not_hidden():
    model, result = measured(fixture_path("nms"))
    (arena,) = result.arenas
    (prediction,) = predict_tflite(model, rules_for(result.runtime, result.version))
    check = check_arena(arena, prediction)
    assert check.mismatched and check.model_diff > 0 and check.scratch_diff == 0


def test_refused_model_gives_a_one_line_reason():
    model, result = measured(fixture_path("custom_op"))
    assert isinstance(result, Unavailable) and result.outcome == "refused"
    assert "MyCustomOp" in result.reason and "\n" not in result.reason


def test_face_detection_best_plan_beats_tflites_own_placement():
    path = str(shared_model_path("face_detection_short_range"))
    model, result = measured(path)
    assert isinstance(result, TfliteMeasurement)
    (arena,) = result.arenas
    (prediction,) = predict_tflite(model, rules_for(result.runtime, result.version))
    assert arena.arena == prediction.arena  # the report shows TFLite's measured arena
    best = planned(model, "tflite")  # the model's tensors alone, as TFLite's placement of them
    assert best.bound <= best.best < arena.model_arena
