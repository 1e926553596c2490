"""The operands every command relies on, checked once when a model is read.

The kernels' rules (packager/kernels/), the lifetime rules and the dynamic-shape rules read an
op's operands by position (a convolution's filter is input 1, an LSTM's cell state input 19) and
its shapes by axis. A file whose op lacks one, or gives it fewer dimensions than the runtime
requires, is refused here, with the same verdict for every command, rather than failing deep
inside one command's rule. The requirements are TFLite's own (each kernel's Prepare checks them),
kept to what our rules read: a required operand present (not -1) and at least the rank read.
"""

from __future__ import annotations

from operator import attrgetter, itemgetter

import numpy as np

from packager.errors import ModelError
from packager.model import Subgraph

# op -> ({input position: least rank}, {output position: least rank}); an operand named here
# must be present (not the -1 of an absent optional operand).
_CONV = ({0: 4, 1: 4}, {0: 4})
_REDUCE = ({0: 0, 1: 0}, {0: 0})
OPERANDS: dict[str, tuple[dict[int, int], dict[int, int]]] = {
    "CONV_2D": _CONV,
    "DEPTHWISE_CONV_2D": _CONV,
    "TRANSPOSE_CONV": ({1: 4, 2: 4}, {0: 4}),
    "FULLY_CONNECTED": ({0: 0, 1: 2}, {0: 0}),
    "SOFTMAX": ({0: 0}, {0: 0}),
    "BATCH_MATMUL": ({0: 2, 1: 2}, {0: 0}),
    **{name: _REDUCE for name in ("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD",
                                  "REDUCE_ANY", "REDUCE_ALL")},
    "MIRROR_PAD": ({0: 0, 1: 0}, {0: 0}),
    # svdf.cc: input [batch, input size], weights_feature [filters, input size].
    "SVDF": ({0: 2, 1: 2, 2: 0, 4: 0}, {0: 0}),
    # unidirectional_sequence_lstm.cc: input [time, batch, n] or [batch, time, n]; the
    # input-to-output weights [cells, n]; the output state and cell state (18, 19) [batch, cells].
    "UNIDIRECTIONAL_SEQUENCE_LSTM": ({0: 3, 4: 2, 18: 2, 19: 2}, {0: 0}),
    **{name: ({}, {0: 0}) for name in ("GATHER", "GATHER_ND", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH",
                                       "L2_POOL_2D", "EMBEDDING_LOOKUP", "LOG_SOFTMAX", "CUMSUM",
                                       "ADD_N")},
}


def check_operands(sg: Subgraph) -> None:
    """ModelError naming an op of `sg` that lacks an operand our rules read, or whose
    operand has fewer dimensions than its kernel requires. Checked a column at a time over the
    ops of one kind (a model of 100,000 fully connected layers is read in about half a second;
    a loop over its ops in Python would add a quarter to that)."""
    codes = {c for c in set(map(attrgetter("opcode"), sg.operators)) if c.name in OPERANDS and not c.is_custom}
    if not codes:
        return
    ranks = np.fromiter(map(len, map(attrgetter("shape"), sg.tensors)), dtype=np.int64, count=len(sg.tensors))
    for code in sorted(codes, key=attrgetter("name")):
        ops = [op for op in sg.operators if op.opcode is code or op.opcode == code]
        for kind, field, wanted in (("input", "inputs", OPERANDS[code.name][0]),
                                    ("output", "outputs", OPERANDS[code.name][1])):
            lists = list(map(attrgetter(field), ops))
            lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
            for position, rank in wanted.items():
                ids = np.full(len(lists), -1, dtype=np.int64)
                long_enough = lengths > position
                ids[long_enough] = list(map(itemgetter(position), (lists[k] for k in np.flatnonzero(long_enough))))
                bad = (ids < 0) | (ranks[np.maximum(ids, 0)] < rank) if len(ranks) else ids < 0
                if bad.any():
                    _refuse(sg, ops[int(np.flatnonzero(bad)[0])], kind, field, position, rank)


def _refuse(sg: Subgraph, op, kind: str, field: str, position: int, rank: int) -> None:
    ids = getattr(op, field)
    where = f"subgraph {sg.index} operator {op.index} ({op.name})"
    if position >= len(ids) or ids[position] < 0:
        raise ModelError(f"{where} has no {kind} {position} ({len(ids)} {kind}s given), "
                         f"which the op requires")
    shape = sg.tensors[ids[position]].shape
    raise ModelError(f"{where}: {kind} {position} has {len(shape)} dimensions; "
                     f"the op requires at least {rank}")
