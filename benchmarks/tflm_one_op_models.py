"""One-op models of the kernels of TFLite Micro's op resolver, float32 / int8 / int16 where the
kernel has them, for the set-up room audit (benchmarks/tflm_prepare_temps_audit.py):

    python -m benchmarks.tflm_one_op_models FOLDER
    python -m benchmarks.tflm_prepare_temps_audit FOLDER/*.tflite

A variant the kernel does not support fails in its Prepare; the audit still shows what it took
up to there. The kernels with a model of their own elsewhere (SVDF, LSTM, the Signal ops, the
custom ops, BATCH_MATMUL, int8 per-channel CONV_2D, ...) are in fixtures/tflm_kernels.py and
the catalog: pass those too (KERNEL_BUILDERS[name]().build()).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import numpy as np

from fixtures.builder import ModelBuilder, Quantization

_TYPES = {"i8": ("INT8", 0.05), "i16": ("INT16", 0.001), "f": ("FLOAT32", None),
          "i32": ("INT32", None), "b": ("BOOL", None)}
_NUMPY = {"i8": np.int8, "i16": np.int16, "f": np.float32}


def _quant(scale: float | None) -> Quantization | None:
    return None if scale is None else Quantization(scale=[scale], zero_point=[0])


def _per_channel(c: int, axis: int = 0) -> Quantization:
    return Quantization(scale=[0.01 * (1 + k % 3) for k in range(c)], zero_point=[0] * c,
                        quantized_dimension=axis)


def _model(build: Callable) -> bytes:
    m = ModelBuilder(description="one-op audit model")
    g = m.subgraph("main")

    def tensor(name, shape, ty):
        typ, scale = _TYPES[ty]
        return g.tensor(name, shape, typ, quantization=_quant(scale))
    ins, outs = build(g, tensor)
    g.inputs(ins)
    g.outputs(outs)
    m.signature("serving_default", inputs={f"in{i}": x for i, x in enumerate(ins)},
                outputs={f"out{i}": x for i, x in enumerate(outs)}, subgraph=0)
    return m.build()


def _unary(op, ty, out_ty=None, shape=(1, 4, 4, 2), **kw):
    def build(g, t):
        x, y = t("x", list(shape), ty), t("y", list(shape), out_ty or ty)
        g.op(op, [x], [y], **kw)
        return [x], [y]
    return build


def _binary(op, ty, out_ty=None, **kw):
    def build(g, t):
        x, z, y = t("x", [1, 4], ty), t("z", [1, 4], ty), t("y", [1, 4], out_ty or ty)
        g.op(op, [x, z], [y], **kw)
        return [x, z], [y]
    return build


def _with_consts(op, in_shape, out_shape, consts, ty, out_ty=None, **kw):
    """An op on one input and constant operands (name, array) after it."""
    def build(g, t):
        x, y = t("x", in_shape, ty), t("y", out_shape, out_ty or ty)
        g.op(op, [x] + [g.const(n, a) for n, a in consts], [y], **kw)
        return [x], [y]
    return build


def models() -> dict[str, Callable]:
    out: dict[str, Callable] = {}
    tables = {"L2_NORMALIZATION": "L2NormOptions", "ZEROS_LIKE": "ZerosLikeOptions",
              "SQUARED_DIFFERENCE": "SquaredDifferenceOptions", "FLOOR_DIV": "FloorDivOptions",
              "FLOOR_MOD": "FloorModOptions"}
    for ty in ("i8", "i16", "f"):
        for op in ("RELU", "RELU6", "LEAKY_RELU", "ABS", "RSQRT", "ELU", "NEG", "HARD_SWISH",
                   "LOGISTIC", "TANH", "SOFTMAX", "LOG_SOFTMAX", "L2_NORMALIZATION", "SQUARE",
                   "SQRT", "ZEROS_LIKE", "EXP"):
            kw = {"options_table": tables[op]} if op in tables else {}
            out[f"{op}_{ty}"] = _unary(op, ty, **kw)
        out[f"DEQUANTIZE_{ty}"] = _unary("DEQUANTIZE", ty, "f")
        out[f"QUANTIZE_{ty}"] = _unary("QUANTIZE", ty, "i8" if ty != "i8" else "i16")
        for op in ("ADD", "SUB", "MUL", "DIV", "SQUARED_DIFFERENCE", "MAXIMUM", "MINIMUM",
                   "PRELU", "FLOOR_DIV", "FLOOR_MOD"):
            kw = {"options_table": tables[op]} if op in tables else {}
            out[f"{op}_{ty}"] = _binary(op, ty, **kw)
        for op in ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"):
            out[f"{op}_{ty}"] = _binary(op, ty, "b")
        pool = dict(padding="VALID", stride_w=2, stride_h=2, filter_width=2, filter_height=2)
        for op in ("MAX_POOL_2D", "AVERAGE_POOL_2D", "L2_POOL_2D"):
            out[f"{op}_{ty}"] = _unary(op, ty, options=pool)
        i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
        out[f"RESHAPE_{ty}"] = _with_consts("RESHAPE", [2, 4], [8], [("shape", i32(8))], ty,
                                            options=dict(new_shape=[8]))
        out[f"EXPAND_DIMS_{ty}"] = _with_consts("EXPAND_DIMS", [1, 4], [1, 4, 1], [("axis", i32(2))], ty)
        out[f"SQUEEZE_{ty}"] = _with_consts("SQUEEZE", [1, 4, 1], [1, 4], [], ty,
                                            options=dict(squeeze_dims=[2]))
        for op in ("RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR"):
            out[f"{op}_{ty}"] = _with_consts(op, [1, 2, 2, 2], [1, 4, 4, 2], [("size", i32(4, 4))], ty)
        out[f"DEPTH_TO_SPACE_{ty}"] = _with_consts("DEPTH_TO_SPACE", [1, 2, 2, 8], [1, 4, 4, 2], [],
                                                   ty, options=dict(block_size=2))
        out[f"SPACE_TO_DEPTH_{ty}"] = _with_consts("SPACE_TO_DEPTH", [1, 4, 4, 2], [1, 2, 2, 8], [],
                                                   ty, options=dict(block_size=2))
        pads = np.array([[0, 0], [1, 1]], np.int32)
        out[f"PAD_{ty}"] = _with_consts("PAD", [1, 4], [1, 6], [("pads", pads)], ty)
        out[f"MIRROR_PAD_{ty}"] = _with_consts("MIRROR_PAD", [1, 4], [1, 6], [("pads", pads)], ty,
                                               options=dict(mode=0))
        out[f"GATHER_{ty}"] = _with_consts("GATHER", [4, 3], [2, 3], [("idx", i32(1, 0))], ty,
                                           options=dict(axis=0))
        out[f"GATHER_ND_{ty}"] = _with_consts("GATHER_ND", [4, 3], [2],
                                              [("idx", np.array([[1, 2], [0, 1]], np.int32))], ty)
        out[f"STRIDED_SLICE_{ty}"] = _with_consts(
            "STRIDED_SLICE", [1, 8], [1, 4], [("b", i32(0, 0)), ("e", i32(1, 8)), ("s", i32(1, 2))], ty)
        out[f"SLICE_{ty}"] = _with_consts("SLICE", [2, 4], [2, 2], [("b", i32(0, 1)), ("s", i32(2, 2))], ty)
        out[f"TRANSPOSE_{ty}"] = _with_consts("TRANSPOSE", [2, 4], [4, 2], [("perm", i32(1, 0))], ty)
        out[f"ARG_MIN_{ty}"] = _with_consts("ARG_MIN", [2, 4], [2], [("axis", i32(1))], ty, "i32",
                                            options=dict(output_type=2))
        out[f"CUMSUM_{ty}"] = _with_consts("CUMSUM", [2, 4], [2, 4], [("axis", np.array(1, np.int32))],
                                           ty, options_table="CumsumOptions")
        out[f"BROADCAST_TO_{ty}"] = _with_consts("BROADCAST_TO", [2, 4], [3, 2, 4], [("to", i32(3, 2, 4))], ty)
        out[f"REVERSE_V2_{ty}"] = _with_consts("REVERSE_V2", [2, 4], [2, 4], [("axis", i32(1))], ty,
                                               options_table="ReverseV2Options")
        out[f"SHAPE_{ty}"] = _with_consts("SHAPE", [2, 4], [2], [], ty, "i32", options=dict(out_type=2))
        for op in ("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN"):
            out[f"{op}_{ty}"] = _with_consts(op, [1, 2, 4], [1, 4], [("axis", i32(1))], ty,
                                             options_table="ReducerOptions", options=dict(keep_dims=False))
        out[f"SPLIT_V_{ty}"] = _split_v(ty)
        out[f"PACK_{ty}"] = _pack(ty)
        out[f"UNPACK_{ty}"] = _unpack(ty)
        out[f"SELECT_V2_{ty}"] = _select(ty)
        out[f"ADD_N_{ty}"] = _add_n(ty)
    for op in ("LOGICAL_AND", "LOGICAL_OR"):
        out[f"{op}_b"] = _binary(op, "b")
    return out


def _split_v(ty):
    def build(g, t):
        x, a, c = t("x", [1, 12], ty), t("a", [1, 4], ty), t("c", [1, 8], ty)
        g.op("SPLIT_V", [x, g.const("sizes", np.array([4, 8], np.int32)),
                         g.const("axis", np.array(1, np.int32))], [a, c], options=dict(num_splits=2))
        return [x], [a, c]
    return build


def _pack(ty):
    def build(g, t):
        x, z, y = t("x", [2, 4], ty), t("z", [2, 4], ty), t("y", [2, 2, 4], ty)
        g.op("PACK", [x, z], [y], options=dict(values_count=2, axis=0))
        return [x, z], [y]
    return build


def _unpack(ty):
    def build(g, t):
        x, a, c = t("x", [2, 4], ty), t("a", [4], ty), t("c", [4], ty)
        g.op("UNPACK", [x], [a, c], options=dict(num=2, axis=0))
        return [x], [a, c]
    return build


def _select(ty):
    def build(g, t):
        c, x, z, y = t("c", [2, 4], "b"), t("x", [2, 4], ty), t("z", [2, 4], ty), t("y", [2, 4], ty)
        g.op("SELECT_V2", [c, x, z], [y])
        return [c, x, z], [y]
    return build


def _add_n(ty):
    def build(g, t):
        a, b, c, y = (t(n, [1, 8], ty) for n in ("a", "b", "c", "y"))
        g.op("ADD_N", [a, b, c], [y], options_table="AddNOptions")
        return [a, b, c], [y]
    return build


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m benchmarks.tflm_one_op_models FOLDER")
        return 2
    folder = Path(argv[0])
    folder.mkdir(parents=True, exist_ok=True)
    for name, build in models().items():
        (folder / f"{name}.tflite").write_bytes(_model(build))
    print(f"{len(models())} models in {folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
