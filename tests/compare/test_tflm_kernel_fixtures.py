"""Every kernel family of TFLite Micro's op resolver (SVDF, LSTM, TRANSPOSE_CONV, reductions,
int16 SOFTMAX, the Signal ops, SPLIT_V, HARD_SWISH and DEQUANTIZE, the OpData-only kernels, the
kernels that copy their output's dims, small scratch buffers, the kernels with no buffers): one
small fixture each, whose predicted whole arena equals the smallest arena the runtime runs it in, and whose packaged model
runs in exactly the declared arena."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from fixtures.tflm_kernels import KERNEL_BUILDERS
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.kernels import tflm_arena
from packager.runtimes.tflm import SmallestArena, smallest_arena, try_arenas
from packager.package.build import package
from packager.reader import read_model

pytest.importorskip("tflite_micro", reason="tflite-micro is not installed (pip install '.[runtimes]')")

EXACT = sorted(KERNEL_BUILDERS)


@functools.cache
def written(name: str, folder: str) -> Path:
    path = Path(folder) / f"{name}.tflite"
    path.write_bytes(KERNEL_BUILDERS[name]().build())
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("kernels"))


@pytest.mark.parametrize("name", EXACT)
def test_kernel_fixture_whole_arena_is_predicted_exactly(name, folder):
    path = written(name, folder)
    model = read_model(path)
    prediction = predict_whole_arena(model)
    assert prediction.exact, prediction.why_inexact
    result = smallest_arena(path, model, hint=prediction.arena)
    assert isinstance(result, SmallestArena), result
    assert (result.arena, result.head, result.tail) == (prediction.arena, prediction.head, prediction.tail)


@pytest.mark.parametrize("name", EXACT)
def test_packaged_kernel_fixture_runs_in_exactly_the_declared_arena(name, folder, tmp_path):
    path = written(name, folder)
    result = package(path, tmp_path / "out", report=False, verify=True)
    assert result.notes[0].startswith("verified on tflite-micro"), result.notes
    arena = result.plan.runtime_arena.arena_bytes
    tries = try_arenas(tmp_path / "out" / f"{name}.tflite", [arena, arena - 16])
    assert [t.ok for t in tries] == [True, False]
    assert tries[0].head == result.plan.arena_bytes


def test_scratch_and_persistent_memory_of_each_family_is_in_the_figures(folder):
    def whole(name):
        return predict_whole_arena(read_model(written(name, folder)))
    # int8 SVDF: two scratch buffers; float: one; the variable state in the tail.
    assert whole("svdf_int8").exact and whole("svdf_float").exact
    # The Signal ops: kiss_fftr's state (Rfft), a work area (FilterBank), noise estimates.
    signal = whole("signal_front_end")
    assert signal.exact and signal.tail > 2000


def test_int16_softmax_tables_overlap_the_temporaries_it_no_longer_reads(folder):
    """int16 SOFTMAX takes its lookup tables while its tensors sit in temp memory; the smallest
    arena lets the tables cover the end of them (what the kernel reads no more), and 16 B less
    crashes TFLite Micro: the figure is exact, not the safe no-overlap one."""
    path = written("softmax_int16", folder)
    model = read_model(path)
    prediction = predict_whole_arena(model)
    assert prediction.exact, prediction.why_inexact
    sg = model.subgraphs[0]
    temp, live = tflm_arena.prepare_temps(sg, sg.operators[0], tflm_arena.HOST, 0)
    assert live < temp
    result = smallest_arena(path, model, hint=prediction.arena)
    assert isinstance(result, SmallestArena)
    assert result.arena == prediction.arena


def test_the_set_up_fixtures_are_set_by_prepare_s_temporaries(folder):
    """Each set-up fixture's arena is its set-up room (the kernel's Prepare temporaries, repeats
    included: CONV_2D holds seven for its four tensors), so predicted == measured above proves
    the kernel's rule, not head + tail."""
    from fixtures.tflm_kernels import SETUP_BUILDERS
    for build in SETUP_BUILDERS:
        model = read_model(written(build.__name__, folder))
        prediction = predict_whole_arena(model)
        assert prediction.binding == "set-up", build.__name__
        assert prediction.setup > prediction.head + prediction.tail, build.__name__
    sg = read_model(written("setup_conv", folder)).subgraphs[0]
    assert len(tflm_arena.prepare_temp_tensors(sg.operators[0], sg)) == 7


def test_relu6_takes_its_eight_byte_opdata_and_the_planning_step_sets_its_arena(folder):
    """Relu6OpData is two int32 (8 B, one 16-B slot in the tail, not two): a single RELU6 needs
    736 B, which the planning step sets; 16 B more would be an over-estimate."""
    path = written("relu6_planning", folder)
    model = read_model(path)
    prediction = predict_whole_arena(model)
    assert (prediction.arena, prediction.binding) == (736, "set-up")
    assert prediction.setup > prediction.head + prediction.tail
    result = smallest_arena(path, model, hint=prediction.arena)
    assert isinstance(result, SmallestArena)
    assert result.arena == 736


def test_kernels_taking_fewer_temporaries_are_predicted_below_the_default_rule(folder, monkeypatch):
    """RESHAPE (not its shape tensor), the comparisons (not their output) and PACK (nothing) take
    fewer temporaries in Prepare than each input and output once: listed, their set-up room is
    the one the runtime needs (predicted == measured above), 16 B or more below the default
    rule's figure."""
    from fixtures.tflm_kernels import FEWER_TEMPS_BUILDERS
    from packager.kernels import tflm_prepare_temps
    for build, kernel in FEWER_TEMPS_BUILDERS.items():
        model = read_model(written(build.__name__, folder))
        listed = predict_whole_arena(model)
        assert listed.binding == "set-up", build.__name__
        with monkeypatch.context() as m:
            m.delitem(tflm_prepare_temps.SEQUENCES, kernel)
            default = predict_whole_arena(model)
        assert default.arena >= listed.arena + 16, build.__name__
