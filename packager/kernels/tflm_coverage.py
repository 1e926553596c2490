"""Which kernel rules each device target's own TFLite Micro has proven: the coverage matrix.

A figure for a device target is modelled (struct sizes, kernel rules); it is proven when the
target's build of TFLite Micro (.ci/build_tflm_targets.sh: the tests' oracle) has run, in exactly
the predicted arena and not in 16 B less, models holding every kernel of the model in every form
that changes its memory. A form is the operator, its first input's type and, for the kernels that
keep per-channel arrays, whether the weights are quantized per channel; on a CMSIS-NN build, for the
kernels whose buffers depend on more, also the branch of CMSIS-NN's buffer-size code the kernel
takes (1x1, 1xN, im2col...: kernels/tflm_cmsis_nn.py, scratch_path). The matrix below claims
only what tests/compare/test_tflm_targets.py shows on the oracle (each entry must be covered by a
case that runs exact); a model with a form outside it is modelled, not proven.
"""

from __future__ import annotations

from packager.kernels import tflm_cmsis_nn
from packager.kernels.tflm_arena import CMSIS_NN_ORACLES
from packager.kernels.tflm_op_resolver import BUILTIN_ADD, CUSTOM_ADD
from packager.model import Model

_PER_CHANNEL = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV"})
_DATA_INPUT = {"TRANSPOSE_CONV": 2}  # its input 0 is the output shape

# The operators the oracle builds register (.ci/build_tflm_targets.sh). The full resolver (every Cortex-M
# build, reference kernels or CMSIS-NN): the tflite-micro Python package's op resolver, the Signal
# library's ops included (built beside the recipe's library, kissfft downloaded at build time), i.e. every
# builtin TFLite Micro has a kernel for and its own custom ops but ethos-u (no Ethos-U driver here:
# AddEthosU adds nothing). tests/compare/test_tflm_targets.py holds these against each build's own
# `tflm_fit --registered`.
REGISTERED = frozenset(BUILTIN_ADD) | (frozenset(CUSTOM_ADD) - {"ethos-u"})
# armhf-linux (built by name, the linux recipe's library) has the recipe's resolver without the Signal ops.
_NO_SIGNAL_BUILDS = frozenset({"armhf-linux"})


def registered_by(build: str) -> frozenset[str]:
    """The operators (builtin names and custom codes) the build's fit program registers."""
    if build in _NO_SIGNAL_BUILDS:
        return frozenset(n for n in REGISTERED if not n.startswith("Signal"))
    return REGISTERED
TFLM_CUSTOM = frozenset(CUSTOM_ADD)  # the custom codes TFLite Micro has kernels for in some build

# The kernel forms the reference-kernel builds hold exact: every form held exact by a case on the full
# build (the shared TFLite Micro example models, the fixtures of fixtures/tflm_kernels.py and
# fixtures/runtime_cases.py, the catalog's models) and the rows of the coverage matrix
# (fixtures/op_matrix.py, docs/device-matrix.md), none in a case that was not exact
# (tests/compare/test_tflm_targets.py and test_tflm_target_matrix.py). cortex-m4 (bare metal, short
# enums) and armhf-linux (32-bit ARM Linux, 4-byte enums) hold the same forms.
_REFERENCE_FORMS = frozenset({
    "ABS FLOAT32", "ABS INT16", "ABS INT8", "ADD FLOAT32", "ADD INT16", "ADD INT32", "ADD INT8",
    "ADD_N FLOAT32", "ADD_N INT8", "ARG_MAX FLOAT32", "ARG_MAX INT16", "ARG_MAX INT8",
    "ARG_MIN FLOAT32", "ARG_MIN INT16", "ARG_MIN INT8", "ASSIGN_VARIABLE RESOURCE",
    "AVERAGE_POOL_2D FLOAT32", "AVERAGE_POOL_2D INT16", "AVERAGE_POOL_2D INT8",
    "BATCH_MATMUL FLOAT32", "BATCH_MATMUL INT16", "BATCH_MATMUL INT8", "BATCH_TO_SPACE_ND FLOAT32",
    "BATCH_TO_SPACE_ND INT16", "BATCH_TO_SPACE_ND INT8", "BROADCAST_ARGS INT32",
    "BROADCAST_TO FLOAT32", "BROADCAST_TO INT16", "BROADCAST_TO INT8", "CALL_ONCE NONE",
    "CAST FLOAT32", "CAST INT32", "CEIL FLOAT32", "CIRCULAR_BUFFER", "CONCATENATION FLOAT32",
    "CONCATENATION INT16", "CONCATENATION INT32", "CONCATENATION INT8", "CONV_2D FLOAT32",
    "CONV_2D INT16 per-channel", "CONV_2D INT8", "CONV_2D INT8 per-channel", "COS FLOAT32",
    "COS INT16", "COS INT8", "CUMSUM FLOAT32", "CUMSUM INT8", "DEPTHWISE_CONV_2D FLOAT32",
    "DEPTHWISE_CONV_2D INT16 per-channel", "DEPTHWISE_CONV_2D INT8",
    "DEPTHWISE_CONV_2D INT8 per-channel", "DEPTH_TO_SPACE FLOAT32", "DEPTH_TO_SPACE INT8",
    "DEQUANTIZE INT16", "DEQUANTIZE INT8", "DIV FLOAT32", "DIV INT16", "DIV INT8",
    "DYNAMIC_UPDATE_SLICE FLOAT32", "DYNAMIC_UPDATE_SLICE INT16", "DYNAMIC_UPDATE_SLICE INT8",
    "ELU FLOAT32", "ELU INT16", "ELU INT8", "EMBEDDING_LOOKUP INT32", "EQUAL FLOAT32", "EQUAL INT16", "EQUAL INT8",
    "EXP FLOAT32", "EXPAND_DIMS FLOAT32", "EXPAND_DIMS INT16", "EXPAND_DIMS INT8", "FILL INT32",
    "FLOOR FLOAT32", "FLOOR INT16", "FLOOR INT8", "FLOOR_DIV FLOAT32", "FLOOR_DIV INT16",
    "FLOOR_DIV INT8", "FLOOR_MOD FLOAT32", "FLOOR_MOD INT16", "FLOOR_MOD INT8",
    "FULLY_CONNECTED FLOAT32", "FULLY_CONNECTED INT16 per-channel", "FULLY_CONNECTED INT8",
    "FULLY_CONNECTED INT8 per-channel", "GATHER FLOAT32", "GATHER INT8", "GATHER_ND FLOAT32",
    "GATHER_ND INT8", "GREATER FLOAT32", "GREATER INT16", "GREATER INT8", "GREATER_EQUAL FLOAT32",
    "GREATER_EQUAL INT16", "GREATER_EQUAL INT8", "HARD_SWISH FLOAT32", "HARD_SWISH INT16",
    "HARD_SWISH INT8", "IF BOOL", "L2_NORMALIZATION FLOAT32", "L2_NORMALIZATION INT8",
    "L2_POOL_2D FLOAT32", "LEAKY_RELU FLOAT32", "LEAKY_RELU INT16", "LEAKY_RELU INT8",
    "LESS FLOAT32", "LESS INT16", "LESS INT32", "LESS INT8", "LESS_EQUAL FLOAT32",
    "LESS_EQUAL INT16", "LESS_EQUAL INT8", "LOG FLOAT32", "LOG INT16", "LOG INT8",
    "LOGICAL_AND BOOL", "LOGICAL_NOT BOOL", "LOGICAL_OR BOOL", "LOGISTIC FLOAT32", "LOGISTIC INT8",
    "LOG_SOFTMAX FLOAT32", "LOG_SOFTMAX INT16", "LOG_SOFTMAX INT8", "MAXIMUM FLOAT32",
    "MAXIMUM INT16", "MAXIMUM INT8", "MAX_POOL_2D FLOAT32", "MAX_POOL_2D INT16", "MAX_POOL_2D INT8",
    "MEAN FLOAT32", "MEAN INT16", "MEAN INT8", "MINIMUM FLOAT32", "MINIMUM INT16", "MINIMUM INT8",
    "MIRROR_PAD FLOAT32", "MIRROR_PAD INT16", "MIRROR_PAD INT8", "MUL FLOAT32", "MUL INT16",
    "MUL INT8", "NEG FLOAT32", "NEG INT16", "NEG INT8", "NOT_EQUAL FLOAT32", "NOT_EQUAL INT16",
    "NOT_EQUAL INT8", "PACK FLOAT32", "PACK INT16", "PACK INT8", "PAD FLOAT32", "PAD INT16",
    "PAD INT8", "PADV2 FLOAT32", "PADV2 INT16", "PADV2 INT8", "PRELU FLOAT32", "PRELU INT8",
    "QUANTIZE FLOAT32", "QUANTIZE INT16", "QUANTIZE INT8", "READ_VARIABLE RESOURCE",
    "REDUCE_ALL BOOL", "REDUCE_MAX FLOAT32", "REDUCE_MAX INT16", "REDUCE_MAX INT8",
    "REDUCE_MIN FLOAT32", "REDUCE_MIN INT16", "REDUCE_MIN INT8", "RELU FLOAT32", "RELU INT16",
    "RELU INT8", "RELU6 FLOAT32", "RELU6 INT16", "RELU6 INT8", "RESHAPE BOOL", "RESHAPE FLOAT32",
    "RESHAPE INT16", "RESHAPE INT8", "RESIZE_BILINEAR FLOAT32", "RESIZE_BILINEAR INT16",
    "RESIZE_BILINEAR INT8", "RESIZE_NEAREST_NEIGHBOR FLOAT32", "RESIZE_NEAREST_NEIGHBOR INT16",
    "RESIZE_NEAREST_NEIGHBOR INT8", "REVERSE_V2 FLOAT32", "REVERSE_V2 INT16", "REVERSE_V2 INT8",
    "ROUND FLOAT32", "RSQRT FLOAT32", "RSQRT INT16", "RSQRT INT8", "SELECT_V2 BOOL",
    "SHAPE FLOAT32", "SHAPE INT16", "SHAPE INT8", "SIN FLOAT32", "SIN INT16", "SIN INT8",
    "SLICE FLOAT32", "SLICE INT16", "SLICE INT8", "SOFTMAX FLOAT32", "SOFTMAX INT16",
    "SOFTMAX INT8", "SPACE_TO_BATCH_ND FLOAT32", "SPACE_TO_BATCH_ND INT16",
    "SPACE_TO_BATCH_ND INT8", "SPACE_TO_DEPTH FLOAT32", "SPACE_TO_DEPTH INT8", "SPLIT INT32",
    "SPLIT_V FLOAT32", "SPLIT_V INT16", "SPLIT_V INT8", "SQRT FLOAT32", "SQRT INT16", "SQRT INT8",
    "SQUARE FLOAT32", "SQUARE INT16", "SQUARE INT8", "SQUARED_DIFFERENCE FLOAT32",
    "SQUARED_DIFFERENCE INT16", "SQUARED_DIFFERENCE INT8", "SQUEEZE FLOAT32", "SQUEEZE INT16",
    "SQUEEZE INT8", "STRIDED_SLICE FLOAT32", "STRIDED_SLICE INT16", "STRIDED_SLICE INT32",
    "STRIDED_SLICE INT8", "SUB FLOAT32", "SUB INT16", "SUB INT32", "SUB INT8", "SUM FLOAT32",
    "SUM INT16", "SUM INT8", "SVDF FLOAT32", "SVDF INT8", "TANH FLOAT32", "TANH INT8",
    "TFLM_DECODE", "TFLite_Detection_PostProcess", "TRANSPOSE FLOAT32", "TRANSPOSE INT16",
    "TRANSPOSE INT8", "TRANSPOSE_CONV FLOAT32", "TRANSPOSE_CONV INT16 per-channel",
    "TRANSPOSE_CONV INT8", "TRANSPOSE_CONV INT8 per-channel",
    "UNIDIRECTIONAL_SEQUENCE_LSTM FLOAT32", "UNIDIRECTIONAL_SEQUENCE_LSTM INT8", "UNPACK FLOAT32",
    "UNPACK INT16", "UNPACK INT8", "VAR_HANDLE RESOURCE", "WHILE INT32", "ZEROS_LIKE FLOAT32",
    "ZEROS_LIKE INT16", "ZEROS_LIKE INT8",
})

# The Signal library's forms held exact on the cortex-m4 build (its own Signal kernels, kissfft from
# Debian's source archive: .ci/fetch_kissfft.sh) and on x86_64-linux; armhf-linux builds none.
_SIGNAL_FORMS = frozenset({
    "SignalDelay INT16", "SignalEnergy INT16", "SignalFftAutoScale INT16", "SignalFilterBank UINT32",
    "SignalFilterBankLog UINT32", "SignalFilterBankSpectralSubtraction UINT32",
    "SignalFilterBankSquareRoot UINT64", "SignalFramer INT16", "SignalIrfft FLOAT32", "SignalIrfft INT16",
    "SignalOverlapAdd INT16", "SignalPCAN UINT32", "SignalRfft INT16", "SignalStacker INT16",
    "SignalWindow INT16",
})

# The forms a CMSIS-NN kernel refuses (not even 8 MiB sets them up): fully_connected.cc takes per-channel
# weights for int8 input only, and transpose_conv.cc's int16 path refuses the matrix's int16x8 models.
_CMSIS_NN_REFUSED = frozenset({"FULLY_CONNECTED INT16 per-channel", "TRANSPOSE_CONV INT16 per-channel"})
# On a CMSIS-NN build these forms name the buffer-size branch their kernel takes (form, below), so the
# reference builds' untagged ones stand for nothing there.
_BRANCHED = frozenset({
    "CONV_2D INT8", "CONV_2D INT8 per-channel", "DEPTHWISE_CONV_2D INT8", "DEPTHWISE_CONV_2D INT8 per-channel",
    "FULLY_CONNECTED INT8", "FULLY_CONNECTED INT8 per-channel", "TRANSPOSE_CONV INT8",
    "TRANSPOSE_CONV INT8 per-channel",
})
_CMSIS_NN_COMMON = (_REFERENCE_FORMS | _SIGNAL_FORMS) - _CMSIS_NN_REFUSED - _BRANCHED
# The branches held exact off MVE (the no-DSP and DSP builds take the same ones: only sizes differ).
# Not run yet: FULLY_CONNECTED's s4 (int4 weights per tensor; CMSIS-NN refuses them per channel) and
# TRANSPOSE_CONV's reverse convolution with per-tensor weights.
_OFF_MVE_BRANCHES = frozenset({
    "CONV_2D INT8 [1x1]", "CONV_2D INT8 [1xN]", "CONV_2D INT8 [im2col]", "CONV_2D INT8 per-channel [1x1]",
    "CONV_2D INT8 per-channel [1xN]", "CONV_2D INT8 per-channel [im2col]", "DEPTHWISE_CONV_2D INT8 [3x3]",
    "DEPTHWISE_CONV_2D INT8 [general]", "DEPTHWISE_CONV_2D INT8 [opt]", "DEPTHWISE_CONV_2D INT8 per-channel [3x3]",
    "DEPTHWISE_CONV_2D INT8 per-channel [general]", "DEPTHWISE_CONV_2D INT8 per-channel [opt]",
    "DEPTHWISE_CONV_2D INT8 per-channel [s4 general]", "DEPTHWISE_CONV_2D INT8 per-channel [s4 opt]",
    "FULLY_CONNECTED INT8 [1x1]", "FULLY_CONNECTED INT8 [general]", "FULLY_CONNECTED INT8 per-channel [1x1]",
    "FULLY_CONNECTED INT8 per-channel [general]", "TRANSPOSE_CONV INT8 [columns]",
    "TRANSPOSE_CONV INT8 per-channel [columns]", "TRANSPOSE_CONV INT8 per-channel [reverse]",
})
# The branches the M55 set-up build holds exact. Never the 1xN convolution: its MVE buffer-size code
# stops on an instruction (CSNEG, v8.1-M) qemu-arm's A-profile core does not have, so no case ran it.
# Not run yet either: the s4 FULLY_CONNECTED, the per-tensor reverse TRANSPOSE_CONV and one-channel
# depthwise.
_MVE_BRANCHES = frozenset({
    "CONV_2D INT8 [1x1]", "CONV_2D INT8 [im2col]", "CONV_2D INT8 per-channel [1x1]",
    "CONV_2D INT8 per-channel [im2col]", "DEPTHWISE_CONV_2D INT8 [general]", "DEPTHWISE_CONV_2D INT8 [opt]",
    "DEPTHWISE_CONV_2D INT8 per-channel [general]", "DEPTHWISE_CONV_2D INT8 per-channel [one input channel]",
    "DEPTHWISE_CONV_2D INT8 per-channel [opt]", "DEPTHWISE_CONV_2D INT8 per-channel [s4 general]",
    "DEPTHWISE_CONV_2D INT8 per-channel [s4 opt]", "FULLY_CONNECTED INT8 [1x1]", "FULLY_CONNECTED INT8 [kernel sums]",
    "FULLY_CONNECTED INT8 [kernel sums in scratch]", "FULLY_CONNECTED INT8 per-channel [1x1]",
    "FULLY_CONNECTED INT8 per-channel [kernel sums]", "TRANSPOSE_CONV INT8 [columns]",
    "TRANSPOSE_CONV INT8 per-channel [columns]", "TRANSPOSE_CONV INT8 per-channel [reverse]",
})

# build -> the forms proven on it (see the module's comment; the test holds every entry). A build
# not listed has proven nothing yet: its figures are proven only by running the model itself.
PROVEN: dict[str, frozenset[str]] = {
    # The reference forms, and the Signal library's, which every Cortex-M build registers.
    "cortex-m4": _REFERENCE_FORMS | _SIGNAL_FORMS,
    # The same cases and matrix rows on the CMSIS-NN builds of the DSP family (M4, M7, M33), the
    # no-DSP family (M0, M0+, M3) and the MVE family's set-up (M55, M85), with
    # fixtures/tflm_cmsis_kernels.py (CMSIS-NN's buffer branches): every form but those CMSIS-NN
    # refuses, the branched kernels' forms for the branches those cases took on that build.
    "cortex-m4+cmsis-nn": _CMSIS_NN_COMMON | _OFF_MVE_BRANCHES,
    "cortex-m3+cmsis-nn": _CMSIS_NN_COMMON | _OFF_MVE_BRANCHES,
    "cortex-m55+cmsis-nn": _CMSIS_NN_COMMON | _MVE_BRANCHES,
    # The 32-bit ARM Linux build: the same cases and matrix rows, all exact on its own build.
    "armhf-linux": _REFERENCE_FORMS,
    # TFLite Micro's sources built for x86-64 Linux (run natively): the same cases, rows and Signal forms.
    "x86_64-linux": _REFERENCE_FORMS | _SIGNAL_FORMS,
}


def cmsis_nn_family(build: str) -> str:
    """The CMSIS-NN family a build's kernels are compiled for ("": reference kernels)."""
    return next((family for family, name in CMSIS_NN_ORACLES.items() if name == build), "")


def forms(model: Model, build: str = "") -> list[str]:
    """Each distinct kernel form of the model on `build`, in order of first appearance."""
    family = cmsis_nn_family(build)
    seen: dict[str, None] = {}
    for sg in model.subgraphs:
        for op in sg.operators:
            seen.setdefault(form(sg, op, family), None)
    return list(seen)


def form(sg, op, family: str = "") -> str:
    """`family`: on a CMSIS-NN build of that family, a replaced kernel's form also names the
    buffer-size branch it takes ("CONV_2D INT8 per-channel [1xN]"): the branch the requests are
    computed by (tflm_cmsis_nn.scratch_path), so a branch no case ran is a form nothing proved."""
    if op.opcode.is_custom and not op.name.startswith("Signal"):
        return op.name  # (the Signal ops keep per-type state, kissfft's among them: their form has the type)
    at = _DATA_INPUT.get(op.name, 0)
    first = op.inputs[at] if len(op.inputs) > at and op.inputs[at] >= 0 else (op.outputs[0] if op.outputs else -1)
    kind = sg.tensors[first].type if first >= 0 else "NONE"
    per_channel = (op.name in _PER_CHANNEL and len(op.inputs) > 1 and op.inputs[1] >= 0
                   and sg.tensors[op.inputs[1]].quant_channels > 1)
    path = tflm_cmsis_nn.scratch_path(sg, op, family) if family else ""
    return f"{op.name} {kind}{' per-channel' if per_channel else ''}{f' [{path}]' if path else ''}"


def unregistered(model: Model, build: str) -> list[str]:
    """The model's operators the oracle build does not register (it cannot run the model)."""
    names = {op.name for sg in model.subgraphs for op in sg.operators}
    return sorted(names - registered_by(build)) if build else sorted(names)


def unproven(model: Model, build: str) -> list[str]:
    """The model's kernel forms the build's oracle has not proven ([] : the figure is proven)."""
    proven = PROVEN.get(build, frozenset())
    return [f for f in forms(model, build) if f not in proven]
