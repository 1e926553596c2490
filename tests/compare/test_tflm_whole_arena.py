"""TFLite Micro's whole arena, predicted from the file, against the smallest arena the runtime
sets the model up and runs in (tried in child processes, multiples of 16 bytes): equal, and 16
bytes less fails. Figures are a plain MicroInterpreter's: the Python interpreter's default recording
allocator is measured with 232 bytes more (HOST_PLAIN_DIFFERENCE), which places every other
allocation exactly where a plain interpreter puts it."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from fixtures.catalog import RUNS_IN_TFLM
from fixtures.write_models import DEFAULT_DIR
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.runtimes.tflm import SmallestArena, smallest_arena, try_arenas, try_arenas_each
from packager.kernels.tflm_arena import ARMHF_LINUX, HOST, HOST_PLAIN_DIFFERENCE
from packager.reader import read_model
from tests.conftest import SHARED_MODELS

pytest.importorskip("tflite_micro",
                    reason="tflite-micro is not installed (pip install '.[runtimes]')")

# The shared models TFLite Micro runs (the others: float16 DEQUANTIZE, custom ops).
SHARED_RUNNABLE = ("hand_recrop", "iris_landmark", "tflm/audio_preprocessor_int8",
                   "tflm/hello_world_int8", "tflm/keyword_scrambled_8bit",
                   "tflm/micro_speech_quantized", "tflm/mobilenet_v2_quantized_1x3x224x224",
                   "tflm/person_detect", "tflm/trained_lstm_int8")


@functools.cache
def measured(path: str):
    model = read_model(path)
    prediction = predict_whole_arena(model)
    return prediction, smallest_arena(Path(path), model, hint=prediction.arena)


def _check(path: Path) -> None:
    prediction, result = measured(str(path))
    assert isinstance(result, SmallestArena), result
    assert prediction.exact, prediction.why_inexact
    assert result.arena == prediction.arena, (result, prediction)
    assert result.below  # 16 bytes less was tried and failed
    assert (result.head, result.tail) == (prediction.head, prediction.tail)


@pytest.mark.parametrize("name", sorted(RUNS_IN_TFLM))
def test_fixture_whole_arena_is_predicted_exactly(name):
    _check(DEFAULT_DIR / f"{name}.tflite")


@pytest.mark.parametrize("name", SHARED_RUNNABLE)
def test_shared_model_whole_arena_is_predicted_exactly(name):
    path = SHARED_MODELS / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{name}.tflite not present (../shared/models is absent)")
    _check(path)


def test_small_models_are_bound_by_set_up_not_by_head_plus_tail():
    # hello_world's head is 32 B: planning needs more room than the head and tail after it.
    prediction, result = measured(str(DEFAULT_DIR / "variable_tensor.tflite"))
    assert prediction.binding == "set-up"
    assert result.arena == prediction.arena > prediction.head + prediction.tail
    assert "Too many buffers" in result.below


def test_bisection_finds_the_minimum_from_a_wrong_hint():
    path = DEFAULT_DIR / "quantized_int8.tflite"
    model = read_model(path)
    predicted = predict_whole_arena(model).arena
    for hint in (predicted + 160, predicted - 160):
        result = smallest_arena(path, model, hint=hint)
        assert isinstance(result, SmallestArena)
        assert result.arena == predicted and result.children > 2


def test_a_crash_counts_as_a_failure_of_the_size_tried():
    path = DEFAULT_DIR / "chain.tflite"
    tries = try_arenas(path, [1 << 20, 64])
    assert [t.ok for t in tries] == [True, False]
    assert tries[1].reason


def test_several_models_in_one_child_try_as_each_alone():
    """`package` runs the original and the packaged model in one child process: each model's
    tries are those it gets alone, up to its own first failure, and a crash stops the rest."""
    chain, block = DEFAULT_DIR / "chain.tflite", DEFAULT_DIR / "mobile_block.tflite"
    together = try_arenas_each([(block, [1 << 20, 1 << 19]), (chain, [1 << 20, 64]), (block, [1 << 20])])
    assert together[:2] == [try_arenas(block, [1 << 20, 1 << 19]), try_arenas(chain, [1 << 20, 64])]
    assert [t.ok for t in together[1]] == [True, False] and together[2] == []  # chain crashed at 64 B


def test_cortex_m_is_smaller_and_marked_modelled():
    model = read_model(DEFAULT_DIR / "mobile_block.tflite")
    host, device = predict_whole_arena(model, HOST), predict_whole_arena(model, ARMHF_LINUX)
    assert device.head == host.head and device.tail < host.tail
    assert host.measured_target and not device.measured_target
    assert "modelled" in device.rule
    assert HOST_PLAIN_DIFFERENCE == 232


def test_compare_shows_the_whole_arena_measured_and_predicted():
    import json

    from typer.testing import CliRunner

    from packager.cli import app
    result = CliRunner().invoke(app, ["compare", str(DEFAULT_DIR / "quantized_int8.tflite"), "--json"])
    assert result.exit_code == 0, result.output
    (data,) = json.loads(result.output)
    tflm = data["tflm"]
    assert tflm["whole_measured"] == tflm["whole_predicted"] == predict_whole_arena(
        read_model(DEFAULT_DIR / "quantized_int8.tflite")).arena
    assert tflm["whole_exact"] is True and tflm["exact"] is True


def test_a_whole_arena_that_differs_is_not_exact():
    from dataclasses import replace

    from packager.compare.comparison import compare_model
    c = compare_model(DEFAULT_DIR / "chain.tflite").tflm
    assert c.exact and c.whole_exact
    wrong = replace(c, whole_measured=c.whole_measured + 16)
    assert wrong.whole_exact is False and wrong.exact is False


def test_a_model_with_an_offline_plan_is_predicted_with_it(tmp_path):
    # The packaged model carries its plan: TFLite Micro's head is that plan, not its own.
    from packager.package.build import package
    result = package(DEFAULT_DIR / "mobile_block.tflite", tmp_path / "o", report=False)
    packed = tmp_path / "o" / "mobile_block.tflite"
    prediction, measured_result = measured(str(packed))
    assert prediction.head == result.plan.arena_bytes
    assert measured_result.arena == prediction.arena == result.plan.runtime_arena.arena_bytes


def test_compare_sets_a_model_up_once_per_try(monkeypatch):
    """compare measures TFLite Micro with the bisection alone: its last working try carries the
    head and tail the recording run gave, so no separate recording run sets the model up again
    (the figures are the same: the head, and the tail at the smallest arena)."""
    from packager.compare import comparison
    from packager.runtimes import tflm as tflm_runtime

    def no_second_run(*args, **kwargs):
        raise AssertionError("a second TFLite Micro set-up")

    monkeypatch.setattr(tflm_runtime, "measure_tflm", no_second_run)
    path = DEFAULT_DIR / "quantized_int8.tflite"
    model = read_model(path)
    c = comparison.compare_tflm(path, model, comparison.planned(model, "tflm"))
    prediction, result = measured(str(path))
    assert c.status == "measured" and c.exact and c.whole_exact
    assert (c.measured, c.whole_measured) == (result.head, result.arena)
    assert c.persistent == result.tail + HOST_PLAIN_DIFFERENCE  # the recording allocator's tail
