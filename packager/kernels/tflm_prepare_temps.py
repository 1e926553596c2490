"""Which of a node's tensors TFLite Micro's kernels take as temporary TfLiteTensors in Prepare,
in the order they take them, repeats included.

TFLite Micro frees temporaries only when a node's Prepare ends (ResetTempAllocations; a
DeallocateTempTfLiteTensor only counts), so a kernel whose Prepare and its helper each take the
same tensor holds it twice. The rule for a kernel not listed here is every input and output
once. Sources (facts): the Prepare functions of tensorflow/lite/micro/kernels/*.cc (conv_common,
depthwise_conv_common, transpose_conv, reduce_common, tanh, concatenation, activations_common,
split, split_v); checked against the pinned wheel on fixtures where the set-up room binds.

Audited on the pinned wheel: every kernel of its op resolver, float32, int8 and int16 where the
kernel takes them, one-op models, each temporary the build allocates in Prepare traced in order
(MicroAllocator::AllocateTempTfLiteTensor, every temp allocation, every persistent buffer between
them). No kernel takes more than this table or the default rule says, and none takes a bare temp
buffer. Those listed here take exactly what the table says; ADD, SUB, MUL, DIV, PAD, PADV2,
MIRROR_PAD, PRELU, LEAKY_RELU, RELU, LOGISTIC, SOFTMAX, LOG_SOFTMAX, HARD_SWISH, ABS, RSQRT, ELU,
QUANTIZE, DEQUANTIZE, L2_NORMALIZATION, the pools (L2_POOL_2D: output first), FULLY_CONNECTED
(per-channel, int16), SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM, BATCH_MATMUL, CAST, SLICE,
STRIDED_SLICE, TRANSPOSE, GATHER, GATHER_ND, SELECT_V2, DYNAMIC_UPDATE_SLICE, CUMSUM, ADD_N,
BROADCAST_TO, REVERSE_V2, FILL, BROADCAST_ARGS, EXPAND_DIMS, SQUEEZE,
EMBEDDING_LOOKUP, DEPTH_TO_SPACE, SPACE_TO_DEPTH, RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR,
SQUARED_DIFFERENCE, FLOOR_DIV, FLOOR_MOD, the element-wise float functions, CIRCULAR_BUFFER,
TFLite_Detection_PostProcess (tflm_custom_ops) and the Signal ops take every input and output
once. Fewer than the default, listed here too: RESHAPE
(input, output), the comparisons (the two inputs), READ_VARIABLE and ASSIGN_VARIABLE (one),
IF (the condition), SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND (input, output), and nothing at
all for WHILE, VAR_HANDLE, PACK, UNPACK, SHAPE, NEG, FLOOR, MAXIMUM, MINIMUM, ARG_MAX, ARG_MIN,
LOGICAL_AND, LOGICAL_OR. DECODE (compression, custom code TFLM_DECODE) takes a persistent
buffer, then each output's encoded input, ancillary input and the output (tflm_decode.py); ETHOSU has no kernel
in the host build (on a device it takes input 0 alone). The sequences are the same on every
target: only the bytes of each temporary differ (4-byte pointers on cortex-m).
"""

from __future__ import annotations

from typing import Callable

from packager.model import Operator, Subgraph

Taken = list[tuple[str, int]]  # ("in" | "out", position); ("buffers", 0): its Prepare buffers
BUFFERS = ("buffers", 0)  # where the kernel takes its persistent buffers of Prepare


def _conv(sg: Subgraph, op: Operator) -> Taken:
    """ConvPrepare / DepthwiseConvPrepare: output, input, filter; the per-channel arrays; then
    CalculateOpData*: input, filter, bias (when present), output."""
    return [("out", 0), ("in", 0), ("in", 1), BUFFERS, ("in", 0), ("in", 1), ("in", 2), ("out", 0)]


def _transpose_conv(sg: Subgraph, op: Operator) -> Taken:
    """TransposeConvPrepare: output, input (position 2), filter (1); the per-channel arrays;
    CalculateOpData takes input, filter, bias and output again unless the input is float32."""
    taken = [("out", 0), ("in", 2), ("in", 1), BUFFERS]
    if sg.tensors[op.inputs[2]].type != "FLOAT32":
        taken += [("in", 2), ("in", 1), ("in", 3), ("out", 0)]
    return taken


def _simple(sg: Subgraph, op: Operator) -> Taken:
    """reduce_common.cc's PrepareSimple: input, axis, and the output for an int8 input."""
    taken = [("in", 0), ("in", 1)]
    if sg.tensors[op.inputs[0]].type == "INT8":
        taken.append(("out", 0))
    return taken


def _mean_or_sum(sg: Subgraph, op: Operator) -> Taken:
    """PrepareMeanOrSumHelper and PrepareAllHelper: input, output, axis, then PrepareSimple."""
    return [("in", 0), ("out", 0), ("in", 1)] + _simple(sg, op)


def _min_max(sg: Subgraph, op: Operator) -> Taken:
    """PrepareMinMaxHelper: PrepareSimple first, then input, output, axis."""
    return _simple(sg, op) + [("in", 0), ("out", 0), ("in", 1)]


def _tanh(sg: Subgraph, op: Operator) -> Taken:
    """TanhPrepare: the input; then CalculateArithmeticOpData: input and output."""
    return [("in", 0), ("in", 0), ("out", 0)]


def _concatenation(sg: Subgraph, op: Operator) -> Taken:
    """ConcatenationPrepare: input 0 and the output, then every input in turn."""
    return [("in", 0), ("out", 0)] + [("in", i) for i in range(len(op.inputs))]


SEQUENCES: dict[str, Callable[[Subgraph, Operator], Taken]] = {
    "CONV_2D": _conv, "DEPTHWISE_CONV_2D": _conv, "TRANSPOSE_CONV": _transpose_conv,
    "MEAN": _mean_or_sum, "SUM": _mean_or_sum, "REDUCE_ALL": _mean_or_sum,
    "REDUCE_MAX": _min_max, "REDUCE_MIN": _min_max,
    "TANH": _tanh, "CONCATENATION": _concatenation,
    "RELU6": lambda sg, op: [("in", 0)],  # Relu6Prepare reads the input only
    "SPLIT": lambda sg, op: [("in", 0)],  # the axis only
    "SPLIT_V": lambda sg, op: [("in", 2)],  # the axis only
}

# Kernels whose Prepare takes fewer than every input and output (measured on the pinned wheel and
# read in their Prepare): listed so that the set-up room is not over-estimated.
_INPUT_AND_OUTPUT = lambda sg, op: [("in", 0), ("out", 0)]  # noqa: E731
SEQUENCES.update({
    "RESHAPE": _INPUT_AND_OUTPUT,  # reshape_common.cc: not the shape tensor
    "SPACE_TO_BATCH_ND": _INPUT_AND_OUTPUT, "BATCH_TO_SPACE_ND": _INPUT_AND_OUTPUT,
    **{name: (lambda sg, op: [("in", 0), ("in", 1)])  # comparisons.cc: the two inputs
       for name in ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL")},
    "READ_VARIABLE": lambda sg, op: [("in", 0)],  # the resource id
    "ASSIGN_VARIABLE": lambda sg, op: [("in", 1)],  # the value
    "IF": lambda sg, op: [("in", 0)],  # the condition
    # No temporaries at all (no Prepare, or one that reads only the eval tensors).
    **{name: (lambda sg, op: [])
       for name in ("WHILE", "VAR_HANDLE", "PACK", "UNPACK", "SHAPE", "NEG", "FLOOR", "MAXIMUM",
                    "MINIMUM", "ARG_MAX", "ARG_MIN", "LOGICAL_AND", "LOGICAL_OR")},
})


def _decode(sg: Subgraph, op: Operator) -> Taken:
    from packager.kernels import tflm_decode
    return tflm_decode.prepare_sequence(op)


SEQUENCES["TFLM_DECODE"] = _decode  # the pointer array, then each output's three tensors


def taken_tensors(sg: Subgraph, op: Operator) -> list[int] | None:
    """Tensor ids (-1: an absent optional one, which takes nothing) in the order the op's
    Prepare takes them; None when the kernel is not listed (then: every input and output)."""
    rule = SEQUENCES.get(op.name)
    if rule is None:
        return None
    out = []
    for kind, position in rule(sg, op):
        if (kind, position) == BUFFERS:
            continue
        ids = op.inputs if kind == "in" else op.outputs
        out.append(ids[position] if position < len(ids) else -1)
    return out


def taken_before_buffers(sg: Subgraph, op: Operator) -> int | None:
    """How many of the taken tensors come before the kernel's Prepare buffers, when it takes
    more after them (then every temporary must fit below the tail those buffers leave, and no
    buffer can overwrite one); None otherwise."""
    rule = SEQUENCES.get(op.name)
    taken = rule(sg, op) if rule is not None else []
    if BUFFERS not in taken or taken[-1] == BUFFERS:
        return None
    return taken.index(BUFFERS)
