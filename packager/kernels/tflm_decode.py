"""TFLite Micro's DECODE kernel (custom code "TFLM_DECODE"): constant tensors stored compressed,
decoded in Eval into an arena tensor. Its persistent memory and the order its Prepare takes it.

Prepare (decode.cc) takes a persistent array of one DecodeState pointer per output, then for each
output its encoded input, its ancillary input and the output as temporaries, and a persistent
DecodeState of the output's decode type (byte 0 of the ancillary tensor's 16-byte Decode Common
Metadata). The LUT (0), Huffman (1) and prune (2) types are modelled: their DecodeStates were
read in the sources and measured on fixtures of the pinned wheel (fixtures/tflm_kernels.py:
decode_lut, decode_huffman, decode_prune_float, decode_prune_int8, decode_two_outputs; prune's
Setup copies
per-channel zero points into a buffer of its own). The custom type (127, which the kernel
refuses) and anything else stay unmodelled: the figures say "at least" and name the kernel with
the decode type. Sources (facts, not code): tensorflow/lite/micro/kernels/decode.cc,
decode_state.cc, decode_state_lut.h, decode_state_huffman.h and decode_state_prune.{h,cc} of the
tflite-micro sources.
"""

from __future__ import annotations

from packager.model import Model, Operator

NAME = "TFLM_DECODE"
LUT = 0  # the Decode Common Metadata's decode types: a look-up-table compressed tensor,
HUFFMAN = 1  # a Huffman-coded one,
PRUNE = 2  # a pruned one (a bit mask and the values kept)
MODELLED = (LUT, HUFFMAN, PRUNE)


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


def _decode_state_prune(pointer: int) -> int:
    """sizeof(DecodeStatePrune): DecodeState's three pointers, the compressed-index pointer, three
    size_t, the value-table and zero-point pointers, then two bytes (the single zero point, the
    alternate axis), padded to a pointer. 64-bit: 80 B."""
    size = 3 * pointer + pointer + 3 * pointer + 2 * pointer + 2
    return -(-size // pointer) * pointer


def _decode_state_huffman(pointer: int) -> int:
    """sizeof(DecodeStateHuffman): DecodeState's three pointers, the codeword pointer, a size_t
    (codeword count), the tables' pointer, two bytes (32-bit tables, first-level size), padded
    to a pointer. 64-bit: 56 B (64 of tail)."""
    size = 3 * pointer + pointer + pointer + pointer + 2
    return -(-size // pointer) * pointer


def _zero_points(model: Model, s: int, tensor: int) -> list[int]:
    """The tensor's zero points when TFLite Micro gives it affine quantization (scales present),
    else []."""
    from schemas.tflite.Model import Model as FbModel
    q = FbModel.GetRootAs(model.raw, 0).Subgraphs(s).Tensors(tensor).Quantization()
    if q is None or q.ScaleLength() == 0:
        return []
    return [int(z) for z in q.ZeroPointAsNumpy()] if q.ZeroPointLength() else []


def _prune_buffers(model: Model, s: int, output: int, pointer: int) -> list[int]:
    """DecodeStatePrune, then (its Setup) a copy of the zero points, one byte per channel, when
    the output is quantized per channel with a zero point other than 0."""
    zero_points = _zero_points(model, s, output)
    copy = [len(zero_points)] if len(zero_points) > 1 and any(zero_points) else []
    return [_decode_state_prune(pointer)] + copy


def persistent_buffers(model: Model, s: int, op: Operator, pointer: int) -> list[int] | None:
    """Bytes of each persistent buffer DECODE's Prepare takes, in order; None when an output's
    decode type is not modelled (or the op is malformed: the kernel would reject it)."""
    outputs = len(op.outputs)
    if outputs == 0 or len(op.inputs) != 2 * outputs:
        return None
    types = decode_types(model, s, op)
    if any(t not in MODELLED for t in types):
        return None
    buffers = [pointer * outputs]
    for k, kind in enumerate(types):
        if kind == LUT:
            buffers.append(_decode_state_lut(pointer))
        elif kind == HUFFMAN:
            buffers.append(_decode_state_huffman(pointer))
        else:
            buffers += _prune_buffers(model, s, op.outputs[k], pointer)
    return buffers


def prepare_sequence(op: Operator) -> list[tuple[str, int]]:
    """Its Prepare: the pointer array first (the "buffers" mark), then for each output its encoded
    tensor, its ancillary tensor and the output. The DecodeStates come after those temporaries,
    checked by TFLite Micro against the head only; they are counted as taken with the array, so
    every temporary fits below the whole tail (measured: the smallest arenas of the DECODE
    fixtures)."""
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
    return [t for t in types if t not in MODELLED]


def label(model: Model, s: int, op: Operator) -> str:
    """How the outputs name a DECODE op whose memory is not modelled: with its decode types."""
    kinds = sorted({f"{TYPE_NAMES.get(t, f'type {t}')} decoding" if t is not None
                    else "unreadable metadata" for t in unmodelled_types(model, s, op)})
    return f"{NAME} ({', '.join(kinds)})" if kinds else NAME
