"""Output shapes of builtin ops as expressions over the input symbols.

Each rule takes the op and a `ShapeContext` and returns the output shapes, or None when the
output's size is not a function of the input shapes (data-dependent ops, shape tensors computed
at run time): the caller then gives it fresh symbols that become known only after the op runs.
Small integer tensors (shapes, axes, sizes) are tracked by value too, so the common
SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE pattern of dynamic-batch models stays symbolic.
"""

from __future__ import annotations

from typing import Callable, Protocol

from packager.model import Operator
from packager.dynamic.symbolic import Value, add, ceildiv, divide_exact, floordiv, maximum, mul, product

Shape = tuple[Value, ...]
SAME, VALID = 0, 1


class ShapeContext(Protocol):
    def shape(self, tensor: int) -> Shape: ...
    def value(self, tensor: int) -> list[Value] | None: ...  # known contents of a small int tensor


Rule = Callable[[Operator, ShapeContext], "list[Shape] | None"]
RULES: dict[str, Rule] = {}
VALUE_RULES: dict[str, Callable[[Operator, ShapeContext], "list[Value] | None"]] = {}


def rule(*names: str):
    def register(fn: Rule) -> Rule:
        for n in names:
            RULES[n] = fn
        return fn
    return register


def _in(op: Operator, k: int) -> int:
    return op.inputs[k] if k < len(op.inputs) else -1


def _ints(ctx: ShapeContext, tensor: int) -> list[int] | None:
    vals = ctx.value(tensor) if tensor >= 0 else None
    if vals is None or not all(isinstance(v, int) for v in vals):
        return None
    return [int(v) for v in vals]


def broadcast(a: Shape, b: Shape) -> Shape:
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        out.append(y if x == 1 else x if y == 1 or x == y else maximum(x, y))
    return tuple(out)


_UNARY = ("RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "LEAKY_RELU", "LOGISTIC", "TANH",
          "HARD_SWISH", "ELU", "GELU", "ABS", "NEG", "EXP", "LOG", "SQRT", "RSQRT", "SQUARE",
          "SIN", "COS", "FLOOR", "CEIL", "ROUND", "SIGN", "SOFTMAX", "LOG_SOFTMAX", "CAST",
          "DEQUANTIZE", "QUANTIZE", "L2_NORMALIZATION", "LOCAL_RESPONSE_NORMALIZATION",
          "ZEROS_LIKE", "LOGICAL_NOT", "PRELU", "FAKE_QUANT", "CUMSUM", "REVERSE_V2",
          "MATRIX_SET_DIAG", "BITCAST", "DYNAMIC_UPDATE_SLICE", "SCATTER_ND_UPDATE")
_BINARY = ("ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "POW", "SQUARED_DIFFERENCE",
           "FLOOR_DIV", "FLOOR_MOD", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL",
           "NOT_EQUAL", "LOGICAL_AND", "LOGICAL_OR", "ATAN2", "BITWISE_XOR", "RIGHT_SHIFT")


@rule(*_UNARY)
def _same_as_first(op, ctx):
    return [ctx.shape(op.inputs[0])] * len(op.outputs)


@rule(*_BINARY)
def _broadcast(op, ctx):
    return [broadcast(ctx.shape(op.inputs[0]), ctx.shape(op.inputs[1]))]


@rule("SELECT", "SELECT_V2")
def _select(op, ctx):
    return [broadcast(broadcast(ctx.shape(op.inputs[0]), ctx.shape(op.inputs[1])), ctx.shape(op.inputs[2]))]


@rule("ADD_N")
def _add_n(op, ctx):
    return [ctx.shape(op.inputs[0])]


def _window(size: Value, kernel: int, stride: int, dilation: int, padding: int) -> Value:
    if padding == SAME:
        return ceildiv(size, stride)
    effective = (kernel - 1) * dilation + 1
    return add(floordiv(add(size, -effective), stride), 1)


@rule("CONV_2D", "DEPTHWISE_CONV_2D")
def _conv(op, ctx):
    n, h, w, _ = ctx.shape(op.inputs[0])
    f = ctx.shape(op.inputs[1])
    o = op.options
    oh = _window(h, int(f[1]), int(o.get("stride_h", 1)), int(o.get("dilation_h_factor", 1)), int(o.get("padding", 0)))
    ow = _window(w, int(f[2]), int(o.get("stride_w", 1)), int(o.get("dilation_w_factor", 1)), int(o.get("padding", 0)))
    channels = f[0] if op.name == "CONV_2D" else f[3]
    return [(n, oh, ow, channels)]


@rule("AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D")
def _pool(op, ctx):
    n, h, w, c = ctx.shape(op.inputs[0])
    o = op.options
    return [(n, _window(h, int(o.get("filter_height", 1)), int(o.get("stride_h", 1)), 1, int(o.get("padding", 0))),
             _window(w, int(o.get("filter_width", 1)), int(o.get("stride_w", 1)), 1, int(o.get("padding", 0))), c)]


@rule("TRANSPOSE_CONV")
def _transpose_conv(op, ctx):
    shape = ctx.value(op.inputs[0])
    return None if shape is None else [tuple(shape)]


@rule("FULLY_CONNECTED")
def _fully_connected(op, ctx):
    x, w = ctx.shape(op.inputs[0]), ctx.shape(op.inputs[1])
    units, depth = w[0], w[-1]
    if op.options.get("keep_num_dims"):
        return [tuple(x[:-1]) + (units,)]
    if not isinstance(depth, int) or depth <= 0:
        return None
    return [(floordiv(product(x), depth), units)]


@rule("BATCH_MATMUL")
def _batch_matmul(op, ctx):
    a, b = ctx.shape(op.inputs[0]), ctx.shape(op.inputs[1])
    m = a[-1] if op.options.get("adj_x") else a[-2]
    n = b[-2] if op.options.get("adj_y") else b[-1]
    return [broadcast(a[:-2], b[:-2]) + (m, n)]


@rule("CONCATENATION")
def _concat(op, ctx):
    shapes = [ctx.shape(t) for t in op.inputs]
    rank = len(shapes[0])
    axis = int(op.options.get("axis", 0)) % rank
    out = list(shapes[0])
    out[axis] = add(*(s[axis] for s in shapes))
    return [tuple(out)]


@rule("RESHAPE")
def _reshape(op, ctx):
    target = ctx.value(_in(op, 1)) if _in(op, 1) >= 0 else None
    if target is None:
        new_shape = op.options.get("new_shape")
        target = list(new_shape) if new_shape else None
    if target is None:
        return None
    total = product(ctx.shape(op.inputs[0]))
    if any(isinstance(d, int) and d == -1 for d in target):
        known = product([d for d in target if not (isinstance(d, int) and d == -1)])
        if isinstance(known, int):
            if known <= 0:
                return None
            rest = floordiv(total, known)
        else:  # dividing by a symbol: exact when the symbol is a factor of the element count
            rest = divide_exact(total, known)
            if rest is None:
                return None
        target = [rest if isinstance(d, int) and d == -1 else d for d in target]
    return [tuple(target)]


@rule("SQUEEZE")
def _squeeze(op, ctx):
    x = ctx.shape(op.inputs[0])
    dims = {int(d) % len(x) for d in op.options.get("squeeze_dims", ())}
    if not dims:
        dims = {i for i, d in enumerate(x) if d == 1}
    return [tuple(d for i, d in enumerate(x) if i not in dims)]


@rule("EXPAND_DIMS")
def _expand_dims(op, ctx):
    x = list(ctx.shape(op.inputs[0]))
    axis = _ints(ctx, op.inputs[1])
    if axis is None:
        return None
    a = axis[0] if axis[0] >= 0 else len(x) + 1 + axis[0]
    return [tuple(x[:a] + [1] + x[a:])]


@rule("TRANSPOSE")
def _transpose(op, ctx):
    x, perm = ctx.shape(op.inputs[0]), _ints(ctx, op.inputs[1])
    return None if perm is None else [tuple(x[p] for p in perm)]


@rule("MEAN", "SUM", "REDUCE_PROD", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_ANY", "REDUCE_ALL")
def _reduce(op, ctx):
    x, axes = ctx.shape(op.inputs[0]), _ints(ctx, op.inputs[1])
    if axes is None:
        return None
    axes = {a % len(x) for a in axes}
    keep = op.options.get("keep_dims")
    return [tuple((1 if i in axes else d) for i, d in enumerate(x) if keep or i not in axes)]


@rule("ARG_MAX", "ARG_MIN")
def _arg(op, ctx):
    x, axis = ctx.shape(op.inputs[0]), _ints(ctx, op.inputs[1])
    return None if axis is None else [tuple(d for i, d in enumerate(x) if i != axis[0] % len(x))]


@rule("PAD", "PADV2", "MIRROR_PAD")
def _pad(op, ctx):
    x, pads = ctx.shape(op.inputs[0]), _ints(ctx, op.inputs[1])
    if pads is None:
        return None
    return [tuple(add(d, pads[2 * i], pads[2 * i + 1]) for i, d in enumerate(x))]


@rule("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR")
def _resize(op, ctx):
    n, _, _, c = ctx.shape(op.inputs[0])
    size = ctx.value(op.inputs[1])
    return None if size is None else [(n, size[0], size[1], c)]


@rule("GATHER")
def _gather(op, ctx):
    params, indices = ctx.shape(op.inputs[0]), ctx.shape(op.inputs[1])
    axis = int(op.options.get("axis", 0)) % len(params)
    batch = int(op.options.get("batch_dims", 0))
    return [tuple(params[:axis]) + tuple(indices[batch:]) + tuple(params[axis + 1:])]


@rule("GATHER_ND")
def _gather_nd(op, ctx):
    params, indices = ctx.shape(op.inputs[0]), ctx.shape(op.inputs[1])
    depth = indices[-1]
    if not isinstance(depth, int):
        return None
    return [tuple(indices[:-1]) + tuple(params[depth:])]


@rule("SPLIT")
def _split(op, ctx):
    axis, x = _ints(ctx, op.inputs[0]), ctx.shape(op.inputs[1])
    if axis is None:
        return None
    a = axis[0] % len(x)
    part = floordiv(x[a], len(op.outputs))
    return [tuple(part if i == a else d for i, d in enumerate(x))] * len(op.outputs)


@rule("SPLIT_V")
def _split_v(op, ctx):
    x, sizes, axis = ctx.shape(op.inputs[0]), _ints(ctx, op.inputs[1]), _ints(ctx, op.inputs[2])
    if sizes is None or axis is None or -1 in sizes:
        return None
    a = axis[0] % len(x)
    return [tuple(s if i == a else d for i, d in enumerate(x)) for s in sizes]


@rule("PACK")
def _pack(op, ctx):
    x = list(ctx.shape(op.inputs[0]))
    axis = int(op.options.get("axis", 0)) % (len(x) + 1)
    return [tuple(x[:axis] + [len(op.inputs)] + x[axis:])]


@rule("UNPACK")
def _unpack(op, ctx):
    x = ctx.shape(op.inputs[0])
    axis = int(op.options.get("axis", 0)) % len(x)
    return [tuple(d for i, d in enumerate(x) if i != axis)] * len(op.outputs)


@rule("SLICE")
def _slice(op, ctx):
    x, begin, size = ctx.shape(op.inputs[0]), _ints(ctx, op.inputs[1]), _ints(ctx, op.inputs[2])
    if begin is None or size is None:
        return None
    return [tuple(add(d, -b) if s == -1 else s for d, b, s in zip(x, begin, size))]


@rule("STRIDED_SLICE")
def _strided_slice(op, ctx):
    x = ctx.shape(op.inputs[0])
    begin, end, strides = (_ints(ctx, _in(op, k)) for k in (1, 2, 3))
    o = op.options
    if begin is None or end is None or strides is None or o.get("ellipsis_mask") or o.get("new_axis_mask") or o.get("offset"):
        return None
    out = []
    for i, d in enumerate(x):
        if i >= len(begin):
            out.append(d)
            continue
        b_all, e_all, s = o.get("begin_mask", 0) >> i & 1, o.get("end_mask", 0) >> i & 1, strides[i]
        if o.get("shrink_axis_mask", 0) >> i & 1:
            continue
        if s <= 0:
            return None
        if isinstance(d, int):
            b = 0 if b_all else min(max(begin[i] + d if begin[i] < 0 else begin[i], 0), d)
            e = d if e_all else min(max(end[i] + d if end[i] < 0 else end[i], 0), d)
            out.append(max(0, -(-(e - b) // s)))
        else:
            # Symbolic dimension d: the stop must be relative to d (d + stop, stop <= 0); the
            # start is fixed (b >= 0) or relative to d too (d + b, b < 0), when d cancels out.
            b = 0 if b_all else begin[i]
            if not e_all and end[i] >= 0:
                return None  # a fixed window of a symbolic dimension: clamping is not an expression
            stop = 0 if e_all else end[i]
            if b < 0:
                out.append(max(0, -(-(stop - b) // s)))
            else:
                out.append(ceildiv(add(d, stop - b), s))
    return [tuple(out)]


@rule("TILE")
def _tile(op, ctx):
    x, m = ctx.shape(op.inputs[0]), _ints(ctx, op.inputs[1])
    return None if m is None else [tuple(mul(d, k) for d, k in zip(x, m))]


@rule("SHAPE")
def _shape(op, ctx):
    return [(len(ctx.shape(op.inputs[0])),)]


@rule("BROADCAST_TO", "FILL")
def _to_shape(op, ctx):
    shape = ctx.value(op.inputs[1] if op.name == "BROADCAST_TO" else op.inputs[0])
    return None if shape is None else [tuple(shape)]


@rule("DEPTH_TO_SPACE", "SPACE_TO_DEPTH")
def _depth_space(op, ctx):
    n, h, w, c = ctx.shape(op.inputs[0])
    b = int(op.options.get("block_size", 1))
    if op.name == "DEPTH_TO_SPACE":
        return [(n, mul(h, b), mul(w, b), floordiv(c, b * b))]
    return [(n, floordiv(h, b), floordiv(w, b), mul(c, b * b))]


@rule("NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5")
def _nms(op, ctx):
    # TFLite sizes the selected outputs to max_output_size (padded), and adds a scalar count.
    k = _ints(ctx, op.inputs[2])
    if k is None:
        return None
    if op.name == "NON_MAX_SUPPRESSION_V4":
        return [(k[0],), ()]
    return [(k[0],), (k[0],), ()]


# -- values of small integer tensors ----------------------------------------------------------

def value_rule(*names: str):
    def register(fn):
        for n in names:
            VALUE_RULES[n] = fn
        return fn
    return register


@value_rule("SHAPE")
def _shape_value(op, ctx):
    return list(ctx.shape(op.inputs[0]))


@value_rule("PACK")
def _pack_value(op, ctx):
    vals = [ctx.value(t) for t in op.inputs]
    if any(v is None or len(v) != 1 for v in vals):
        return None
    return [v[0] for v in vals]


@value_rule("CONCATENATION")
def _concat_value(op, ctx):
    vals = [ctx.value(t) for t in op.inputs]
    return None if any(v is None for v in vals) else [x for v in vals for x in v]


@value_rule("STRIDED_SLICE")
def _slice_value(op, ctx):
    v = ctx.value(op.inputs[0])
    begin, end, strides = (_ints(ctx, _in(op, k)) for k in (1, 2, 3))
    if v is None or begin is None or end is None or strides is None or len(begin) != 1:
        return None
    o = op.options
    n = len(v)
    b = 0 if o.get("begin_mask", 0) & 1 else (begin[0] + n if begin[0] < 0 else begin[0])
    e = n if o.get("end_mask", 0) & 1 else (end[0] + n if end[0] < 0 else end[0])
    if o.get("shrink_axis_mask", 0) & 1:
        e = b + 1
    return v[b:e:strides[0]]


@value_rule("GATHER")
def _gather_value(op, ctx):
    v, idx = ctx.value(op.inputs[0]), _ints(ctx, op.inputs[1])
    if v is None or idx is None or int(op.options.get("axis", 0)) != 0:
        return None
    return [v[i] for i in idx]


@value_rule("MUL", "ADD")
def _arith_value(op, ctx):
    a, b = ctx.value(op.inputs[0]), ctx.value(op.inputs[1])
    if a is None or b is None or (len(a) != len(b) and 1 not in (len(a), len(b))):
        return None
    n = max(len(a), len(b))
    a, b = (a * n if len(a) == 1 else a), (b * n if len(b) == 1 else b)
    fn = mul if op.name == "MUL" else add
    return [fn(x, y) for x, y in zip(a, b)]


@value_rule("REDUCE_PROD")
def _prod_value(op, ctx):
    # tf.tensordot (Keras Dense on N-D inputs) multiplies the gathered free dimensions of a shape
    # into the row count of its RESHAPE: a product over the one axis of a shape vector.
    v, axes = ctx.value(op.inputs[0]), _ints(ctx, op.inputs[1])
    if v is None or axes is None or len(ctx.shape(op.inputs[0])) != 1 or any(a not in (0, -1) for a in axes):
        return None
    return [product(v)] if axes else v


@value_rule("CAST", "RESHAPE", "SQUEEZE", "EXPAND_DIMS")
def _passthrough_value(op, ctx):
    return ctx.value(op.inputs[0])
