"""Sequence models whose RESHAPE targets are computed in the graph, as converters write them: the
test models for deriving symbols instead of asking for them."""

from __future__ import annotations

import numpy as np

from fixtures.builder import ModelBuilder


def _tokens(g, stored: int):
    return g.tensor("tokens", [1, stored, 16], shape_signature=[1, -1, 16])


def sequence_reshapes() -> bytes:
    """tokens [1, T, 16] -> reshape to [T, -1] (T read with SHAPE) -> RELU -> reshape to
    [-1, 4, 16] -> RELU. T must be at least 4 for the second reshape to hold a row."""
    m = ModelBuilder("sequence_reshapes")
    g = m.subgraph("main")
    x = _tokens(g, 8)
    shape = g.tensor("shape", [3], "INT32")
    g.op("SHAPE", [x], [shape], options={"out_type": 2})  # INT32
    seq = g.tensor("seq", [1], "INT32")
    g.op("STRIDED_SLICE", [shape, g.const("b", np.array([1], np.int32)), g.const("e", np.array([2], np.int32)),
                           g.const("s", np.array([1], np.int32))], [seq])
    target = g.tensor("target", [2], "INT32")
    g.op("CONCATENATION", [seq, g.const("minus1", np.array([-1], np.int32))], [target], options={"axis": 0})
    rows = g.tensor("rows", [8, 16], shape_signature=[-1, -1])
    g.op("RESHAPE", [x, target], [rows])
    act = g.tensor("act", [8, 16], shape_signature=[-1, 16])
    g.op("RELU", [rows], [act])
    groups = g.tensor("groups", [2, 4, 16], shape_signature=[-1, 4, 16])
    g.op("RESHAPE", [act, g.const("groups_shape", np.array([-1, 4, 16], np.int32))], [groups])
    y = g.tensor("y", [2, 4, 16], shape_signature=[-1, 4, 16])
    g.op("RELU", [groups], [y])
    g.inputs([x])
    g.outputs([y])
    return m.build()


def sequence_fixed() -> bytes:
    """tokens [1, T, 16] reshaped to a fixed [1, 64]: the graph allows T = 4 only."""
    m = ModelBuilder("sequence_fixed")
    g = m.subgraph("main")
    x = _tokens(g, 4)
    flat = g.tensor("flat", [1, 64])
    g.op("RESHAPE", [x, g.const("flat_shape", np.array([1, 64], np.int32))], [flat])
    y = g.tensor("y", [1, 64])
    g.op("RELU", [flat], [y])
    g.inputs([x])
    g.outputs([y])
    return m.build()
