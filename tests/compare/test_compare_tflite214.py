"""tflite-runtime 2.14, run from its own environment (it needs numpy<2), predicted exactly from
the file: the same checks as test_compare_tflite.py, with 2.14's kernel rules."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

from fixtures.catalog import RUNS_IN_TFLITE
from fixtures.write_models import DEFAULT_DIR
from packager.compare.comparison import check_arena, compare_model
from packager.compare.predict_tflite import predict_tflite
from packager.compare.tflite_runtime import TfliteMeasurement, measure_tflite
from packager.runtimes.tflite_versions import SETUP_214, TFLITE_RUNTIME, choice
from packager.kernels.tflite_scratch import TFLITE_EIGEN, rules_for
from packager.reader import read_model
from tests.conftest import shared_model_path

if not choice(TFLITE_RUNTIME).installed:
    pytest.skip(f"tflite-runtime 2.14 has no environment here; create it with: {SETUP_214}",
                allow_module_level=True)

EXACT_FIXTURES = sorted(RUNS_IN_TFLITE)
SEES_EVERY_TENSOR = sys.platform.startswith("linux")  # 0-d tensors located through /proc
RUNNABLE_SHARED = ("face_detection_short_range", "hand_recrop", "iris_landmark")


@functools.cache
def measured(path: str):
    model = read_model(path)
    return model, measure_tflite(Path(path), model, runtime=TFLITE_RUNTIME)


def assert_exact(path: str) -> None:
    model, result = measured(path)
    assert isinstance(result, TfliteMeasurement), result
    assert (result.runtime, result.version) == ("tflite-runtime", "2.14.0")
    assert rules_for(result.runtime, result.version) is TFLITE_EIGEN
    predictions = predict_tflite(model, TFLITE_EIGEN)
    assert len(predictions) == len(result.arenas)
    for m, p in zip(result.arenas, predictions):
        check = check_arena(m, p)
        where = f"{path} subgraph {m.subgraph}"
        assert not check.mismatched and not check.resized, (where, check)
        assert check.scratch_equal, (where, m.scratch, p.scratch)
        assert not p.uncovered_ops, (where, p.uncovered_ops)
        if SEES_EVERY_TENSOR:
            assert not m.unknown, where
        if m.anchored and not m.unknown:
            assert check.exact and m.arena == p.arena, where
        else:
            assert check.arena_matches, where


@pytest.mark.parametrize("name", EXACT_FIXTURES)
def test_fixture_arenas_are_predicted_exactly_under_214(name):
    assert_exact(str(DEFAULT_DIR / f"{name}.tflite"))


@pytest.mark.parametrize("name", RUNNABLE_SHARED)
def test_shared_model_arenas_are_predicted_exactly_under_214(name):
    assert_exact(str(shared_model_path(name)))


def test_float_conv_keeps_transposed_weights_out_of_the_working_arena():
    # 2.14's Eigen CONV_2D: no im2col, HWCN weights in the persistent arena; so its working
    # arena for `chain` is far smaller than ai-edge-litert's, and the prediction says which.
    model, result = measured(str(DEFAULT_DIR / "chain.tflite"))
    (arena,) = result.arenas
    (prediction,) = predict_tflite(model, TFLITE_EIGEN)
    assert {s.what for s in prediction.scratch} == {"hwcn_weights"}
    assert all(s.offset is None for s in prediction.scratch) and not arena.scratch
    assert sorted(arena.scratch_elsewhere.values()) == sorted(s.nbytes for s in prediction.scratch)


def test_compare_runs_both_versions_side_by_side():
    c = compare_model(DEFAULT_DIR / "chain.tflite", tflite_runtimes=("litert", TFLITE_RUNTIME))
    versions = [c.tflite, *c.tflite_also]
    assert [r.package for r in versions] == ["ai-edge-litert", "tflite-runtime"]
    assert all(r.exact for r in versions if r.status == "measured")
    # Like with like: each version's best plan covers that version's scratch.
    assert c.tflite_also[0].planned.best <= c.tflite_also[0].measured
