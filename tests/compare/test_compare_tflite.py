"""TFLite's real arena, measured in a child process, against our prediction from the file alone:
every model tensor at the same offset, the same temporaries, the same arena size."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

from fixtures.catalog import RUNS_IN_TFLITE
from fixtures.write_models import DEFAULT_DIR
from packager.compare.comparison import check_arena, planned
from packager.compare.predict_tflite import predict_tflite
from packager.kernels.tflite_scratch import rules_for
from packager.reader import read_model
from packager.compare.tflite_runtime import TfliteMeasurement, caller_owned_inputs, measure_tflite
from packager.runtimes.child import Unavailable
from tests.conftest import shared_model_path

pytest.importorskip("ai_edge_litert.interpreter",
                    reason="ai-edge-litert is not installed (pip install '.[runtimes]')")

EXACT_FIXTURES = sorted(RUNS_IN_TFLITE)
# The probe finds 0-d tensors (which Python hands out as copies) by writing into them and reading
# the process's memory through /proc: on Linux every tensor is seen.
SEES_EVERY_TENSOR = sys.platform.startswith("linux")
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
        if SEES_EVERY_TENSOR:
            assert not m.unknown, where
        if m.anchored and not m.unknown:
            assert check.exact and m.arena == p.arena, where  # byte for byte
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


def test_outputs_resized_at_prepare_are_predicted_at_their_runtime_size():
    # NON_MAX_SUPPRESSION_V5's selected outputs: shape [1] in the file (signature [-1]); TFLite
    # resizes them to max_output_size (6) at Prepare, and the GATHER after them follows.
    model, result = measured(fixture_path("nms"))
    (arena,) = result.arenas
    (prediction,) = predict_tflite(model, rules_for(result.runtime, result.version))
    selected, selected_scores, picked = 7, 8, 10
    assert model.main.tensors[selected].nbytes == 4
    assert arena.sizes[selected] == prediction.sizes[selected] == 6 * 4
    assert arena.sizes[selected_scores] == prediction.sizes[selected_scores] == 6 * 4
    assert arena.sizes[picked] == prediction.sizes[picked] == 6 * 4 * 4
    assert check_arena(arena, prediction).exact


def test_zero_d_tensors_are_found_in_every_subgraph():
    # The WHILE loop's counters are 0-d: Python hands them out as copies, so the probe locates
    # them by writing into them, in the main graph, the condition and the body.
    if not SEES_EVERY_TENSOR:
        pytest.skip("locating 0-d tensors reads /proc/self/mem (Linux)")
    model, result = measured(fixture_path("while_loop"))
    # (the body's inputs use the caller's buffers: not the body's arena, so not counted)
    zero_d = {(sg.index, t.index) for sg in model.subgraphs for t in sg.tensors
              if t.shape == () and not t.is_constant
              and t.index not in caller_owned_inputs(model, sg.index)}
    seen = {(a.subgraph, t) for a in result.arenas for t in a.offsets}
    assert len(zero_d) == 4 and zero_d <= seen | {(a.subgraph, t) for a in result.arenas
                                                   for t in a.unallocated}
    assert not any(a.unknown for a in result.arenas)


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
