"""A ConvNeXt-like block with a free batch, written as TensorFlow's converter writes Keras layers
when the batch is -1: the test model for deriving every RESHAPE's dimensions from the batch.

- LayerNormalization (Keras' fused form): SHAPE -> STRIDED_SLICE -> MUL gives batch*H*W, PACK
  makes [1, batch*H*W, C, 1], RESHAPE, the moments, RESHAPE back to SHAPE(x).
- Dense on a 4-D tensor (tf.tensordot): SHAPE -> GATHER -> REDUCE_PROD -> PACK makes
  [batch*H*W, C]; RESHAPE (stored [1, 1], signature [-1, -1]: the converter knows neither),
  FULLY_CONNECTED, then RESHAPE to CONCATENATION(GATHER(SHAPE), [units]).
- Keras Reshape: SHAPE -> STRIDED_SLICE -> PACK([batch, H*W, C]), and a RESHAPE to [-1, C].

Every dimension the converter writes as -1 follows from the batch."""

from __future__ import annotations

import numpy as np

from fixtures.builder import ModelBuilder
from fixtures.layers import Layers

H = W = 4
C, HIDDEN = 8, 16


def _shape_of(nn: Layers, x: int) -> int:
    s = nn.tensor(nn._name("shape"), [4], "INT32")
    nn.g.op("SHAPE", [x], [s], options={"out_type": 2})  # INT32
    return s


def _element(nn: Layers, s: int, k: int) -> int:
    """Element k of a shape vector, as a scalar (STRIDED_SLICE with shrink_axis_mask)."""
    e = nn.tensor(nn._name("dim"), [], "INT32")
    nn.g.op("STRIDED_SLICE", [s, nn.int32s("begin", [k]), nn.int32s("end", [k + 1]), nn.int32s("stride", [1])],
            [e], options={"shrink_axis_mask": 1})
    return e


def _scalar_op(nn: Layers, op: str, a: int, b: int) -> int:
    y = nn.tensor(nn._name(op.lower()), [], "INT32")
    nn.g.op(op, [a, b], [y], options={"fused_activation_function": "NONE"})
    return y


def _pack(nn: Layers, values: list[int]) -> int:
    y = nn.tensor(nn._name("pack"), [len(values)], "INT32")
    nn.g.op("PACK", values, [y], options={"values_count": len(values), "axis": 0})
    return y


def _reshape(nn: Layers, x: int, target: int, signature: list[int]) -> int:
    y = nn.tensor(nn._name("reshape"), signature)
    nn.g.op("RESHAPE", [x, target], [y])
    return y


def _reduce(nn: Layers, op: str, x: int, axes: list[int], signature: list[int]) -> int:
    y = nn.tensor(nn._name(op.lower()), signature)
    nn.g.op(op, [x, nn.int32s("axes", axes)], [y], options={"keep_dims": True})
    return y


def layer_norm(nn: Layers, x: int) -> int:
    """Keras' fused LayerNormalization over the channels of an NHWC tensor."""
    s = _shape_of(nn, x)
    pre = _scalar_op(nn, "MUL", _scalar_op(nn, "MUL", _element(nn, s, 0), _element(nn, s, 1)), _element(nn, s, 2))
    one, chans = nn.const(nn._name("one"), np.array(1, np.int32)), nn.const(nn._name("c"), np.array(C, np.int32))
    flat = _reshape(nn, x, _pack(nn, [one, pre, chans, one]), [1, -1, C, 1])
    mean = _reduce(nn, "MEAN", flat, [2, 3], [1, -1, 1, 1])
    sq = nn.tensor(nn._name("squared_difference"), [1, -1, C, 1])
    nn.g.op("SQUARED_DIFFERENCE", [flat, mean], [sq])
    var = _reduce(nn, "MEAN", sq, [2, 3], [1, -1, 1, 1])
    inv = nn.unary("RSQRT", nn.binary("ADD", var, nn.const(nn._name("eps"), np.array([1e-6], np.float32))))
    normed = nn.binary("MUL", nn.binary("SUB", flat, mean), inv)
    back = _reshape(nn, normed, s, [-1, H, W, C])
    return nn.binary("ADD", nn.binary("MUL", back, nn.weights("gamma", [C])), nn.weights("beta", [C], 0.0625))


def dense(nn: Layers, x: int, units: int) -> int:
    """Keras Dense on an NHWC tensor, as tf.tensordot writes it when the batch is unknown."""
    channels = nn.signature(x)[3]
    s = _shape_of(nn, x)
    free = nn.tensor(nn._name("free_dims"), [3], "INT32")
    nn.g.op("GATHER", [s, nn.int32s("free", [0, 1, 2])], [free], options={"axis": 0})
    axis = nn.tensor(nn._name("axis_dims"), [1], "INT32")
    nn.g.op("GATHER", [s, nn.int32s("axes", [3])], [axis], options={"axis": 0})
    prods = []
    for dims in (free, axis):
        p = nn.tensor(nn._name("prod"), [], "INT32")
        nn.g.op("REDUCE_PROD", [dims, nn.int32s("axis0", [0])], [p], options={"keep_dims": False})
        prods.append(p)
    rows = _reshape(nn, x, _pack(nn, prods), [-1, -1])
    y = nn.tensor(nn._name("fc"), [-1, units])
    nn.g.op("FULLY_CONNECTED", [rows, nn.weights("fc_w", [units, channels]), nn.weights("fc_b", [units], 0.0625)],
            [y], options={"fused_activation_function": "NONE"})
    out_shape = nn.tensor(nn._name("out_shape"), [4], "INT32")
    nn.g.op("CONCATENATION", [free, nn.int32s("units", [units])], [out_shape], options={"axis": 0})
    return _reshape(nn, y, out_shape, [-1, H, W, units])


def convnext_block() -> bytes:
    """image [batch, H, W, 3] -> conv -> ConvNeXt block (depthwise, LayerNormalization, Dense,
    GELU, Dense, layer scale, residual) -> Keras Reshape to [batch, H*W, C] -> RESHAPE [-1, C]
    -> MEAN."""
    m = ModelBuilder("convnext_block: batch -1, RESHAPE targets computed from SHAPE")
    nn = Layers(m.subgraph("main"), seed=4200)
    x = nn.input("image", [-1, H, W, 3])
    h = nn.conv(x, C)
    y = nn.depthwise(h, kernel=3)
    y = dense(nn, layer_norm(nn, y), HIDDEN)
    y = dense(nn, nn.unary("GELU", y), C)
    y = nn.binary("ADD", h, nn.binary("MUL", y, nn.weights("layer_scale", [C], 0.125)))
    s = _shape_of(nn, y)
    target = _pack(nn, [_element(nn, s, 0), nn.const(nn._name("hw"), np.array(H * W, np.int32)),
                        nn.const(nn._name("c"), np.array(C, np.int32))])
    tokens = _reshape(nn, y, target, [-1, H * W, C])
    rows = nn.tensor(nn._name("reshape"), [-1, C])
    nn.g.op("RESHAPE", [tokens, nn.int32s("shape", [-1, C])], [rows], options={"new_shape": [-1, C]})
    out = _reduce(nn, "MEAN", rows, [1], [-1, 1])
    nn.g.inputs([x])
    nn.g.outputs([out])
    m.signature("serving_default", inputs={"image": x}, outputs={"features": out}, subgraph=0)
    return m.build()
