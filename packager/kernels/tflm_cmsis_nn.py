"""TFLite Micro built with Arm's CMSIS-NN kernels (OPTIMIZED_KERNEL_DIR=cmsis_nn), as data: what each
kernel of tensorflow/lite/micro/kernels/cmsis_nn/ keeps in the arena, per core family.

A CMSIS-NN build replaces the reference files of 14 kernels. Their Init takes a larger OpData (a
scratch index, kernel sums...), and their Prepare asks for scratch buffers whose sizes CMSIS-NN's
`*_get_buffer_size*` functions give, which depend on the core's instruction set:
    no-dsp  Cortex-M0, M0+, M3 (neither ARM_MATH_DSP nor ARM_MATH_MVEI)
    dsp     Cortex-M4, M7, M33 (ARM_MATH_DSP)
    mve     Cortex-M55, M85 (ARM_MATH_MVEI, Helium)
The compiler is arm-none-eabi-gcc: the functions' armclang-only branches (1x1 convolution's
buffer, the MVE depthwise threshold 8) take their gcc side. Everything else (the allocator, the
tail's structures, builtin data, the kernels CMSIS-NN leaves reference) is the reference build's
(kernels/tflm_arena.py, CORTEX_M_REFERENCE).

Sources (facts, not code): TFLite Micro 90b983c2 kernels/cmsis_nn/*.cc (Init, Prepare) and
CMSIS-NN 4ab83cc Source/*/*get_buffer_size*.c. OpData sizes: sizeof as arm-none-eabi-g++ 12.2
lays them out for a Cortex-M (4-byte pointers, short enums, -DKERNELS_OPTIMIZED_FOR_SPEED as
TFLite Micro's CMSIS-NN build defines); the same on every core (no OpData holds an MVE-only member).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from packager.model import Operator, Subgraph

NO_DSP, DSP, MVE = "no-dsp", "dsp", "mve"

# Core -> the family its CMSIS-NN build compiles for.
CORE_FAMILY = {
    "cortex-m0": NO_DSP, "cortex-m0plus": NO_DSP, "cortex-m3": NO_DSP,
    "cortex-m4": DSP, "cortex-m7": DSP, "cortex-m33": DSP,
    "cortex-m55": MVE, "cortex-m85": MVE,
}

# The operators whose kernels kernels/cmsis_nn/ replaces. Every other operator runs the reference kernel.
REPLACED = frozenset({
    "ADD", "BATCH_MATMUL", "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "MAXIMUM", "MINIMUM",
    "MUL", "PAD", "PADV2", "AVERAGE_POOL_2D", "MAX_POOL_2D", "SOFTMAX", "SVDF", "TRANSPOSE",
    "TRANSPOSE_CONV", "UNIDIRECTIONAL_SEQUENCE_LSTM",
})

# The kernels whose CMSIS-NN figures read the op's options (stride, padding, dilation, rank...).
READS_OPTIONS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "SVDF",
                           "UNIDIRECTIONAL_SEQUENCE_LSTM", "BATCH_MATMUL"})

# sizeof(the OpData Init takes), 32-bit Cortex-M, per replaced kernel that differs from the
# reference one. The others keep the reference OpData (or none): add.cc's OpData has the
# reference's 60 B; mul.cc and pad.cc call the reference MulInit/PadInit; maximum_minimum.cc and
# transpose.cc register no Init.
OPDATA = {
    "CONV_2D": 60,  # conv.cc: OpDataConv (56) + buffer_idx
    "DEPTHWISE_CONV_2D": 60,  # depthwise_conv.cc: OpDataConv + buffer_idx
    "FULLY_CONNECTED": 72,  # fully_connected.cc: OpDataFullyConnected (48) + two indices, kernel_sums, three int32
    "AVERAGE_POOL_2D": 36, "MAX_POOL_2D": 36,  # pooling.cc: OpDataPooling (32) + buffer_idx
    "SOFTMAX": 64,  # softmax.cc: CMSISNNSoftmaxParams (SoftmaxParams, num_rows, row_size; 8-aligned)
    "SVDF": 40,  # svdf.cc: CmsisNnOpDataSvdf (nine ints and kernel_sums, OPTIMIZED_FOR_SPEED)
    "TRANSPOSE_CONV": 76,  # transpose_conv.cc: ConvParams, three indices, two pointers
    "UNIDIRECTIONAL_SEQUENCE_LSTM": 912,  # unidirectional_sequence_lstm.cc: OpDataLSTM (688) + cmsis_nn_lstm_params (220)
    "BATCH_MATMUL": 36,  # batch_matmul.cc: OpDataBatchMatmul (16), cmsis_nn_dims, buffer_idx
}


@dataclass(frozen=True)
class Request:
    nbytes: int
    what: str


def _ceil(n: int, m: int) -> int:
    return -(-n // m) * m


def _shape(sg: Subgraph, t: int) -> list[int]:
    return list(sg.tensors[t].shape) if t >= 0 else []


def _opt(op: Operator, name: str, default: int = 1) -> int:
    value = op.options.get(name, default)
    return int(default if value is None else value)


def _padding(op: Operator, size: int, filt: int, out: int, stride: str, dilation: str) -> int:
    """TFLite's padding on one axis (ComputePaddingHeightWidth): SAME (0) pads half the excess,
    VALID (1) nothing."""
    if _opt(op, "padding", 0) != 0:
        return 0
    effective = (filt - 1) * _opt(op, dilation) + 1
    return max(((out - 1) * _opt(op, stride) + effective - size) // 2, 0)


def _window(sg: Subgraph, op: Operator, filter_hw: tuple[int, int]) -> dict:
    """The NHWC geometry conv.cc and depthwise_conv.cc hand to CMSIS-NN."""
    n, h, w, c = _shape(sg, op.inputs[0])
    _, oh, ow, oc = _shape(sg, op.outputs[0])
    kh, kw = filter_hw
    return dict(n=n, h=h, w=w, c=c, oh=oh, ow=ow, oc=oc, kh=kh, kw=kw,
                pad_h=_padding(op, h, kh, oh, "stride_h", "dilation_h_factor"),
                pad_w=_padding(op, w, kw, ow, "stride_w", "dilation_w_factor"),
                stride_h=_opt(op, "stride_h"), stride_w=_opt(op, "stride_w"),
                dil_h=_opt(op, "dilation_h_factor"), dil_w=_opt(op, "dilation_w_factor"))


# -- scratch requests (RequestScratchBufferInArena), per kernel, per family ----------------------

def _conv_path(sg: Subgraph, op: Operator, family: str) -> str:
    """The branch arm_convolve_wrapper_s8_get_buffer_size takes (the same on every family; off MVE the
    1xN branch asks the general size): 1x1, 1xN or the general im2col. "": not an int8 convolution."""
    if sg.tensors[op.inputs[0]].type != "INT8":
        return ""
    g = _window(sg, op, tuple(_shape(sg, op.inputs[1])[1:3]))
    filter_c = _shape(sg, op.inputs[1])[3]
    if (g["pad_w"] == 0 and g["pad_h"] == 0 and g["kw"] == 1 and g["kh"] == 1
            and g["dil_w"] == 1 and g["dil_h"] == 1 and g["c"] == filter_c):
        return "1x1"
    if (g["h"] == 1 and g["dil_w"] == 1 and g["kh"] == 1
            and (g["stride_w"] * g["c"]) % 4 == 0 and g["c"] == filter_c):
        return "1xN"
    return "im2col"


def _conv(sg: Subgraph, op: Operator, family: str) -> list[Request] | None:
    """conv.cc: int8 asks arm_convolve_wrapper_s8_get_buffer_size (int4 weights too: Prepare
    sizes by the input's type), int16 arm_convolve_wrapper_s16_get_buffer_size (its bias is read
    as output 2, never present, so every int16 conv asks); float32 nothing. Sources:
    arm_convolve_get_buffer_sizes_s8.c, _s16.c."""
    x = sg.tensors[op.inputs[0]]
    if x.type not in ("INT8", "INT16"):
        return []
    g = _window(sg, op, tuple(_shape(sg, op.inputs[1])[1:3]))
    k = g["kh"] * g["kw"] * g["c"]  # rhs_cols: the im2col row
    if x.type == "INT16":
        size = 64 * -(-k // 8) if family == MVE else 4 * k
        return [Request(size, "im2col (s16)")] if size > 0 else []
    path = _conv_path(sg, op, family)
    if path == "1x1":
        size = 0  # the 1x1 kernels' buffer is armclang's only (arm_convolve_1x1_s8_fast_get_buffer_size)
    elif family == MVE and path == "1xN":
        size = _conv_1_x_n_mve(g, k)
    elif family == MVE:
        size = 64 * -(-k // 16)  # arm_convolve_s8_get_buffer_size_mve: 4 * ceil16(K)
    else:
        size = 4 * _ceil(k, 4)  # arm_convolve_s8_get_buffer_size (1xN too): two int16 rows of ceil4(K)
    return [Request(size, "im2col (s8)")] if size > 0 else []


def _conv_1_x_n_mve(g: dict, k: int) -> int:
    """arm_convolve_1_x_n_s8_get_buffer_size_mve: the padded row of the 1xN kernel."""
    total_pad = (g["ow"] - 1) * g["stride_w"] + g["kw"] - g["w"]
    asym = total_pad % 2
    stride, pad = g["stride_w"], g["pad_w"]
    right = max(1, (pad + asym + stride - 1) // stride) if pad + asym != 0 else 0
    left = max(1, (pad + stride - 1) // stride) if pad != 0 else 0
    middle = max(g["ow"] - (right + left), 0)
    if right + middle + left != g["ow"]:
        return 64 * -(-k // 16)
    pad_left = pad * g["c"]
    pad_right = right * g["c"] if asym else pad_left
    left_elems = g["kw"] * g["c"]
    return max(left_elems + pad_left, left_elems - g["c"] + pad_right)


def _depthwise_path(sg: Subgraph, op: Operator, family: str) -> str:
    """The branch arm_depthwise_conv_wrapper_s8_get_buffer_size (or _s4_ for int4 weights) takes:
    "one input channel" (MVE: run as a convolution), "3x3" (the 3x3 kernel, padding at most 1, off
    MVE), "opt" (multiplier 1, one batch, no dilation: arm_depthwise_conv_s8_opt's buffer), "s4 opt",
    else "general" or "s4 general" (no buffer). "": not an int8 depthwise convolution."""
    x, wts = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]]
    if x.type != "INT8":
        return ""
    g = _window(sg, op, tuple(_shape(sg, op.inputs[1])[1:3]))
    opt = g["c"] == g["oc"] and g["n"] == 1 and g["dil_w"] == 1 and g["dil_h"] == 1
    if wts.type == "INT4":  # the s4 wrapper: no 3x3 exception and no one-channel case
        return "s4 opt" if opt else "s4 general"
    if family == MVE and g["c"] == 1 and g["oc"] > 1:
        return "one input channel"
    if not opt:
        return "general"
    if family != MVE and g["kw"] == 3 and g["kh"] == 3 and g["pad_h"] <= 1 and g["pad_w"] <= 1:
        return "3x3"
    return "opt"


def _depthwise(sg: Subgraph, op: Operator, family: str) -> list[Request] | None:
    """depthwise_conv.cc: only int8 asks, arm_depthwise_conv_wrapper_s8_get_buffer_size
    (arm_depthwise_conv_get_buffer_sizes_s8.c), or _s4_ for int4 weights (_s4.c); int16 and
    float32 nothing."""
    path = _depthwise_path(sg, op, family)
    if path in ("", "general", "s4 general", "3x3"):
        return []
    g = _window(sg, op, tuple(_shape(sg, op.inputs[1])[1:3]))
    if path == "s4 opt":
        # MVE's rows of the kernel, else one int16 im2col row on every other core (the DSP size
        # function, called without a no-DSP branch).
        size = 4 * 124 * g["kw"] * g["kh"] if family == MVE else 2 * g["c"] * g["kw"] * g["kh"]
        return [Request(size, "im2col (depthwise s4)")]
    if path == "one input channel":
        # arm_deptwise_conv_s8_one_in_ch_get_buffer_size_mve: run as a convolution (its im2col
        # buffer) plus the reordered filter. depthwise_conv.cc leaves the stride unset, which only
        # the 1xN test reads (a 1x1 kernel asks nothing either way): a one-row input with a one-row
        # kernel is not known before run time.
        if g["h"] == 1 and g["kh"] == 1 and g["dil_w"] == 1:
            return None
        one_by_one = (g["pad_w"] == 0 and g["pad_h"] == 0 and g["kw"] == 1 and g["kh"] == 1
                      and g["dil_w"] == 1 and g["dil_h"] == 1)
        size = (0 if one_by_one else 64 * -(-(g["kh"] * g["kw"]) // 16)) + g["oc"] * g["kh"] * g["kw"]
        return [Request(size, "im2col and filter (depthwise of one channel, as a convolution)")]
    size = 0
    if family == MVE:
        size = 4 * 124 * g["kw"] * g["kh"]  # 4 * CH_IN_BLOCK_MVE rows of the kernel
    elif family == DSP:
        size = 2 * g["c"] * g["kw"] * g["kh"]  # one int16 im2col row
    return [Request(size, "im2col (depthwise s8)")] if size > 0 else []


def _average_pool(sg: Subgraph, op: Operator, family: str) -> list[Request]:
    """pooling.cc AveragePrepare: int8 and int16 ask arm_avgpool_s{8,16}_get_buffer_size: an int32
    per channel on a DSP core, nothing without DSP or with MVE (arm_avgpool_get_buffer_sizes_s8.c)."""
    x = sg.tensors[op.inputs[0]]
    if x.type not in ("INT8", "INT16") or family != DSP:
        return []
    return [Request(4 * _shape(sg, op.outputs[0])[3], "channel sums")]


def _fully_connected_path(sg: Subgraph, op: Operator, family: str) -> str:
    """The branch fully_connected.cc's Prepare takes for int8 input: "s4" (int4 weights, no
    buffer), "1x1" (output of rank > 2, accumulation depth a multiple of 4: run as a 1x1
    convolution), else arm_fully_connected_s8's kernel sums on MVE, "kernel sums" (persistent:
    constant weights and bias) or "kernel sums in scratch", and "general" (no buffer) elsewhere.
    "": not an int8 product."""
    x, wts = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]]
    if x.type != "INT8":
        return ""  # int16: arm_fully_connected_s16_get_buffer_size is 0 on every core
    if wts.type == "INT4":
        return "s4"
    if len(_shape(sg, op.outputs[0])) > 2 and _shape(sg, op.inputs[1])[-1] % 4 == 0:
        return "1x1"
    if family != MVE:
        return "general"
    return "kernel sums" if _kernel_sums_persistent(sg, op) else "kernel sums in scratch"


def _fully_connected(sg: Subgraph, op: Operator, family: str) -> list[Request]:
    """fully_connected.cc: the 1x1 path with per-tensor quantization asks for a multiplier and a
    shift per output; MVE's kernel sums are scratch unless the weights and bias are constant
    (then persistent: _prepare_extra)."""
    path = _fully_connected_path(sg, op, family)
    out = _shape(sg, op.outputs[0])
    if path == "1x1":
        return [] if sg.tensors[op.inputs[1]].quant_channels > 1 else [Request(8 * out[-1], "per-channel quantization (1x1)")]
    if path == "kernel sums in scratch":
        return [Request(4 * out[-1], "kernel sums")]
    return []


def _kernel_sums_persistent(sg: Subgraph, op: Operator) -> bool:
    bias = op.inputs[2] if len(op.inputs) > 2 else -1
    return sg.tensors[op.inputs[1]].has_data and (bias < 0 or sg.tensors[bias].has_data)


def _svdf(sg: Subgraph, op: Operator, family: str) -> list[Request]:
    """svdf.cc: as the reference kernel (an int32 or float per batch and filter; int8 also per
    batch and unit); MVE's kernel sums are persistent (OPTIMIZED_FOR_SPEED)."""
    x, weights = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]]
    batch, filters = x.shape[0], weights.shape[0]
    out = [Request(4 * batch * filters, "filter sums")]
    if x.type == "INT8":
        out.append(Request(4 * batch * (filters // max(_opt(op, "rank"), 1)), "unit sums"))
    return out


def _lstm_int(sg: Subgraph, op: Operator) -> tuple[bool, int, int, int]:
    """(CMSIS-NN runs it: int8 or int16 activations with an int16 cell state; batch; state size;
    bytes of a kernel-sum element)."""
    x, hidden, cell = (sg.tensors[op.inputs[i]] for i in (0, 18, 19))
    batch = x.shape[1] if op.options.get("time_major") else x.shape[0]
    cmsis = x.type in ("INT8", "INT16") and cell.type == "INT16"
    return cmsis, batch, hidden.shape[-1], 8 if x.type == "INT16" else 4


def _lstm(sg: Subgraph, op: Operator, family: str) -> list[Request]:
    """unidirectional_sequence_lstm.cc: batch x state in the cell state's type, three buffers when
    CMSIS-NN runs it (integer), four for the float fallback."""
    cmsis, batch, state, _ = _lstm_int(sg, op)
    element = 2 if sg.tensors[op.inputs[19]].type == "INT16" else 4
    return [Request(batch * state * element, f"gate buffer {i}") for i in range(3 if cmsis else 4)]


def _transpose_conv_path(sg: Subgraph, op: Operator, family: str) -> str:
    """The branch arm_transpose_conv_s8_get_buffer_size takes for int8: "reverse" (strides at most
    2, more than 16 input channels: the reverse convolution) or "columns". "": not int8."""
    if sg.tensors[op.inputs[2]].type != "INT8":
        return ""
    in_c = _shape(sg, op.inputs[2])[3]
    return "reverse" if _opt(op, "stride_w") <= 2 and _opt(op, "stride_h") <= 2 and in_c > 16 else "columns"


def _transpose_conv(sg: Subgraph, op: Operator, family: str) -> list[Request]:
    """transpose_conv.cc: int8 asks arm_transpose_conv_s8_get_buffer_size and the reverse
    convolution's buffer (both asked, even of 0 bytes); int16 an int64 per output element, then
    (CalculateOpData) an int64 per bias element for an int16 bias. Source:
    arm_transpose_conv_get_buffer_sizes_s8.c (REVERSE_TCOL_EFFICIENT_THRESHOLD 16)."""
    x, y = sg.tensors[op.inputs[2]], sg.tensors[op.outputs[0]]
    if x.type == "INT16":
        out = [Request(8 * math.prod(y.shape), "int64 accumulators")]
        if len(op.inputs) > 3 and op.inputs[3] >= 0 and sg.tensors[op.inputs[3]].type == "INT16":
            out.append(Request(8 * math.prod(sg.tensors[op.inputs[3]].shape), "int64 bias"))
        return out
    if x.type != "INT8":
        return []
    _, _, in_w, in_c = _shape(sg, op.inputs[2])
    out_c, kh, kw, _ = _shape(sg, op.inputs[1])
    sw, sh = _opt(op, "stride_w"), _opt(op, "stride_h")
    if _transpose_conv_path(sg, op, family) == "reverse":
        k = kw * kh * in_c
        size = 64 * -(-k // 16) if family == MVE else 4 * _ceil(k, 4)
        reverse = in_c * kw * kh * out_c
    else:
        size = ((in_w - 1) * sw + max(kw, sh)) * out_c * max(kh, sh) * 4
        reverse = 0
    return [Request(size, "columns"), Request(reverse, "reversed filter")]


def _batch_matmul_scratch(sg: Subgraph, op: Operator, family: str) -> list[Request]:
    """batch_matmul.cc: an int8 product asks arm_fully_connected_s8_get_buffer_size of the output
    shape (kernel sums: an int32 per output column on MVE, nothing elsewhere)."""
    if sg.tensors[op.inputs[0]].type != "INT8" or sg.tensors[op.inputs[1]].type == "FLOAT32" or family != MVE:
        return []
    return [Request(4 * _shape(sg, op.outputs[0])[-1], "kernel sums")]


def _none(sg: Subgraph, op: Operator, family: str) -> list[Request]:
    return []


SCRATCH = {
    "CONV_2D": _conv, "DEPTHWISE_CONV_2D": _depthwise, "AVERAGE_POOL_2D": _average_pool,
    "MAX_POOL_2D": _none, "FULLY_CONNECTED": _fully_connected, "SVDF": _svdf,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": _lstm, "SOFTMAX": _none, "TRANSPOSE_CONV": _transpose_conv,
    "BATCH_MATMUL": _batch_matmul_scratch,
    # Same requests as the reference kernels (none): add.cc, mul.cc, pad.cc, maximum_minimum.cc, transpose.cc.
    "ADD": _none, "MUL": _none, "PAD": _none, "PADV2": _none, "MAXIMUM": _none, "MINIMUM": _none,
    "TRANSPOSE": _none,
}


# The kernels whose buffers depend on a branch of their buffer-size code beyond the input's type:
# the branch's name, from the same function the requests are computed by.
PATH = {"CONV_2D": _conv_path, "DEPTHWISE_CONV_2D": _depthwise_path, "FULLY_CONNECTED": _fully_connected_path,
        "TRANSPOSE_CONV": _transpose_conv_path}


def scratch_path(sg: Subgraph, op: Operator, family: str) -> str:
    """Which buffer-size branch the op's CMSIS-NN kernel takes on `family` ("": the kernel has one
    for the op's types)."""
    rule = PATH.get(op.name)
    return rule(sg, op, family) if rule is not None else ""


def scratch_requests(sg: Subgraph, op: Operator, family: str) -> list[Request] | None:
    """The op's scratch requests on a CMSIS-NN build of `family`, in order; None where the rule is
    not known (the caller counts the kernel as unmodelled)."""
    rule = SCRATCH.get(op.name)
    return None if rule is None else rule(sg, op, family)


# -- persistent buffers (Init's OpData, then Prepare's) ----------------------------------------

def persistent_buffers(sg: Subgraph, op: Operator, family: str, reference: list[int],
                       eval_tensor: int) -> list[int] | None:
    """The persistent buffers of a replaced kernel, in order, from the reference kernel's
    (`reference`: its OpData first, when it has one); None where not known. `eval_tensor`: bytes
    of a TfLiteEvalTensor on the target."""
    if op.name == "BATCH_MATMUL":
        return _batch_matmul(sg, op, family, eval_tensor)
    extra = _prepare_extra(sg, op, family)
    if extra is None:
        return None
    if op.name in OPDATA and reference:
        reference = [OPDATA[op.name], *reference[1:]]
    if op.name in ("CONV_2D", "DEPTHWISE_CONV_2D") and sg.tensors[op.inputs[0]].type not in ("INT8", "INT16"):
        # conv.cc, depthwise_conv.cc: the per-channel arrays only for a quantized input (the
        # reference kernels take them for float32 too).
        reference = reference[:1]
    return [*reference, *extra]


def _prepare_extra(sg: Subgraph, op: Operator, family: str) -> list[int] | None:
    """Persistent buffers a CMSIS-NN kernel takes in Prepare after the reference kernel's ones
    (per-channel arrays, int16 softmax tables: taken as the reference kernel takes them)."""
    if op.name == "FULLY_CONNECTED":
        if _fully_connected_path(sg, op, family) == "kernel sums":
            return [4 * _shape(sg, op.outputs[0])[-1]]  # one int32 per output (arm_vector_sum_s8)
        return []
    if op.name == "SVDF":
        if family == MVE and sg.tensors[op.inputs[0]].type == "INT8":
            return [4 * sg.tensors[op.inputs[1]].shape[0]]  # kernel sums, one int32 per filter
        return []
    if op.name == "UNIDIRECTIONAL_SEQUENCE_LSTM":
        cmsis, _, state, element = _lstm_int(sg, op)
        # CMSIS_NN_PortOpData: the input and recurrent kernel sums (with bias) of each of four gates.
        return [state * element] * 8 if cmsis else []
    return []  # transpose_conv.cc: the reference's per-channel arrays (for every type, float too)


def _batch_matmul(sg: Subgraph, op: Operator, family: str, eval_tensor: int) -> list[int]:
    """batch_matmul.cc: OpData; a transposed copy (TfLiteEvalTensor, dims, data) of the left side
    when adj_x and of the right side unless adj_y; the output's dims moved to persistent memory
    (ReshapeOutputTensor); then, for an integer product, its quantization data (seven int32)."""
    lhs, rhs = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]]
    out = [OPDATA["BATCH_MATMUL"]]
    for side, transposed in ((lhs, bool(op.options.get("adj_x"))), (rhs, not op.options.get("adj_y"))):
        if transposed:
            out += [eval_tensor, 4 + 4 * len(side.shape), side.nbytes or 0]
    out.append(4 + 4 * len(_shape(sg, op.outputs[0])))
    if lhs.type != "FLOAT32" and rhs.type != "FLOAT32":
        out.append(7 * 4)
    return out


def prepare_temp_tensors(sg: Subgraph, op: Operator) -> list[int] | None:
    """The tensors a CMSIS-NN kernel's Prepare holds as temporaries, in order, where it differs
    from the reference kernel's (None: as the reference). pooling.cc AveragePrepare: the shared
    PoolingPrepare takes input and output, then AveragePrepare takes them again (every type);
    TFLite Micro frees them only when Prepare ends."""
    if op.name == "AVERAGE_POOL_2D":
        return [op.inputs[0], op.outputs[0], op.inputs[0], op.outputs[0]]
    return None


def prepare_buffers_overlap_temps(sg: Subgraph, op: Operator) -> bool:
    """The CMSIS-NN LSTM takes its kernel sums while its tensors sit in temp memory (LstmTensors),
    then only releases them: like int16 SOFTMAX's tables, the buffers may lie over all but what
    the release reads (kernels/tflm_arena.py, prepare_temps)."""
    return op.name == "UNIDIRECTIONAL_SEQUENCE_LSTM" and _lstm_int(sg, op)[0]
