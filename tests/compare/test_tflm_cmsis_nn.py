"""The CMSIS-NN targets' rules (packager/kernels/tflm_cmsis_nn.py) without a build: which target each
name gives, and the scratch and persistent buffers each core family asks for, read from CMSIS-NN's
`*_get_buffer_size*` functions. Their figures are held against TFLite Micro built with CMSIS-NN in
tests/compare/test_tflm_targets.py."""

from __future__ import annotations

import pytest

from fixtures.tflm_cmsis_kernels import CMSIS_BUILDERS
from packager.kernels.tflm_arena import CORTEX_M_CORES, TARGET_CHOICES, target_named
from packager.kernels.tflm_head import predict_tflm
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.reader import parse_model


def _model(name: str):
    return parse_model(CMSIS_BUILDERS[name]().build())


def _scratch(name: str, target: str) -> list[int]:
    return [size for _, size, _ in predict_tflm(_model(name), target_named(target).cmsis_nn).scratch]


@pytest.mark.parametrize("core,family,oracle", [
    ("cortex-m0", "no-dsp", "cortex-m3+cmsis-nn"), ("cortex-m0plus", "no-dsp", "cortex-m3+cmsis-nn"),
    ("cortex-m3", "no-dsp", "cortex-m3+cmsis-nn"), ("cortex-m4", "dsp", "cortex-m4+cmsis-nn"),
    ("cortex-m7", "dsp", "cortex-m4+cmsis-nn"), ("cortex-m33", "dsp", "cortex-m4+cmsis-nn"),
    ("cortex-m55", "mve", "cortex-m55+cmsis-nn"), ("cortex-m85", "mve", "cortex-m55+cmsis-nn")])
def test_every_core_has_a_cmsis_nn_target_of_its_family(core, family, oracle):
    target = target_named(f"{core}+cmsis-nn")
    assert (target.name, target.cmsis_nn, target.oracle) == (f"{core}+cmsis-nn", family, oracle)
    assert f"{core}+cmsis-nn" in TARGET_CHOICES and not target_named(core).cmsis_nn


def test_cortex_m_with_cmsis_nn_is_the_m4_build_and_unknown_cores_are_not_targets():
    assert target_named("cortex-m+cmsis-nn") == target_named("cortex-m4+cmsis-nn")
    assert target_named("cortex-m99+cmsis-nn") is None and target_named("host+cmsis-nn") is None
    assert len(CORTEX_M_CORES) == 8


def test_convolutions_ask_for_im2col_on_every_family_but_not_for_a_1x1_kernel():
    # 3x3 over 5 channels: two int16 rows of ceil4(45) = 48 off MVE; 4 * ceil16(45) = 64 on MVE.
    assert _scratch("cmsis_conv_3x3", "cortex-m4") == []
    assert _scratch("cmsis_conv_3x3", "cortex-m3+cmsis-nn") == [192]
    assert _scratch("cmsis_conv_3x3", "cortex-m4+cmsis-nn") == [192]
    assert _scratch("cmsis_conv_3x3", "cortex-m55+cmsis-nn") == [192]
    assert _scratch("cmsis_conv_1x1", "cortex-m4+cmsis-nn") == []
    # int16: two int16 per im2col element off MVE (4 * 27 = 108), 64 * ceil8(27) on MVE.
    assert _scratch("cmsis_conv_int16", "cortex-m4+cmsis-nn") == [112]
    assert _scratch("cmsis_conv_int16", "cortex-m55+cmsis-nn") == [256]


def test_depthwise_and_average_pool_buffers_depend_on_dsp():
    assert _scratch("cmsis_depthwise_5x5", "cortex-m3+cmsis-nn") == []
    assert _scratch("cmsis_depthwise_5x5", "cortex-m4+cmsis-nn") == [304]  # 2 * 6 * 25, rounded to 16
    assert _scratch("cmsis_depthwise_3x3", "cortex-m4+cmsis-nn") == []  # 3x3, padding 1
    assert _scratch("cmsis_depthwise_3x3", "cortex-m55+cmsis-nn") == [4464]  # 4 * 124 * 9
    for model in ("cmsis_average_pool_int8", "cmsis_average_pool_int16"):
        assert _scratch(model, "cortex-m4+cmsis-nn") == [48]  # an int32 per channel
        assert _scratch(model, "cortex-m3+cmsis-nn") == _scratch(model, "cortex-m55+cmsis-nn") == []


def test_a_fully_connected_run_as_a_1x1_convolution_asks_for_per_channel_quantization():
    assert _scratch("cmsis_fully_connected_rank3", "cortex-m4") == []
    assert _scratch("cmsis_fully_connected_rank3", "cortex-m3+cmsis-nn") == [48]  # 8 * 5, rounded


def test_the_tail_holds_cmsis_nn_opdata():
    model = _model("cmsis_fully_connected_rank3")  # OpData 72 instead of 48: two 16-byte granules more
    reference = predict_whole_arena(model, target_named("cortex-m4"))
    cmsis = predict_whole_arena(model, target_named("cortex-m4+cmsis-nn"))
    assert cmsis.tail - reference.tail == 32 and cmsis.exact


def test_an_mve_depthwise_conv_of_one_input_channel_runs_as_a_convolution():
    """depthwise_conv.cc converts it to a convolution: its im2col row (4 * ceil16(3*3) on MVE) and
    the reordered filter (4 * 3 * 3). The stride it leaves unset is read only for a one-row kernel
    on a one-row input: that figure says it is not known (a lower bound), never exact."""
    from fixtures.tflm_cmsis_kernels import _conv
    model = parse_model(_conv("dw1", "DEPTHWISE_CONV_2D", [1, 6, 6, 1], [1, 3, 3, 4], [1, 6, 6, 4],
                              "SAME").build())
    assert [size for _, size, _ in predict_tflm(model, "mve").scratch] == [112]  # 64 + 36, rounded
    row = parse_model(_conv("dw1", "DEPTHWISE_CONV_2D", [1, 1, 8, 1], [1, 1, 3, 4], [1, 1, 6, 4],
                            "VALID").build())
    whole = predict_whole_arena(row, target_named("cortex-m55+cmsis-nn"))
    assert not whole.exact and whole.side == "lower" and "DEPTHWISE_CONV_2D" in whole.why_inexact
    assert predict_whole_arena(row, target_named("cortex-m4+cmsis-nn")).exact


def _matrix_model(name: str):
    from fixtures.op_matrix import CASES
    return parse_model(next(c for c in CASES if c.name == name).model().build())


def test_int4_weights_ask_the_int8_convolution_size_and_the_s4_depthwise_size():
    """conv.cc sizes an int4 convolution's buffer by its int8 input (the s8 function); depthwise_conv.cc
    asks CMSIS-NN's s4 size, one int16 im2col row on no-DSP and DSP cores alike, with no 3x3 exception."""
    def scratch(name, family):
        return [size for _, size, _ in predict_tflm(_matrix_model(name), family).scratch]
    assert scratch("CONV_2D__int4_weights_3x3", "dsp") == scratch("CONV_2D__int8_3x3", "dsp") != []
    depthwise = _matrix_model("DEPTHWISE_CONV_2D__int4_weights_3x3")
    c = depthwise.subgraphs[0].tensors[depthwise.subgraphs[0].operators[-1].inputs[0]].shape[3]
    for family in ("no-dsp", "dsp"):
        assert scratch("DEPTHWISE_CONV_2D__int4_weights_3x3", family) == [-(-2 * c * 9 // 16) * 16]
    assert scratch("DEPTHWISE_CONV_2D__int4_weights_3x3", "mve") == [4 * 124 * 9]
    for target in ("cortex-m3+cmsis-nn", "cortex-m4+cmsis-nn", "cortex-m55+cmsis-nn"):
        assert predict_whole_arena(depthwise, target_named(target)).exact


def test_an_average_pool_prepare_holds_its_tensors_twice_on_cmsis_nn():
    """pooling.cc AveragePrepare takes input and output again after PoolingPrepare: where the head is
    small (no DSP: no channel sums), those temporaries set the set-up room."""
    from packager.kernels.tflm_arena import prepare_temp_tensors
    model = _matrix_model("AVERAGE_POOL_2D__int8_stride_2_valid")
    sg = model.subgraphs[0]
    op = sg.operators[0]
    assert prepare_temp_tensors(op, sg, target_named("cortex-m4")) == [op.inputs[0], op.outputs[0]]
    assert prepare_temp_tensors(op, sg, target_named("cortex-m3+cmsis-nn")) == [op.inputs[0], op.outputs[0]] * 2
    assert predict_whole_arena(model, target_named("cortex-m3+cmsis-nn")).arena == 624  # measured on its build


# -- kernel forms: on a CMSIS-NN build a form names the buffer branch its kernel takes ---------------

@pytest.mark.parametrize("name,m3,m4,m55", [
    ("cmsis_conv_1xn", "[1xN]", "[1xN]", "[1xN]"), ("cmsis_conv_3x3", "[im2col]", "[im2col]", "[im2col]"),
    ("cmsis_conv_1x1", "[1x1]", "[1x1]", "[1x1]"), ("cmsis_depthwise_3x3", "[3x3]", "[3x3]", "[opt]"),
    ("cmsis_depthwise_5x5", "[opt]", "[opt]", "[opt]"),
    ("cmsis_depthwise_one_channel", "[general]", "[general]", "[one input channel]"),
    ("cmsis_fully_connected_weights_input", "[general]", "[general]", "[kernel sums in scratch]"),
    ("cmsis_transpose_conv_reverse", "[reverse]", "[reverse]", "[reverse]"),
    ("cmsis_conv_int16", "", "", ""), ("cmsis_average_pool_int8", "", "", "")])
def test_a_cmsis_nn_form_names_the_branch_its_buffer_size_comes_from(name, m3, m4, m55):
    from packager.kernels.tflm_coverage import forms
    model = _model(name)
    reference = forms(model)
    assert forms(model, "cortex-m4") == reference and not any("[" in f for f in reference)
    for build, branch in (("cortex-m3+cmsis-nn", m3), ("cortex-m4+cmsis-nn", m4), ("cortex-m55+cmsis-nn", m55)):
        assert forms(model, build) == [f"{f} {branch}".rstrip() for f in reference]


def test_the_branch_and_the_request_come_from_the_same_test():
    # a 1xN convolution that is not 1xN (stride 1 x 3 channels, not a multiple of 4) is the general
    # im2col on MVE, and asks its size: 4 * ceil16(3 * 3) = 64, not the 1xN row's.
    from fixtures.tflm_cmsis_kernels import _conv
    from packager.kernels.tflm_coverage import forms
    model = parse_model(_conv("odd", "CONV_2D", [1, 1, 10, 3], [6, 1, 3, 3], [1, 1, 8, 6], "VALID").build())
    assert forms(model, "cortex-m55+cmsis-nn") == ["CONV_2D INT8 per-channel [im2col]"]
    assert [s for _, s, _ in predict_tflm(model, "mve").scratch] == [64]
    assert [s for _, s, _ in predict_tflm(_model("cmsis_conv_1xn"), "mve").scratch] == [16]  # the 1xN row


def test_a_branch_no_case_ran_on_the_build_is_not_exact(tmp_path):
    """cmsis_conv_1xn never ran on the M55 build (its MVE 1xN buffer-size code stops qemu-arm): not
    exact there, the unproven form named; the M4 and M3 builds ran it exact, so their figure is."""
    from packager.kernels.tflm_coverage import unproven
    from packager.package.build import package
    path = tmp_path / "conv.tflite"
    path.write_bytes(CMSIS_BUILDERS["cmsis_conv_1xn"]().build())
    assert unproven(_model("cmsis_conv_1xn"), "cortex-m55+cmsis-nn") == ["CONV_2D INT8 per-channel [1xN]"]
    for target, exact in (("cortex-m55+cmsis-nn", False), ("cortex-m85+cmsis-nn", False),
                          ("cortex-m4+cmsis-nn", True), ("cortex-m3+cmsis-nn", True)):
        result = package(path, tmp_path / target, report=False, target=target, verify=False)
        header = (tmp_path / target / "conv_plan.h").read_text()
        arena = result.plan.runtime_arena
        if exact:
            assert "#define CONV_ARENA_EXACT 1" in header and arena.bound == "exact", target
        else:
            assert "#define CONV_ARENA_EXACT 0" in header and '#define CONV_ARENA_BOUND "unknown"' in header
            assert (arena.bound, arena.modelled) == ("unknown", True)
            assert ("not proven on TFLite Micro built for cortex-m55+cmsis-nn: CONV_2D INT8 per-channel [1xN]"
                    in header)
