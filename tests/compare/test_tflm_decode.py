"""TFLite Micro's DECODE kernel (custom code TFLM_DECODE): compressed constant tensors decoded into
the arena. The LUT decode type is modelled (a pointer array and one DecodeStateLut per output, in
the tail, taken in Prepare around the output's three temporaries) and measured on the pinned wheel
(decode_lut, also in test_tflm_kernel_fixtures.py: predicted == measured, the packaged model runs
in exactly its declared arena); the other decode types stay named and "at least"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fixtures.tflm_kernels import DECODE_LUT_INDICES, DECODE_LUT_TABLE, decode_lut
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.kernels import tflm_arena, tflm_decode
from packager.reader import read_model


def _model(tmp_path: Path, decode_type: int = 0):
    path = tmp_path / f"decode_{decode_type}.tflite"
    path.write_bytes(decode_lut(decode_type).build())
    return path, read_model(path)


def test_the_fixture_decodes_its_weights_on_tflite_micro():
    """The fixture is a real DECODE model: the pinned TFLite Micro decodes the 4-bit indices
    through the value table (input + decoded weights comes out)."""
    runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime",
                                  reason="tflite-micro is not installed (pip install '.[runtimes]')")
    interpreter = runtime.Interpreter.from_bytes(decode_lut().build(), arena_size=16384)
    x = np.arange(8, dtype=np.float32) * 0.5
    interpreter.set_input(x, 0)
    interpreter.invoke()
    expected = x + DECODE_LUT_TABLE[DECODE_LUT_INDICES]
    np.testing.assert_array_equal(interpreter.get_output(0), expected)


def test_lut_decode_state_and_pointer_array_on_each_target(tmp_path):
    """64-bit: an 8-byte pointer array and a 72-byte DecodeStateLut (80 B of tail once rounded to
    16: the pinned wheel's tail grows by 96 B with DECODE); cortex-m: 4 and 36 (modelled)."""
    _, model = _model(tmp_path)
    op = model.subgraphs[0].operators[0]
    assert tflm_arena.persistent_buffers(model, 0, op, tflm_arena.HOST) == [8, 72]
    assert tflm_arena.persistent_buffers(model, 0, op, tflm_arena.ARMHF_LINUX) == [4, 36]
    assert tflm_arena.init_buffers(op, [8, 72]) == 0  # all taken in Prepare
    host = predict_whole_arena(model)
    assert host.exact and (host.arena, host.head, host.tail) == (1168, 96, 832)
    cortex_m = predict_whole_arena(model, tflm_arena.ARMHF_LINUX)
    assert cortex_m.exact and not cortex_m.measured_target


def test_prepare_takes_the_pointer_array_before_the_temporaries_and_all_of_them_count(tmp_path):
    """The set-up room binds on decode_lut: every temporary of DECODE's Prepare lies below the
    tail its buffers leave (16 B less fails on the pinned wheel, test_tflm_kernel_fixtures)."""
    _, model = _model(tmp_path)
    sg = model.subgraphs[0]
    op = sg.operators[0]
    assert tflm_arena.prepare_temp_tensors(op, sg) == [op.inputs[0], op.inputs[1], op.outputs[0]]
    prediction = predict_whole_arena(model)
    assert prediction.binding == "set-up"
    assert prediction.setup > prediction.head + prediction.tail


def test_prune_decode_state_and_the_zero_points_copied_per_channel(tmp_path):
    """DecodeStatePrune is 80 B on 64-bit (40 on cortex-m); an int8 output quantized per channel
    with non-zero zero points adds Setup's copy of them, one byte per channel (16 B of tail):
    the two prune fixtures' tails differ by exactly that (both measured in
    test_tflm_kernel_fixtures.py)."""
    from fixtures.tflm_kernels import decode_prune_float, decode_prune_int8
    tails = {}
    for build, host, cortex_m in ((decode_prune_float, [8, 80], [4, 40]),
                                  (decode_prune_int8, [8, 80, 2], [4, 40, 2])):
        path = tmp_path / f"{build.__name__}.tflite"
        path.write_bytes(build().build())
        model = read_model(path)
        op = model.subgraphs[0].operators[0]
        assert tflm_arena.persistent_buffers(model, 0, op, tflm_arena.HOST) == host
        assert tflm_arena.persistent_buffers(model, 0, op, tflm_arena.ARMHF_LINUX) == cortex_m
        prediction = predict_whole_arena(model)
        assert prediction.exact, prediction.why_inexact
        tails[build.__name__] = prediction.tail
    # The measured tails: float 736 B + 96 of DECODE (array, state), int8 720 B + 112 (array,
    # state, zero points); without DECODE's buffers the predictions were those 736 and 720.
    assert tails == {"decode_prune_float": 832, "decode_prune_int8": 832}


def test_huffman_decode_state(tmp_path):
    """DecodeStateHuffman is 56 B on 64-bit (64 of tail; 28 on cortex-m), no other buffer; the
    fixture decodes its codes to the symbols on TFLite Micro."""
    from fixtures.tflm_kernels import DECODE_HUFFMAN_CODES, DECODE_HUFFMAN_SYMBOLS, decode_huffman
    path = tmp_path / "decode_huffman.tflite"
    path.write_bytes(decode_huffman().build())
    model = read_model(path)
    op = model.subgraphs[0].operators[0]
    assert tflm_arena.persistent_buffers(model, 0, op, tflm_arena.HOST) == [8, 56]
    assert tflm_arena.persistent_buffers(model, 0, op, tflm_arena.ARMHF_LINUX) == [4, 28]
    prediction = predict_whole_arena(model)
    assert prediction.exact and (prediction.arena, prediction.tail) == (1072, 800)
    runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime",
                                  reason="tflite-micro is not installed (pip install '.[runtimes]')")
    interpreter = runtime.Interpreter.from_bytes(path.read_bytes(), arena_size=16384)
    interpreter.set_input(np.full(8, -128, np.int8), 0)
    interpreter.invoke()
    expected = [DECODE_HUFFMAN_SYMBOLS[c] for c in DECODE_HUFFMAN_CODES]
    assert interpreter.get_output(0).tolist() == expected


@pytest.mark.parametrize("decode_type, kind", [(127, "custom"), (5, "type 5")])
def test_other_decode_types_are_named_and_never_exact(tmp_path, decode_type, kind):
    """Custom decoding (which the kernel refuses today) and unknown types: the figures say which
    kernel and which decode type is not modelled, and are not exact."""
    _, model = _model(tmp_path, decode_type)
    prediction = predict_whole_arena(model)
    assert not prediction.exact
    assert prediction.unmodelled == (f"TFLM_DECODE ({kind} decoding)",)
    assert "TFLM_DECODE" in prediction.why_inexact
    # Its temporaries still count, as for any kernel not listed: the figure stays a lower bound
    # as large as the LUT model's set-up room less its 96 B of DECODE buffers.
    lut = predict_whole_arena(_model(tmp_path)[1])
    assert prediction.setup == lut.setup - 96  # the same temporaries, no DecodeState buffers
    op = model.subgraphs[0].operators[0]
    assert tflm_decode.unmodelled_types(model, 0, op) == [decode_type]


def test_two_outputs_take_one_pointer_array_and_a_state_each_in_output_order(tmp_path):
    """A DECODE of two outputs (LUT, then prune): a 16-byte pointer array, the DecodeStateLut,
    the DecodeStatePrune; its Prepare takes encoded, ancillary and output of the first, then of
    the second (predicted == measured in test_tflm_kernel_fixtures.py: 1,696 B)."""
    from fixtures.tflm_kernels import decode_two_outputs
    path = tmp_path / "decode_two_outputs.tflite"
    path.write_bytes(decode_two_outputs().build())
    model = read_model(path)
    sg = model.subgraphs[0]
    op = sg.operators[0]
    assert tflm_arena.persistent_buffers(model, 0, op, tflm_arena.HOST) == [16, 72, 80]
    i, o = op.inputs, op.outputs
    assert tflm_arena.prepare_temp_tensors(op, sg) == [i[0], i[1], o[0], i[2], i[3], o[1]]
    prediction = predict_whole_arena(model)
    assert prediction.exact and (prediction.arena, prediction.tail) == (1696, 1152)
