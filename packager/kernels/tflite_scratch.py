"""The temporaries ("scratch") TFLite's CPU kernels add to a subgraph during Prepare, per runtime.

A kernel may call `context->AddTensors` to get new tensor indices (past the model's own tensors)
and list some of them in `node->temporaries`. The arena planner then places every temporary of
type kTfLiteArenaRw as a tensor alive for that node only, in the same arena as the model's tensors;
kTfLiteArenaRwPersistent ones go to the persistent arena. The file says nothing about them, so
they are predicted here from each kernel's rules (sources: tflite/kernels/conv.cc
`IsIm2ColRequired` and `AllocateTemporaryTensorsIfRequired`, reduce.cc `PrepareSimple` /
`InitializeTemporaries`, fully_connected.cc `Prepare`, batch_matmul.cc `InitializeTemporaries`),
and checked against the measured runtime (tests/test_compare_tflite.py).

Two rule sets, because the kernels registered by default differ between builds:
- LITERT (ai-edge-litert 2.x, built with ruy): CONV_2D is the generic optimized kernel, which needs
  an im2col buffer whenever the filter is not 1x1, or a stride or dilation is not 1, for every type.
- TFLITE_EIGEN (tflite-runtime up to 2.14, multithreaded Eigen): float CONV_2D keeps transposed
  (HWCN) weights in the persistent arena and needs no im2col; quantized CONV_2D needs im2col as
  above. Other kernels are only trusted where measured, so fewer ops count as covered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

from packager.lifetimes import DYNAMIC as DYNAMIC_TENSOR, _classify
from packager.model import ELEMENT_BITS, Model, Operator, Subgraph
from packager.semantics import TFLITE

ARENA = "arena"  # kTfLiteArenaRw: planned with the model's tensors, alive for its node only
PERSISTENT = "persistent"  # kTfLiteArenaRwPersistent: the persistent arena
DYNAMIC = "dynamic"  # allocated on demand at Eval: no arena place


@dataclass(frozen=True)
class Temporary:
    slot: int  # position among the indices the kernel added (index = first added + slot)
    nbytes: int
    kind: str  # ARENA, PERSISTENT or DYNAMIC
    what: str  # im2col, transposed_rhs, ...


@dataclass(frozen=True)
class OpScratch:
    added: int  # tensor indices the kernel adds in Prepare
    temporaries: tuple[Temporary, ...]  # node->temporaries, in order
    covered: bool = True  # False: this op's rule is not modelled; its scratch may be missing
    why: str = ""  # not covered: the rule that is missing


NONE = OpScratch(0, ())
UNKNOWN = OpScratch(0, (), covered=False, why="no rule for its temporaries")


def missing(why: str) -> OpScratch:
    """Not modelled, with the rule that is missing named."""
    return OpScratch(0, (), covered=False, why=why)

# Ops whose kernels add no tensors in Prepare (read in the kernels, confirmed on the fixtures).
_NO_TEMPORARIES = frozenset({
    "ADD", "SUB", "MUL", "DIV", "RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "PRELU",
    "LEAKY_RELU", "LOGISTIC", "TANH", "HARD_SWISH", "ELU", "SOFTMAX", "LOG_SOFTMAX", "PAD",
    "PADV2", "MAX_POOL_2D", "AVERAGE_POOL_2D", "CONCATENATION", "RESHAPE", "SQUEEZE",
    "EXPAND_DIMS", "TRANSPOSE", "STRIDED_SLICE", "SLICE", "SPLIT", "SPLIT_V", "PACK", "UNPACK",
    "CAST", "GATHER", "GATHER_ND", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "DEQUANTIZE",
    "QUANTIZE", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", "EQUAL", "NOT_EQUAL",
    "MAXIMUM", "MINIMUM", "IF", "WHILE", "CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE",
    "ASSIGN_VARIABLE", "WHERE", "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5", "ABS",
    "NEG", "EXP", "SQRT", "RSQRT", "SQUARE", "SQUARED_DIFFERENCE", "SELECT_V2", "FLOOR",
    "SHAPE", "FLOOR_DIV",  # measured on fixtures/runtime_cases.py
    "UNIQUE",  # its indices are an arena tensor, its values dynamic (lifetimes.py)
    "RANK",  # its 0-d output is persistent read-only, filled at Prepare (semantics.py)
    "DENSIFY", "DEPTH_TO_SPACE",  # measured on MediaPipe's pose and sparse face detectors
    # Measured on the coverage matrix (fixtures/op_matrix.py), in every mode the kernel accepts,
    # ai-edge-litert 2.3 and tflite-runtime 2.14:
    "ARG_MAX", "ARG_MIN", "ATAN2", "BATCH_TO_SPACE_ND", "BITCAST", "BITWISE_XOR",
    "BROADCAST_ARGS", "BROADCAST_TO", "CEIL", "CONV_3D_TRANSPOSE", "COS", "CUMSUM",
    "DYNAMIC_UPDATE_SLICE", "EMBEDDING_LOOKUP", "FAKE_QUANT", "FILL", "FLOOR_MOD", "GELU",
    "L2_NORMALIZATION", "L2_POOL_2D", "LOCAL_RESPONSE_NORMALIZATION", "LOG", "LOGICAL_AND",
    "LOGICAL_NOT", "LOGICAL_OR", "MATRIX_DIAG", "MATRIX_SET_DIAG", "MIRROR_PAD", "ONE_HOT", "POW",
    "RANGE", "REVERSE_SEQUENCE", "REVERSE_V2", "RIGHT_SHIFT", "ROUND", "SCATTER_ND", "SEGMENT_SUM",
    "SELECT", "SIGN", "SIN", "SPACE_TO_BATCH_ND", "SPACE_TO_DEPTH", "SPARSE_TO_DENSE",
    "STABLEHLO_ADD", "STABLEHLO_AND", "STABLEHLO_MAXIMUM", "STABLEHLO_MINIMUM",
    "STABLEHLO_MULTIPLY", "TILE", "TOPK_V2", "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_MIN",
    "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_SUM", "ZEROS_LIKE",
    # Custom ops the wheels register (their Prepare only sizes the output; measured likewise).
    "AudioSpectrogram", "Mfcc",
    # Complex, random, bucketing and legacy hashing kernels (their Prepare only sizes or types
    # the output; measured on the coverage matrix, both versions; DILATE is LiteRT's only).
    "BUCKETIZE", "COMPLEX_ABS", "DILATE", "IMAG", "LSH_PROJECTION", "RANDOM_STANDARD_NORMAL",
    "RANDOM_UNIFORM", "REAL", "EMBEDDING_LOOKUP_SPARSE", "SKIP_GRAM",
    "HASHTABLE", "HASHTABLE_IMPORT", "HASHTABLE_FIND", "HASHTABLE_SIZE", "HASHTABLE_LOOKUP",
    # Options in the second union (BuiltinOptions2), ai-edge-litert's only: Prepare sizes the
    # output (STABLEHLO_SCATTER's update body runs per element, on the stack).
    "REDUCE_WINDOW", "STABLEHLO_PAD", "STABLEHLO_GATHER", "STABLEHLO_SCATTER",
    "STABLEHLO_RNG_BIT_GENERATOR", "MULTINOMIAL",
})


def _bytes(type_name: str, elements: int) -> int:
    return -(-elements * (ELEMENT_BITS[type_name] or 0) // 8)


class _Op:
    """The tensors of one op, as the kernel sees them at Prepare."""

    def __init__(self, sg: Subgraph, op: Operator, model: Model | None = None) -> None:
        self.sg, self.op, self.model = sg, op, model

    def input(self, k: int):
        i = self.op.inputs[k] if k < len(self.op.inputs) else -1
        return self.sg.tensors[i] if i >= 0 else None

    def output(self, k: int = 0):
        return self.sg.tensors[self.op.outputs[k]]

    def option(self, name: str, default: int = 1) -> int:
        value = self.op.options.get(name)
        return default if value is None else int(value)


# -- CONV_2D ---------------------------------------------------------------------------------------

def _conv_needs_im2col(o: _Op) -> bool:
    w = o.input(1)
    return (o.option("stride_w") != 1 or o.option("stride_h") != 1
            or o.option("dilation_w_factor") != 1 or o.option("dilation_h_factor") != 1
            or w.shape[1] != 1 or w.shape[2] != 1)


def _im2col(o: _Op, type_name: str) -> Temporary:
    x, w, y = o.input(0), o.input(1), o.output()
    batches, out_h, out_w = x.shape[0], y.shape[1], y.shape[2]
    depth = w.shape[1] * w.shape[2] * w.shape[3]
    return Temporary(0, _bytes(type_name, batches * out_h * out_w * depth), ARENA, "im2col")


def _conv_hybrid(o: _Op) -> bool:
    return o.input(0).type == "FLOAT32" and o.input(1).type in ("UINT8", "INT8", "INT4")


def _per_channel(t) -> bool:
    return t.quant_channels > 1


def _conv_hybrid_scratch(o: _Op) -> OpScratch:
    """conv.cc, float input and per-channel int8 filter: the kernel adds only what it uses, in
    this order: im2col of the quantized input (int8, when im2col is needed), the quantized
    input, one scaling factor and one offset per input row (batch x height x width), an int32
    accumulator of the output's size, and int32 row sums (persistent, one per output channel).
    Measured the same in ai-edge-litert 2.3 and tflite-runtime 2.14 (the coverage matrix)."""
    x, w, y = o.input(0), o.input(1), o.output()
    if not _per_channel(w):
        return missing("hybrid CONV_2D with a per-tensor filter (its scaling factors per batch)")
    rows = math.prod(x.shape) // w.shape[3]
    temps = []
    if _conv_needs_im2col(o):
        temps.append(("im2col", _im2col(o, "INT8").nbytes, ARENA))
    temps += [("input_quantized", math.prod(x.shape), ARENA),
              ("scaling_factors", 4 * rows, ARENA),
              ("accum_scratch", 4 * math.prod(y.shape), ARENA),
              ("input_offsets", 4 * rows, ARENA),
              ("row_sums", 4 * w.shape[0], PERSISTENT)]
    return OpScratch(len(temps), tuple(Temporary(k, n, kind, what)
                                       for k, (what, n, kind) in enumerate(temps)))


def _conv_litert(o: _Op) -> OpScratch:
    if _conv_hybrid(o):
        return _conv_hybrid_scratch(o)
    if not _conv_needs_im2col(o):
        return NONE
    return OpScratch(1, (_im2col(o, o.input(0).type),))


def _dilated(o: _Op) -> bool:
    return o.option("dilation_w_factor") != 1 or o.option("dilation_h_factor") != 1


def _conv_eigen(o: _Op) -> OpScratch:
    if _conv_hybrid(o):
        return _conv_hybrid_scratch(o)
    x, w = o.input(0), o.input(1)
    if x.type == "FLOAT32" and not _dilated(o):
        # Multithreaded Eigen kernel: no im2col, weights transposed once into the persistent arena.
        hwcn = Temporary(0, _bytes("FLOAT32", math.prod(w.shape)), PERSISTENT, "hwcn_weights")
        return OpScratch(1, (hwcn,))
    # Quantized, or dilated float (the Eigen kernel has no dilation: the optimized one runs,
    # with im2col; measured on the coverage matrix).
    if not _conv_needs_im2col(o):
        return NONE
    return OpScratch(1, (_im2col(o, x.type),))


def _depthwise(o: _Op) -> OpScratch:
    """depthwise_conv.cc: hybrid (float input, int8 filter) adds the quantized input (int8, the
    input's size), then one float scaling factor and one int32 offset per batch."""
    if not _conv_hybrid(o):
        return NONE
    x = o.input(0)
    batches = x.shape[0]
    return OpScratch(3, (Temporary(0, math.prod(x.shape), ARENA, "input_quantized"),
                         Temporary(1, 4 * batches, ARENA, "scaling_factors"),
                         Temporary(2, 4 * batches, ARENA, "input_offsets")))


def _conv_3d(o: _Op, transposed_filter: bool) -> OpScratch:
    """conv3d.cc (float only): an im2col buffer of [batch x out_d x out_h x out_w,
    filter_d x filter_h x filter_w x in_channels] floats unless the filter is 1x1x1 with unit
    strides; tflite-runtime 2.14 also keeps the filter transposed, in the working
    arena for the node's time (`transposed_filter`). Indices are added only for what is used."""
    x, w, y = o.input(0), o.input(1), o.output()
    if x.type != "FLOAT32" or w.type != "FLOAT32" or len(w.shape) != 5 or len(y.shape) != 5:
        return missing("CONV_3D other than float32")
    # The schema subset does not read Conv3DOptions: unit strides show as an output as large as
    # the input (dilation does nothing to a 1x1x1 filter).
    same_size = tuple(x.shape[1:4]) == tuple(y.shape[1:4])
    temps = []
    if not (same_size and w.shape[0] == w.shape[1] == w.shape[2] == 1):
        positions = y.shape[0] * y.shape[1] * y.shape[2] * y.shape[3]
        temps.append(("im2col", 4 * positions * math.prod(w.shape[:4])))
    if transposed_filter:
        temps.append(("transposed_filter", 4 * math.prod(w.shape)))
    return OpScratch(len(temps), tuple(Temporary(k, n, ARENA, what)
                                       for k, (what, n) in enumerate(temps)))


def _transpose_conv(o: _Op) -> OpScratch:
    """transpose_conv.cc (the generic optimized kernel, registered by default): col2im
    ([input height x width, output channels x filter height x width], float for a float input,
    else int32) and the weights transposed to HWOI are kTfLiteDynamic: heap buffers, sized in
    Prepare, outside the arena; so is the integer kernels' accumulator (one per output element,
    int64 for int16 input, else int32). The hybrid kernel (float input, int8 weights) adds the
    quantized input, and a float scaling factor and an int32 offset per input row (elements /
    input channels), in the arena. Each index is added only where used."""
    shape, w, x = o.input(0), o.input(1), o.input(2)
    if x is None or w is None or len(x.shape) != 4 or len(w.shape) != 4:
        return missing("a TRANSPOSE_CONV of another rank")
    # A computed output shape (not a constant) leaves the output dynamic too (semantics.py);
    # the temporaries are the same, the heap ones sized at Eval.
    col2im_type = "FLOAT32" if x.type == "FLOAT32" else "INT32"
    temps = [("col2im", _bytes(col2im_type, x.shape[1] * x.shape[2] * math.prod(w.shape[:3])),
              DYNAMIC),
             ("transposed_weights", _bytes(w.type, math.prod(w.shape)), DYNAMIC)]
    if x.type in ("UINT8", "INT8", "INT16"):
        acc = "INT64" if x.type == "INT16" else "INT32"
        temps.append(("scratch", _bytes(acc, math.prod(o.output().shape)), DYNAMIC))
    elif x.type == "FLOAT32" and w.type == "INT8":
        rows = math.prod(x.shape) // w.shape[3]
        temps += [("input_quantized", math.prod(x.shape), ARENA),
                  ("scaling_factors", 4 * rows, ARENA),
                  ("input_offsets", 4 * rows, ARENA)]
    elif not (x.type == "FLOAT32" and w.type == "FLOAT32"):
        return missing(f"{x.type} x {w.type} TRANSPOSE_CONV")
    return OpScratch(len(temps), tuple(Temporary(k, n, kind, what)
                                       for k, (what, n, kind) in enumerate(temps)))


# -- reductions ------------------------------------------------------------------------------------

_ACCUMULATOR = {"FLOAT32": "FLOAT32", "INT32": "INT64", "INT64": "INT64", "UINT8": "INT32",
                "INT8": "INT32", "INT16": "INT32", "BOOL": "BOOL"}


def _reduce(o: _Op, accumulates: bool) -> OpScratch:
    x, axis, y = o.input(0), o.input(1), o.output()
    if x.type not in _ACCUMULATOR:
        return missing(f"{x.type} reduction")
    rank = len(x.shape)
    axis_known = axis.is_constant
    index = Temporary(0, 4 * rank, ARENA, "temp_index")
    resolved = Temporary(1, 4 * math.prod(axis.shape), ARENA if axis_known else DYNAMIC,
                         "resolved_axis")
    accum_bytes = _bytes(_ACCUMULATOR[x.type], math.prod(y.shape)) if accumulates else 0
    accum = Temporary(2, accum_bytes, ARENA if axis_known else DYNAMIC, "temp_accum")
    dims = Temporary(3, 4 * rank if x.is_constant else 0, ARENA if x.is_constant else DYNAMIC,
                     "normalized_dims")
    return OpScratch(4, (index, resolved, accum, dims))


# -- matrix products -------------------------------------------------------------------------------

def _fully_connected(o: _Op) -> OpScratch:
    """fully_connected.cc reserves six indices. Float and integer kernels use none; the hybrid
    kernel (float input, int8 weights) uses five: the quantized input (int8, the input's size),
    one float scaling factor and one int32 offset per batch row, an int32 accumulator of
    units x batch rows, and int32 row sums (persistent, one per unit)."""
    x, w = o.input(0), o.input(1)
    if o.option("weights_format", 0) != 0 or w.sparse:
        return missing("shuffled or sparse FULLY_CONNECTED weights")
    if x.type == "FLOAT32" and w.type != "FLOAT32":
        if w.type != "INT8" or len(w.shape) != 2:
            return missing(f"hybrid FULLY_CONNECTED with {w.type} weights")
        units, depth = w.shape
        rows = math.prod(x.shape) // depth
        return OpScratch(6, (Temporary(0, math.prod(x.shape), ARENA, "input_quantized"),
                             Temporary(1, 4 * rows, ARENA, "scaling_factors"),
                             Temporary(2, 4 * units * rows, ARENA, "accum_scratch"),
                             Temporary(3, 4 * rows, ARENA, "input_offsets"),
                             Temporary(4, 4 * units, PERSISTENT, "row_sums")))
    return OpScratch(6, ())  # six indices reserved, none used by float or integer kernels


def _batch_matmul(o: _Op) -> OpScratch:
    """batch_matmul.cc: seven indices reserved; the transposed operands, and for the hybrid
    kernel (float lhs, constant int8 rhs) the quantized lhs, a float scaling factor and an int32
    offset per lhs row, an int32 accumulator of lhs rows x rhs columns, and the rhs's row sums
    (persistent; measured on the coverage matrix, both versions)."""
    lhs, rhs = o.input(0), o.input(1)
    lhs_t = Temporary(0, lhs.nbytes or 0, ARENA, "transposed_lhs")
    rhs_t = Temporary(1, rhs.nbytes or 0, PERSISTENT if rhs.is_constant else ARENA,
                      "transposed_rhs")
    if lhs.type == "FLOAT32" and rhs.type == "INT8":
        if not rhs.is_constant or len(rhs.shape) != 2 or o.option("adj_x", 0) \
                or o.option("adj_y", 0):
            return missing("the hybrid kernel's temporaries (quantized input, scaling factors, accumulators)")
        rows = math.prod(lhs.shape[:-1])
        cols = rhs.shape[1]
        return OpScratch(7, (lhs_t, rhs_t,
                             Temporary(2, math.prod(lhs.shape), ARENA, "input_quantized"),
                             Temporary(3, 4 * rows, ARENA, "scaling_factors"),
                             Temporary(4, 4 * lhs.shape[-2] * cols, ARENA, "accum_scratch"),
                             Temporary(5, 4 * rows, ARENA, "input_offsets"),
                             Temporary(6, 4 * cols, PERSISTENT, "row_sums")))
    return OpScratch(7, (lhs_t, rhs_t))


# -- fused LSTM ------------------------------------------------------------------------------------

def _hybrid_lstm_temporaries(x, n_batch: int, n_cell: int, n_gates: int) -> list[Temporary]:
    """The hybrid kernel's buffers after the float scratch (slot 0), measured on the coverage
    matrix (both versions): the quantized input (the whole input), output state and cell state
    (int8); float scaling factors for the input, the output state and their products, one per
    batch; the recovered cell weights (float, one per cell); an int32 accumulator of
    cells x batch; int32 zero points of the input and the output state, one per batch; and the
    row sums (int32, one row of cells per input and recurrent weight matrix), persistent."""
    sizes = [("input_quantized", math.prod(x.shape), ARENA),
             ("output_state_quantized", n_batch * n_cell, ARENA),
             ("cell_state_quantized", n_batch * n_cell, ARENA),
             ("input_scaling_factors", 4 * n_batch, ARENA),
             ("output_state_scaling_factors", 4 * n_batch, ARENA),
             ("product_scaling_factors", 4 * n_batch, ARENA),
             ("recovered_cell_weights", 4 * n_cell, ARENA),
             ("accum_scratch", 4 * n_cell * n_batch, ARENA),
             ("input_zero_points", 4 * n_batch, ARENA),
             ("output_state_zero_points", 4 * n_batch, ARENA),
             ("row_sums", 4 * 2 * (n_gates - 1) * n_cell, PERSISTENT)]
    return [Temporary(k, n, kind, what) for k, (what, n, kind) in enumerate(sizes, 1)]


def _lstm_shape(o: _Op, sequence: bool) -> tuple[int, int, int] | str:
    """(batch, cells, gates), or why the kernel's form is not modelled."""
    x, w_out = o.input(0), o.input(4)  # input, input_to_output weights
    if x is None or w_out is None or len(x.shape) != (3 if sequence else 2):
        return "an LSTM input of another rank"
    if o.input(16) is not None or any(o.input(k) is not None for k in range(20, 24)):
        return "projection or layer normalisation"
    if any(o.input(k) is not None for k in (9, 10, 11)):
        return "peephole weights"
    n_batch = x.shape[1] if sequence and o.option("time_major", 0) else x.shape[0]
    return n_batch, w_out.shape[0], 4 if o.input(1) is None else 5


def _integer_lstm_temporaries(n_batch: int, n_cell: int) -> tuple[Temporary, ...]:
    """The 8x8->16 integer LSTM kernels' six [batch, cells] buffers: four int16, int8, int32."""
    kinds = ("INT16",) * 4 + ("INT8", "INT32")
    return tuple(Temporary(k, _bytes(t, n_batch * n_cell), ARENA, f"scratch_{k}")
                 for k, t in enumerate(kinds))


def _sequence_lstm(o: _Op) -> OpScratch:
    """unidirectional_sequence_lstm.cc: Init reserves twelve indices; Prepare uses one float
    scratch buffer of [batch, cells x 5 + 16] (x 4 + 16 without an input gate, CIFG) for float
    and hybrid, then the hybrid kernel's buffers (_hybrid_lstm_temporaries), and six
    [batch, cells] buffers (four int16, one int8, one int32) for the 8x8->16 integer kernel."""
    x, w_out = o.input(0), o.input(4)
    if x is not None and w_out is not None and x.type == "INT8" and w_out.type == "INT8" \
            and len(x.shape) == 3:
        n_batch = x.shape[1] if o.option("time_major", 0) else x.shape[0]
        return OpScratch(12, _integer_lstm_temporaries(n_batch, w_out.shape[0]))
    shape = _lstm_shape(o, sequence=True)
    if isinstance(shape, str):
        return missing(shape)
    n_batch, n_cell, gates = shape
    scratch = Temporary(0, _bytes("FLOAT32", n_batch * (n_cell * gates + 16)), ARENA,
                        "scratch_buffer")
    if x.type == "FLOAT32" and w_out.type == "FLOAT32":
        return OpScratch(12, (scratch,))
    if x.type == "FLOAT32" and w_out.type == "INT8" and gates == 5:
        return OpScratch(12, (scratch, *_hybrid_lstm_temporaries(x, n_batch, n_cell, gates)))
    return missing(f"{x.type} x {w_out.type} LSTM")


def _lstm(o: _Op) -> OpScratch:
    """lstm.cc (one step, full kernel): 21 indices reserved; a float scratch buffer of
    [batch, cells x 5] (no +16, unlike the sequence kernel), then the hybrid kernel's buffers
    as the sequence kernel's, or the 8x8->16 integer kernel's six (measured on the coverage
    matrix, both versions)."""
    x, w_out = o.input(0), o.input(4)
    if x is not None and w_out is not None and x.type == "INT8" and w_out.type == "INT8" \
            and len(x.shape) == 2:
        # The 8x8->16 integer kernel: the sequence kernel's six [batch, cells] buffers (measured
        # on the coverage matrix, both versions).
        return OpScratch(21, _integer_lstm_temporaries(x.shape[0], w_out.shape[0]))
    shape = _lstm_shape(o, sequence=False)
    if isinstance(shape, str):
        return missing(shape)
    n_batch, n_cell, gates = shape
    if gates != 5:
        return missing("an LSTM without an input gate (CIFG)")
    scratch = Temporary(0, _bytes("FLOAT32", n_batch * n_cell * gates), ARENA, "scratch_buffer")
    if x.type == "FLOAT32" and w_out.type == "FLOAT32":
        return OpScratch(21, (scratch,))
    if x.type == "FLOAT32" and w_out.type == "INT8":
        return OpScratch(21, (scratch, *_hybrid_lstm_temporaries(x, n_batch, n_cell, gates)))
    return missing(f"{x.type} x {w_out.type} LSTM")


def _bidirectional_lstm(o: _Op) -> OpScratch:
    """bidirectional_sequence_lstm.cc: Init reserves nineteen indices. Float and hybrid use two
    float scratch buffers: the forward one [batch, cells x 5 + 16] (x 4 + 16 without an input
    gate), the backward one [batch, cells x 5] (x 4), without the 16. The hybrid kernel adds,
    in slot order: the quantized input (the whole input), each direction's quantized output and
    cell states (bw after fw, output states first), four float scaling factors per batch
    (input, auxiliary input, output state, product), the recovered cell weights (float, one per
    forward cell), an int32 accumulator of cells x batch, three float zero points per batch
    (input, auxiliary input, output state), and each direction's row sums (int32, 8 rows of
    cells, 6 without an input gate; persistent)."""
    x, fw_out, bw_out = o.input(0), o.input(4), o.input(21)
    if x is None or fw_out is None or bw_out is None or len(x.shape) != 3:
        return missing("a BIDIRECTIONAL_SEQUENCE_LSTM input of another rank")
    if any(o.input(k) is not None for k in (16, 33, *range(39, 48))):
        return missing("projection weights or an auxiliary input")
    n_batch = x.shape[1] if o.option("time_major", 0) else x.shape[0]
    fw_cell, bw_cell = fw_out.shape[0], bw_out.shape[0]
    fw_gates = 4 if o.input(1) is None else 5
    bw_gates = 4 if o.input(18) is None else 5
    sizes = [("fw_scratch_buffer", 4 * n_batch * (fw_cell * fw_gates + 16), ARENA),
             ("bw_scratch_buffer", 4 * n_batch * bw_cell * bw_gates, ARENA)]
    if x.type == "FLOAT32" and fw_out.type == "FLOAT32":
        return OpScratch(19, tuple(Temporary(k, n, kind, what)
                                   for k, (what, n, kind) in enumerate(sizes)))
    if x.type != "FLOAT32" or fw_out.type not in ("INT8", "UINT8"):
        return missing(f"{x.type} x {fw_out.type} BIDIRECTIONAL_SEQUENCE_LSTM")
    sizes += [("input_quantized", math.prod(x.shape), ARENA),
              ("fw_output_state_quantized", n_batch * fw_cell, ARENA),
              ("bw_output_state_quantized", n_batch * bw_cell, ARENA),
              ("fw_cell_state_quantized", n_batch * fw_cell, ARENA),
              ("bw_cell_state_quantized", n_batch * bw_cell, ARENA)]
    sizes += [(what, 4 * n_batch, ARENA) for what in (
        "input_scaling_factors", "aux_input_scaling_factors", "output_state_scaling_factors",
        "product_scaling_factors")]
    sizes += [("recovered_cell_weights", 4 * fw_cell, ARENA),
              ("accum_scratch", 4 * max(fw_cell, bw_cell) * n_batch, ARENA)]
    sizes += [(what, 4 * n_batch, ARENA) for what in (
        "input_zero_points", "aux_input_zero_points", "output_state_zero_points")]
    sizes += [("fw_row_sums", 4 * (2 * fw_gates - 2) * fw_cell, PERSISTENT),
              ("bw_row_sums", 4 * (2 * bw_gates - 2) * bw_cell, PERSISTENT)]
    return OpScratch(19, tuple(Temporary(k, n, kind, what)
                               for k, (what, n, kind) in enumerate(sizes)))


# -- SVDF ------------------------------------------------------------------------------------------

def _svdf(o: _Op) -> OpScratch:
    """svdf.cc: six indices reserved; float uses one [batch, filters] float scratch, the integer
    kernel a [batch, filters] int32 scratch and a [units, batch] int32 output buffer (measured on
    keyword_scrambled_8bit). The hybrid kernel (float input, int8 weights) is not modelled."""
    x, w = o.input(0), o.input(1)  # input [batch, input], weights_feature [filters, input]
    if x is None or w is None or len(x.shape) != 2 or len(w.shape) != 2:
        return missing("an SVDF without 2-d input and weights")
    batch, filters = x.shape[0], w.shape[0]
    rank = max(o.option("rank", 1), 1)
    if x.type == "FLOAT32" and w.type == "FLOAT32":
        return OpScratch(6, (Temporary(0, 4 * batch * filters, ARENA, "scratch"),))
    if x.type == "INT8" and w.type == "INT8":
        return OpScratch(6, (Temporary(0, 4 * batch * filters, ARENA, "scratch"),
                             Temporary(1, 4 * (filters // rank) * batch, ARENA, "output_temp")))
    if x.type == "FLOAT32" and w.type == "INT8":
        # The hybrid kernel (measured on the coverage matrix, both versions): the float
        # scratch, the quantized input, a scaling factor per batch, the time weights dequantized
        # (persistent), an int32 zero point per batch and the feature weights' row sums
        # (persistent).
        return OpScratch(6, (Temporary(0, 4 * batch * filters, ARENA, "scratch"),
                             Temporary(1, math.prod(x.shape), ARENA, "input_quantized"),
                             Temporary(2, 4 * batch, ARENA, "scaling_factors"),
                             Temporary(3, 4 * math.prod(o.input(2).shape), PERSISTENT,
                                       "float_weights_time"),
                             Temporary(4, 4 * batch, ARENA, "zero_points"),
                             Temporary(5, 4 * filters, PERSISTENT, "row_sums")))
    return missing(f"{x.type} x {w.type} SVDF")


def _rnn(o: _Op, directions: int = 1) -> OpScratch:
    """RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN: no temporaries in float.
    The hybrid kernel (float input, int8 weights; measured on the coverage matrix, both
    versions) adds the quantized input (the whole input), each direction's quantized hidden
    state, a float scaling factor per batch, an int32 accumulator of units x batch, an int32
    zero point per batch, and per direction the row sums of its two weight matrices
    (persistent)."""
    x, w = o.input(0), o.input(1)
    if x.type != "FLOAT32" or w is None or w.type not in ("INT8", "UINT8"):
        return NONE
    if len(w.shape) != 2 or directions == 2 and o.input(9) is not None:
        return missing("an RNN of another form (an auxiliary input)")
    units = w.shape[0]
    batch = x.shape[1] if o.option("time_major", 0) and len(x.shape) == 3 else x.shape[0]
    temps = [("input_quantized", math.prod(x.shape), ARENA)]
    temps += [(f"hidden_state_quantized_{d}", batch * units, ARENA) for d in range(directions)]
    temps += [("scaling_factors", 4 * batch, ARENA), ("accum_scratch", 4 * units * batch, ARENA),
              ("zero_points", 4 * batch, ARENA)]
    temps += [(f"row_sums_{d}", 4 * 2 * units, PERSISTENT) for d in range(directions)]
    return OpScratch(len(temps), tuple(Temporary(k, n, kind, what)
                                       for k, (what, n, kind) in enumerate(temps)))


def has_dynamic_tensors(model: Model, subgraph: int) -> bool:
    """A tensor of the subgraph TFLite sizes while running (kTfLiteDynamic), handles aside."""
    sg = model.subgraphs[subgraph]
    category = _classify(model, sg, TFLITE)
    return any(c == DYNAMIC_TENSOR and sg.tensors[t].type not in ("RESOURCE", "VARIANT")
               for t, c in category.items())


def _while_litert(o: _Op) -> OpScratch:
    """WHILE adds nothing. In a body holding a dynamic tensor, ai-edge-litert gives that tensor
    (a RESHAPE's output, its shape computed in the body) a place of its own in the body's arena
    at allocate_tensors(), and the tensors around it move; tflite-runtime 2.14 leaves it
    unallocated, as modelled (measured on the coverage matrix). Which kernel or planner step
    does so is not known: named, not modelled."""
    body = o.op.subgraphs[1] if len(o.op.subgraphs) >= 2 else None
    if o.model is not None and body is not None:
        if has_dynamic_tensors(o.model, body):
            return missing("a body's dynamic tensor gets a place in the body's arena at "
                           "allocate_tensors() (2.14 leaves it unallocated); not modelled")
    return NONE


def _add_n(o: _Op) -> OpScratch:
    """add_n.cc: one scratch buffer of the output's size per thread (one: the interpreter's
    default)."""
    return OpScratch(1, (Temporary(0, o.output().nbytes or 0, ARENA, "scratch"),))


def _detection_postprocess(o: _Op) -> OpScratch:
    """detection_postprocess.cc (a custom op the wheels register): Init adds two indices;
    Prepare uses both, in the arena: the decoded boxes ([boxes, 4] float) and the scores
    ([boxes, classes with background] float)."""
    boxes, scores = o.input(0), o.input(1)
    if boxes is None or scores is None or len(boxes.shape) != 3 or len(scores.shape) != 3:
        return missing("TFLite_Detection_PostProcess inputs of another rank")
    return OpScratch(2, (Temporary(0, 4 * boxes.shape[1] * 4, ARENA, "decoded_boxes"),
                         Temporary(1, 4 * scores.shape[1] * scores.shape[2], ARENA, "scores")))


Rule = Callable[[_Op], OpScratch]

# Kernels that reserve their tensor indices in Init (context->AddTensors when the node is built),
# however many they use: op name -> indices reserved. Every node's Init runs before any node's
# Prepare, so these indices come first, in node order, and the indices kernels add in Prepare
# follow (measured on both versions: a CONV_2D that adds its temporary in Prepare, then each of
# these ops; tests/compare/test_init_reserved_indices.py). Which index a temporary gets decides
# where it falls in the planner's per-node unordered_set, and so the order of equal-size tensors.
def _rfft2d(o: _Op) -> OpScratch:
    """rfft2d.cc: two arena temporaries for fft2d's working areas, sized from the constant
    fft_length [h, w] with n = max(h, w / 2): int32 [2 + floor(sqrt(n))], and doubles held as
    int64 [n / 2 + w / 4]. A computed fft_length leaves both (and the output) dynamic."""
    length = o.input(1)
    if length is None or not length.is_constant or o.model is None:
        return missing("fft_length not constant (its working areas are sized at Eval)")
    raw = o.model.buffer_bytes(length.buffer)
    if length.type != "INT32" or len(raw) != 8:
        return missing("fft_length not two int32 values")
    h, w = (int(v) for v in np.frombuffer(raw, dtype="<i4"))
    n = max(h, w // 2)
    return OpScratch(2, (
        Temporary(0, _bytes("INT32", 2 + int(math.sqrt(n))), ARENA, "fft_integer_working_area"),
        Temporary(1, _bytes("INT64", n // 2 + w // 4), ARENA, "fft_double_working_area")))


_INIT_RESERVED = {"ADD_N": 1, "RNN": 6, "UNIDIRECTIONAL_SEQUENCE_RNN": 6,
                  "BIDIRECTIONAL_SEQUENCE_RNN": 9, "SVDF": 6, "UNIDIRECTIONAL_SEQUENCE_LSTM": 12,
                  "LSTM": 21}
# tflite-runtime 2.14 also reserves in Init for FULLY_CONNECTED, BATCH_MATMUL and the reductions
# (reduce.cc's one Init), which ai-edge-litert does in Prepare.
_REDUCTIONS = ("MEAN", "SUM", "REDUCE_PROD", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_ANY",
               "REDUCE_ALL")
_INIT_RESERVED_214 = {**_INIT_RESERVED, "FULLY_CONNECTED": 6, "BATCH_MATMUL": 7,
                      **{op: 4 for op in _REDUCTIONS}}


@dataclass(frozen=True)
class ScratchRules:
    name: str
    description: str
    rules: Mapping[str, Rule]
    no_temporaries: frozenset[str]
    # A view op (RESHAPE...) whose output is dynamic still points its output at its input's
    # buffer when prepared (ai-edge-litert); tflite-runtime 2.14 leaves it unallocated.
    dynamic_views_share_input: bool = False
    reserved_at_init: Mapping[str, int] = field(default_factory=dict)  # op -> indices (Init)

    def for_op(self, sg: Subgraph, op: Operator, model: Model | None = None) -> OpScratch:
        rule = self.rules.get(op.name)
        if rule is not None:
            return rule(_Op(sg, op, model))
        return NONE if op.name in self.no_temporaries else UNKNOWN


# Kernels whose temporaries are the same code in both builds; CONV_2D differs (im2col or Eigen).
_SHARED_RULES = {
    "DEPTHWISE_CONV_2D": _depthwise, "MEAN": lambda o: _reduce(o, True),
    "SUM": lambda o: _reduce(o, True), "REDUCE_PROD": lambda o: _reduce(o, True),
    "REDUCE_MAX": lambda o: _reduce(o, False), "REDUCE_MIN": lambda o: _reduce(o, False),
    "REDUCE_ANY": lambda o: _reduce(o, False), "REDUCE_ALL": lambda o: _reduce(o, False),
    "FULLY_CONNECTED": _fully_connected, "ADD_N": _add_n,
    "RNN": _rnn, "UNIDIRECTIONAL_SEQUENCE_RNN": _rnn,
    "BIDIRECTIONAL_SEQUENCE_RNN": lambda o: _rnn(o, directions=2),
    "TRANSPOSE_CONV": _transpose_conv,
    "LSTM": _lstm,
    "BIDIRECTIONAL_SEQUENCE_LSTM": _bidirectional_lstm,
    "BATCH_MATMUL": _batch_matmul, "UNIDIRECTIONAL_SEQUENCE_LSTM": _sequence_lstm, "SVDF": _svdf,
    "TFLite_Detection_PostProcess": _detection_postprocess, "RFFT2D": _rfft2d,
    # stablehlo_reduce_window.cc reserves two arena temporaries at Init: the input dilated by
    # base_dilations, then that padded; both sizes come from builtin_options_2.
    "STABLEHLO_REDUCE_WINDOW": lambda o: missing(
        "its two arena temporaries (the input dilated by base_dilations, then padded) are "
        "sized from builtin_options_2, which is not read; not modelled"),
    "STABLEHLO_COMPOSITE": lambda o: missing(
        "its decomposition subgraph (builtin_options_2, not read) is allocated as a called "
        "subgraph; not modelled"),
}

LITERT = ScratchRules(
    name="litert",
    description="ai-edge-litert 2.x kernels (ruy build: generic optimized CONV_2D)",
    rules={**_SHARED_RULES, "CONV_2D": _conv_litert, "CONV_3D": lambda o: _conv_3d(o, False),
           "WHILE": _while_litert,
           "RFFT2D": lambda o: missing("its temporaries are not rfft2d.cc's two working areas of "
                                       "2.14 (measured larger); not modelled")},
    no_temporaries=_NO_TEMPORARIES,
    dynamic_views_share_input=True,
    reserved_at_init=_INIT_RESERVED,
)

TFLITE_EIGEN = ScratchRules(
    name="tflite-eigen",
    description="tflite-runtime <= 2.14 kernels (multithreaded Eigen CONV_2D)",
    # Reductions and matrix products are the same kernel code in both builds (checked against
    # tflite-runtime 2.14.0 on the fixtures, tests/compare/test_compare_tflite214.py).
    rules={**_SHARED_RULES, "CONV_2D": _conv_eigen, "CONV_3D": lambda o: _conv_3d(o, True)},
    no_temporaries=_NO_TEMPORARIES - {"FULLY_CONNECTED", "MEAN", "SUM", "BATCH_MATMUL"},
    reserved_at_init=_INIT_RESERVED_214,
)


def rules_for(runtime: str, version: str) -> ScratchRules:
    """The rule set for a measured runtime package ("ai-edge-litert" or "tflite-runtime")."""
    return LITERT if runtime == "ai-edge-litert" else TFLITE_EIGEN


def first_indices(sg: Subgraph, scratch: list[OpScratch], rules: ScratchRules,
                  prepared: int) -> list[int]:
    """Each node's first added tensor index: the nodes whose kernel reserves in Init first, in
    node order (all of them: Init runs for every node), then the others' Prepare additions, in
    node order, for the nodes prepared."""
    first = [0] * len(scratch)
    next_index = len(sg.tensors)
    for i, op in enumerate(sg.operators):
        if op.name in rules.reserved_at_init:
            first[i] = next_index
            next_index += rules.reserved_at_init[op.name]
    for i, op in enumerate(sg.operators):
        if op.name not in rules.reserved_at_init:
            first[i] = next_index
            if i < prepared:
                next_index += scratch[i].added
    return first


def subgraph_scratch(model: Model, subgraph: int, rules: ScratchRules) -> list[OpScratch]:
    sg = model.subgraphs[subgraph]
    return [rules.for_op(sg, op, model) for op in sg.operators]
