"""Which kernel rules each device target's own TFLite Micro has proven: the coverage matrix.

A figure for a device target is modelled (struct sizes, kernel rules); it is proven when the
target's build of TFLite Micro (.ci/build_tflm_targets.sh: the tests' oracle) has run, in exactly
the predicted arena and not in 16 B less, models holding every kernel of the model in every form
that changes its memory. A form is the operator, its first input's type and, for the kernels that
keep per-channel arrays, whether the weights are quantized per channel. The matrix below claims
only what tests/compare/test_tflm_targets.py shows on the oracle (each entry must be covered by a
case that runs exact); a model with a form outside it is modelled, not proven.
"""

from __future__ import annotations

from packager.model import Model

_PER_CHANNEL = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV"})
_DATA_INPUT = {"TRANSPOSE_CONV": 2}  # its input 0 is the output shape

# The operators the oracle builds register: the shared recipe's trimmed op resolver (RESOLVER=trim,
# cortex-m/harness/ops_resolver_trim.cc), 33 operators, so that CI builds each target in minutes.
TRIM_RESOLVER = frozenset({
    "ADD", "ASSIGN_VARIABLE", "AVERAGE_POOL_2D", "CALL_ONCE", "CAST", "CONCATENATION", "CONV_2D",
    "DEPTH_TO_SPACE", "DEPTHWISE_CONV_2D", "DEQUANTIZE", "DIV", "FULLY_CONNECTED", "HARD_SWISH",
    "LOGISTIC", "MAXIMUM", "MEAN", "MINIMUM", "MUL", "PACK", "PAD", "QUANTIZE", "READ_VARIABLE",
    "RESHAPE", "SHAPE", "SOFTMAX", "SPLIT_V", "STRIDED_SLICE", "SUB", "SVDF", "TANH", "TRANSPOSE",
    "UNIDIRECTIONAL_SEQUENCE_LSTM", "VAR_HANDLE",
})

# The kernel forms the CMSIS-NN builds hold exact: the cases of the reference build with
# fixtures/tflm_cmsis_kernels.py (each CMSIS-NN buffer path).
_CMSIS_NN_FORMS = frozenset({
    "ADD FLOAT32", "ADD INT8", "ASSIGN_VARIABLE RESOURCE", "AVERAGE_POOL_2D FLOAT32",
    "AVERAGE_POOL_2D INT16", "AVERAGE_POOL_2D INT8", "CALL_ONCE NONE", "CAST FLOAT32",
    "CONCATENATION INT32", "CONCATENATION INT8", "CONV_2D FLOAT32", "CONV_2D INT16 per-channel",
    "CONV_2D INT8 per-channel", "DEPTHWISE_CONV_2D FLOAT32", "DEPTHWISE_CONV_2D INT8 per-channel",
    "DEPTH_TO_SPACE FLOAT32", "DEQUANTIZE INT8", "DIV FLOAT32", "FULLY_CONNECTED FLOAT32",
    "FULLY_CONNECTED INT8", "FULLY_CONNECTED INT8 per-channel", "HARD_SWISH FLOAT32", "HARD_SWISH INT8",
    "LOGISTIC INT8", "MAXIMUM FLOAT32", "MEAN FLOAT32", "MEAN INT8", "MINIMUM FLOAT32", "MUL FLOAT32",
    "MUL INT8", "PACK INT8", "PAD FLOAT32", "PAD INT8", "QUANTIZE FLOAT32", "QUANTIZE INT16",
    "READ_VARIABLE RESOURCE", "RESHAPE FLOAT32", "RESHAPE INT8", "SHAPE FLOAT32", "SOFTMAX FLOAT32",
    "SOFTMAX INT16", "SOFTMAX INT8", "SPLIT_V FLOAT32", "STRIDED_SLICE FLOAT32", "STRIDED_SLICE INT32",
    "SUB INT8", "SVDF FLOAT32", "SVDF INT8", "TANH INT8", "TRANSPOSE FLOAT32", "TRANSPOSE INT8",
    "UNIDIRECTIONAL_SEQUENCE_LSTM FLOAT32", "UNIDIRECTIONAL_SEQUENCE_LSTM INT8", "VAR_HANDLE RESOURCE",
})

# build -> the forms proven on it (see the module's comment; the test holds every entry). A build
# not listed has proven nothing yet: its figures are proven only by running the model itself.
PROVEN: dict[str, frozenset[str]] = {
    # The shared TFLite Micro example models and the fixtures of fixtures/tflm_kernels.py and
    # fixtures/runtime_cases.py whose operators the build registers.
    "cortex-m4": frozenset({
        "ADD FLOAT32", "ADD INT8", "ASSIGN_VARIABLE RESOURCE", "AVERAGE_POOL_2D FLOAT32",
        "AVERAGE_POOL_2D INT8", "CALL_ONCE NONE", "CAST FLOAT32", "CONCATENATION INT32",
        "CONCATENATION INT8", "CONV_2D FLOAT32", "CONV_2D INT8 per-channel",
        "DEPTHWISE_CONV_2D FLOAT32", "DEPTHWISE_CONV_2D INT8 per-channel", "DEPTH_TO_SPACE FLOAT32",
        "DEQUANTIZE INT8", "DIV FLOAT32", "FULLY_CONNECTED FLOAT32", "FULLY_CONNECTED INT8",
        "FULLY_CONNECTED INT8 per-channel", "HARD_SWISH FLOAT32", "HARD_SWISH INT8",
        "LOGISTIC INT8", "MAXIMUM FLOAT32", "MEAN FLOAT32", "MEAN INT8", "MINIMUM FLOAT32",
        "MUL FLOAT32", "MUL INT8", "PACK INT8", "PAD FLOAT32", "PAD INT8", "QUANTIZE FLOAT32",
        "QUANTIZE INT16", "READ_VARIABLE RESOURCE", "RESHAPE FLOAT32", "RESHAPE INT8",
        "SHAPE FLOAT32", "SOFTMAX FLOAT32", "SOFTMAX INT16", "SOFTMAX INT8", "SPLIT_V FLOAT32",
        "STRIDED_SLICE FLOAT32", "STRIDED_SLICE INT32", "SUB INT8", "SVDF FLOAT32", "SVDF INT8",
        "TANH INT8", "TRANSPOSE FLOAT32", "TRANSPOSE INT8", "UNIDIRECTIONAL_SEQUENCE_LSTM FLOAT32",
        "UNIDIRECTIONAL_SEQUENCE_LSTM INT8", "VAR_HANDLE RESOURCE",
    }),
    # The same cases on the DSP CMSIS-NN build (M4, M7, M33), with fixtures/tflm_cmsis_kernels.py:
    # each CMSIS-NN buffer path (im2col, 1xN, 1x1, int16 convolution, depthwise with and without its
    # DSP buffer, int8 and int16 average pooling, fully connected as a 1x1 convolution).
    "cortex-m4+cmsis-nn": _CMSIS_NN_FORMS,
    # The MVE build (M55, M85: set-up with CMSIS-NN's MVE buffer sizes) and the no-DSP build (M0,
    # M0+, M3) hold the same cases exact.
    "cortex-m55+cmsis-nn": _CMSIS_NN_FORMS,
    "cortex-m3+cmsis-nn": _CMSIS_NN_FORMS,
}


def forms(model: Model) -> list[str]:
    """Each distinct kernel form of the model, in order of first appearance."""
    seen: dict[str, None] = {}
    for sg in model.subgraphs:
        for op in sg.operators:
            seen.setdefault(form(sg, op), None)
    return list(seen)


def form(sg, op) -> str:
    if op.opcode.is_custom:
        return op.name
    at = _DATA_INPUT.get(op.name, 0)
    first = op.inputs[at] if len(op.inputs) > at and op.inputs[at] >= 0 else (op.outputs[0] if op.outputs else -1)
    kind = sg.tensors[first].type if first >= 0 else "NONE"
    per_channel = (op.name in _PER_CHANNEL and len(op.inputs) > 1 and op.inputs[1] >= 0
                   and sg.tensors[op.inputs[1]].quant_channels > 1)
    return f"{op.name} {kind}{' per-channel' if per_channel else ''}"


def unregistered(model: Model, build: str) -> list[str]:
    """The model's operators the oracle build does not register (it cannot run the model)."""
    names = {op.name for sg in model.subgraphs for op in sg.operators}
    return sorted(names - TRIM_RESOLVER) if build else sorted(names)


def unproven(model: Model, build: str) -> list[str]:
    """The model's kernel forms the build's oracle has not proven ([] : the figure is proven)."""
    proven = PROVEN.get(build, frozenset())
    return [f for f in forms(model) if f not in proven]
