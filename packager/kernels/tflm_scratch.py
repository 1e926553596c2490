"""Scratch buffers TFLite Micro's kernels request in Prepare (`RequestScratchBufferInArena`).

The memory planner places each one in the head beside the tensors, alive over its op's scopes
(children included). Rules for the reference kernels of the `tflite-micro` Python package, found
by measurement on one-op models (a float MEAN over [1,4,4,8] needs 32 bytes more head than its
tensors: a temp index of one int per input dimension and the resolved axes, one int per axis),
and the upstream sources (tensorflow/lite/micro/kernels/reduce_common.cc).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from packager.kernels import tflm_cmsis_nn
from packager.model import Model, Operator, Subgraph
from packager.plan.records import UsageRecord, align_up

SCRATCH_ID_BASE = 1 << 30  # record ids of scratch buffers: past any global tensor id


@dataclass(frozen=True)
class ScratchRequest:
    nbytes: int
    what: str


# Ops whose reference kernels request nothing (seen on the fixtures and the shared models).
_NO_REQUESTS = frozenset({
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL", "DIV", "RELU",
    "RELU6", "PRELU", "LEAKY_RELU", "LOGISTIC", "TANH", "SOFTMAX", "PAD", "PADV2", "MAX_POOL_2D",
    "AVERAGE_POOL_2D", "CONCATENATION", "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "TRANSPOSE",
    "STRIDED_SLICE", "SPLIT", "PACK", "UNPACK", "CAST", "GATHER", "RESIZE_BILINEAR",
    "RESIZE_NEAREST_NEIGHBOR", "QUANTIZE", "DEQUANTIZE", "GREATER", "LESS", "IF", "WHILE",
    "CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "BATCH_MATMUL", "MAXIMUM",
    "MINIMUM", "SVDF", "QUANTIZE",
    # The rest of the pinned build's op resolver whose kernels request no scratch buffer
    # (tensorflow/lite/micro/kernels/*.cc: no RequestScratchBufferInArena).
    "SPLIT_V", "HARD_SWISH", "ABS", "RSQRT", "ELU", "L2_NORMALIZATION", "SQUARED_DIFFERENCE",
    "SELECT_V2", "LOG_SOFTMAX", "CUMSUM", "EMBEDDING_LOOKUP", "GATHER_ND", "DEPTH_TO_SPACE",
    "SPACE_TO_DEPTH", "L2_POOL_2D", "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND", "BROADCAST_ARGS",
    "BROADCAST_TO", "CEIL", "COS", "EXP", "FLOOR", "FLOOR_DIV", "FLOOR_MOD", "LOG", "LOGICAL_AND",
    "LOGICAL_NOT", "LOGICAL_OR", "NEG", "REVERSE_V2", "ROUND", "SIN", "SLICE", "SQRT", "SQUARE",
    "DYNAMIC_UPDATE_SLICE", "ARG_MAX", "ARG_MIN", "SHAPE", "FILL", "ZEROS_LIKE", "EQUAL",
    "NOT_EQUAL", "GREATER_EQUAL", "LESS_EQUAL",
})


def _reduce(sg: Subgraph, op: Operator) -> list[ScratchRequest]:
    x, axis = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]]
    out = []
    if x.type in ("INT8", "INT16") and op.name in ("MEAN", "SUM"):  # MIN/MAX/ALL sum nothing
        y = sg.tensors[op.outputs[0]]
        out.append(ScratchRequest(4 * math.prod(y.shape), "temp_sum"))
    out.append(ScratchRequest(4 * len(x.shape), "temp_index"))
    out.append(ScratchRequest(4 * math.prod(axis.shape), "resolved_axis"))
    return out


def _svdf(sg: Subgraph, op: Operator) -> list[ScratchRequest]:
    """svdf_common.cc: int8 asks for the filters' and the units' int32 sums, float for the
    filters' only."""
    x, weights = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]]
    batch, filters = x.shape[0], weights.shape[0]
    rank = int(op.options.get("rank", 1) or 1)
    out = [ScratchRequest(4 * batch * filters, "filter sums")]
    if x.type == "INT8":
        out.append(ScratchRequest(4 * batch * (filters // rank), "unit sums"))
    return out


def _lstm(sg: Subgraph, op: Operator) -> list[ScratchRequest]:
    """unidirectional_sequence_lstm.cc: four gate buffers of batch x state in the cell state's
    type (float32, or int16 for quantized models)."""
    x, hidden, cell = (sg.tensors[op.inputs[i]] for i in (0, 18, 19))
    batch = x.shape[1] if op.options.get("time_major") else x.shape[0]
    element = 2 if cell.type == "INT16" else 4
    return [ScratchRequest(batch * hidden.shape[-1] * element, f"gate buffer {i}") for i in range(4)]


def _transpose_conv(sg: Subgraph, op: Operator) -> list[ScratchRequest]:
    """transpose_conv.cc: int8 accumulates in int32, int16 in int64 (and converts an int16 bias
    to int64)."""
    x, y = sg.tensors[op.inputs[2]], sg.tensors[op.outputs[0]]
    out = []
    if x.type == "INT16" and len(op.inputs) > 3 and op.inputs[3] >= 0 \
            and sg.tensors[op.inputs[3]].type == "INT16":
        out.append(ScratchRequest(8 * math.prod(sg.tensors[op.inputs[3]].shape), "int64 bias"))
    if x.type == "INT8":
        out.append(ScratchRequest(4 * math.prod(y.shape), "int32 accumulators"))
    elif x.type == "INT16":
        out.append(ScratchRequest(8 * math.prod(y.shape), "int64 accumulators"))
    return out


def _mirror_pad(sg: Subgraph, op: Operator) -> list[ScratchRequest]:
    """mirror_pad.cc: an int per input dimension, twice (output and input element counts)."""
    rank = len(sg.tensors[op.inputs[0]].shape)
    return [ScratchRequest(4 * rank, "output dims elements"), ScratchRequest(4 * rank, "input dims elements")]


def _add_n(sg: Subgraph, op: Operator, pointer: int = 8) -> list[ScratchRequest]:
    """add_n.cc: a pointer per input (`sizeof(float*)` or `sizeof(int8_t*)`: 8 bytes on the
    64-bit build, 4 on a 32-bit target)."""
    return [ScratchRequest(pointer * len(op.inputs), "input pointers")]


def _int4_filter(sg: Subgraph, op: Operator) -> list[ScratchRequest]:
    """conv_common.cc, depthwise_conv_common.cc: an int4 filter is unpacked at Eval into a
    scratch buffer of one byte per filter element; other filters ask for nothing."""
    w = sg.tensors[op.inputs[1]]
    if w.type != "INT4":
        return []
    return [ScratchRequest(math.prod(w.shape), "unpacked int4 filter")]


_RULES = {"MEAN": _reduce, "REDUCE_ALL": _reduce, "MIRROR_PAD": _mirror_pad, "ADD_N": _add_n, "SUM": _reduce, "REDUCE_MAX": _reduce, "REDUCE_MIN": _reduce,
          "SVDF": _svdf, "UNIDIRECTIONAL_SEQUENCE_LSTM": _lstm, "TRANSPOSE_CONV": _transpose_conv,
          "CONV_2D": _int4_filter, "DEPTHWISE_CONV_2D": _int4_filter}


# Rules whose sizes count pointers: they take the target's pointer size too.
_READS_POINTER = frozenset({"ADD_N"})


def reads_pointer(model: Model) -> bool:
    """Whether a kernel of the model asks for scratch sized in pointers (the head then differs
    between a 64-bit and a 32-bit build)."""
    return any(op.name in _READS_POINTER for sg in model.subgraphs for op in sg.operators)


def requests(sg: Subgraph, op: Operator, model=None, s: int = 0,
             cmsis_nn: str = "", pointer: int = 8) -> tuple[list[ScratchRequest], bool]:
    """(the op's requests in order, whether the rule is known). `model` and `s` (the subgraph's
    index) are needed for custom ops whose requests depend on their custom options. `cmsis_nn`:
    the core family of a CMSIS-NN build (kernels/tflm_cmsis_nn.py), "" for reference kernels.
    `pointer`: the build's bytes of a pointer (8: the host's)."""
    if cmsis_nn and not op.opcode.is_custom and op.name in tflm_cmsis_nn.REPLACED:
        wanted = tflm_cmsis_nn.scratch_requests(sg, op, cmsis_nn)
        if wanted is None:
            return [], False
        return [ScratchRequest(r.nbytes, r.what) for r in wanted], True
    rule = _RULES.get(op.name)
    if rule is not None:
        return (rule(sg, op, pointer) if op.name in _READS_POINTER else rule(sg, op)), True
    if model is not None and op.opcode.is_custom:
        from packager.kernels import tflm_custom_ops
        sizes = tflm_custom_ops.scratch_requests(model, s, op)
        if sizes is not None:
            return [ScratchRequest(n, f"{op.name} scratch") for n in sizes], True
        from packager.kernels import tflm_signal
        sizes = tflm_signal.scratch_requests(model, s, op)
        if sizes is not None:
            return [ScratchRequest(n, f"{op.name} scratch") for n in sizes], True
    return [], op.name in _NO_REQUESTS


def scratch_records(model: Model, op_scopes, size_rounding: int, cmsis_nn: str = "",
                    pointer: int = 8) -> tuple[list[UsageRecord], list[str], list[str]]:
    """(a record per scratch request, alive over its op's scopes; the op of each; the ops whose
    requests are not known), subgraphs in order, ops in order, as the kernels ask for them.
    `cmsis_nn`, `pointer`: as for requests()."""
    records, names, uncovered = [], [], set()
    quiet: dict[int, bool] = {}  # id(op code) -> its kernel requests nothing (the op's figures)
    for s, sg in enumerate(model.subgraphs):
        for i, op in enumerate(sg.operators):
            code = op.opcode
            nothing = quiet.get(id(code))
            if nothing is None:
                nothing = quiet[id(code)] = (code.name not in _RULES and not code.is_custom
                                             and code.name in _NO_REQUESTS
                                             and not (cmsis_nn and code.name in tflm_cmsis_nn.REPLACED))
            if nothing:
                continue  # requests() gives ([], True): no record, nothing uncovered
            if (s, i) not in op_scopes:
                continue  # a subgraph no op runs: TFLite Micro never prepares it either
            wanted, known = requests(sg, op, model, s, cmsis_nn, pointer)
            if not known:
                uncovered.add(op.name)
            first, last = op_scopes[(s, i)]
            for request in wanted:
                records.append(UsageRecord(SCRATCH_ID_BASE + len(records), first, last,
                                           align_up(request.nbytes, size_rounding)))
                names.append(op.name)
    return records, names, sorted(uncovered)
