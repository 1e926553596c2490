"""TFLite Micro's DECODE kernel (custom code "TFLM_DECODE"): constant tensors stored compressed,
decoded in Eval into an arena tensor. Its persistent memory and the order its Prepare takes it.

Prepare (decode.cc) takes a persistent array of one DecodeState pointer per output, then for each
output its encoded input, its ancillary input and the output as temporaries, and a persistent
DecodeState of the output's decode type (byte 0 of the ancillary tensor's 16-byte Decode Common
Metadata). Only the LUT type (0) is modelled: its DecodeStateLut was read in the sources and
measured on a fixture of the pinned wheel (fixtures/tflm_kernels.py, decode_lut). Huffman (1),
prune (2), custom (127) and anything else stay unmodelled: the figures say "at least" and name
the kernel. Sources (facts, not code): tensorflow/lite/micro/kernels/decode.cc, decode_state.cc,
decode_state_lut.h of the tflite-micro sources.
"""

from __future__ import annotations

from packager.model import Model, Operator

NAME = "TFLM_DECODE"
LUT = 0  # the Decode Common Metadata's decode type of a look-up-table compressed tensor


def decode_types(model: Model, s: int, op: Operator) -> list[int | None]:
    """The decode type of each output (None where the ancillary tensor cannot be read)."""
    sg = model.subgraphs[s]
    types: list[int | None] = []
    for k in range(len(op.outputs)):
        position = 2 * k + 1
        if position >= len(op.inputs) or op.inputs[position] < 0:
            types.append(None)
            continue
        tensor = sg.tensors[op.inputs[position]]
        data = model.buffer_bytes(tensor.buffer) if tensor.has_data else b""
        types.append(data[0] if len(data) >= 16 else None)
    return types


def _decode_state_lut(pointer: int) -> int:
    """sizeof(DecodeStateLut): the vtable, context and profiler pointers of DecodeState, then the
    compressed-index pointer, three size_t (index count, channels, elements per channel), the
    value-table pointer and three bytes (stride, bit width, alternate axis), padded to a pointer.
    64-bit: 72 B (the pinned wheel's tail grows by 80, the 16-byte-rounded buffer)."""
    size = 3 * pointer + pointer + 3 * pointer + pointer + 3
    return -(-size // pointer) * pointer


def persistent_buffers(model: Model, s: int, op: Operator, pointer: int) -> list[int] | None:
    """Bytes of each persistent buffer DECODE's Prepare takes, in order; None when an output's
    decode type is not modelled (or the op is malformed: the kernel would reject it)."""
    outputs = len(op.outputs)
    if outputs == 0 or len(op.inputs) != 2 * outputs:
        return None
    types = decode_types(model, s, op)
    if any(t != LUT for t in types):
        return None
    return [pointer * outputs] + [_decode_state_lut(pointer)] * outputs


def prepare_sequence(op: Operator) -> list[tuple[str, int]]:
    """Its Prepare: the pointer array first (the "buffers" mark), then for each output its encoded
    tensor, its ancillary tensor and the output. The DecodeStates come after those temporaries,
    checked by TFLite Micro against the head only; they are counted as taken with the array, so
    every temporary fits below the whole tail (measured: the smallest arena of decode_lut)."""
    taken: list[tuple[str, int]] = [("buffers", 0)]
    for k in range(len(op.outputs)):
        taken += [("in", 2 * k), ("in", 2 * k + 1), ("out", k)]
    return taken


TYPE_NAMES = {0: "LUT", 1: "Huffman", 2: "prune", 127: "custom"}


def unmodelled_types(model: Model, s: int, op: Operator) -> list[int | None]:
    """The decode types of the op's outputs that are not modelled (all, for a malformed op)."""
    types = decode_types(model, s, op)
    if not types or len(op.inputs) != 2 * len(op.outputs):
        return [None]
    return [t for t in types if t != LUT]


def label(model: Model, s: int, op: Operator) -> str:
    """How the outputs name a DECODE op whose memory is not modelled: with its decode types."""
    kinds = sorted({TYPE_NAMES.get(t, f"type {t}") if t is not None else "unreadable"
                    for t in unmodelled_types(model, s, op)})
    return f"{NAME} ({', '.join(kinds)} decoding)" if kinds else NAME
