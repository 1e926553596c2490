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
    "CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "BATCH_MATMUL",
})


def _reduce(sg: Subgraph, op: Operator) -> list[ScratchRequest]:
    x, axis = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]]
    out = []
    if x.type in ("INT8", "INT16"):
        y = sg.tensors[op.outputs[0]]
        out.append(ScratchRequest(4 * math.prod(y.shape), "temp_sum"))
    out.append(ScratchRequest(4 * len(x.shape), "temp_index"))
    out.append(ScratchRequest(4 * math.prod(axis.shape), "resolved_axis"))
    return out


_RULES = {"MEAN": _reduce, "SUM": _reduce, "REDUCE_MAX": _reduce, "REDUCE_MIN": _reduce}


def requests(sg: Subgraph, op: Operator) -> tuple[list[ScratchRequest], bool]:
    """(the op's requests in order, whether the rule is known)."""
    rule = _RULES.get(op.name)
    if rule is not None:
        return rule(sg, op), True
    return [], op.name in _NO_REQUESTS


def scratch_records(model: Model, op_scopes, size_rounding: int) -> tuple[list[UsageRecord], list[str], list[str]]:
    """(a record per scratch request, alive over its op's scopes; the op of each; the ops whose
    requests are not known), subgraphs in order, ops in order, as the kernels ask for them."""
    records, names, uncovered = [], [], set()
    for s, sg in enumerate(model.subgraphs):
        for i, op in enumerate(sg.operators):
            if (s, i) not in op_scopes:
                continue  # a subgraph no op runs: TFLite Micro never prepares it either
            wanted, known = requests(sg, op)
            if not known:
                uncovered.add(op.name)
            first, last = op_scopes[(s, i)]
            for request in wanted:
                records.append(UsageRecord(SCRATCH_ID_BASE + len(records), first, last,
                                           align_up(request.nbytes, size_rounding)))
                names.append(op.name)
    return records, names, sorted(uncovered)
