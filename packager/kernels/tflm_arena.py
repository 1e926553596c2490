"""TFLite Micro's tail, as data: the allocator's own objects, the per-model structs and every
kernel's builtin data and persistent buffers, per target.

Sources (facts, not code): the tflite-micro sources (micro_allocator.cc, micro_interpreter.cc,
single_arena_buffer_allocator.cc, the kernels' Init/Prepare) and measurements of the pinned
`tflite-micro` pip wheel (0.dev20261023182759, built from a commit newer than the public sources,
with compression support on). Sizes are `sizeof` on each target: x86-64 for the wheel, a 32-bit
Cortex-M build (4-byte pointers) for `cortex-m`. Every persistent buffer a kernel asks for is
aligned to 16 bytes at its start; builtin data and structs to their own alignment.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable

from packager.kernels import tflm_cmsis_nn, tflm_prepare_temps
from packager.model import Model, Operator, Subgraph, operators_named


@dataclass(frozen=True)
class Target:
    """One build of TFLite Micro: its struct sizes and the allocator the program uses."""

    name: str
    description: str
    pointer: int  # bytes of a pointer (and of size_t)
    allocator_objects: tuple[int, ...]  # buffer allocator, memory planner, micro allocator
    builtin_allocator: int  # MicroBuiltinDataAllocator
    subgraph_allocations: int  # SubgraphAllocations, per subgraph
    eval_tensor: int  # TfLiteEvalTensor
    node_and_registration: int  # NodeAndRegistration
    tflite_tensor: int  # TfLiteTensor (static memory build)
    affine_quantization: int  # TfLiteAffineQuantization
    scratch_handle: int  # ScratchBufferHandle
    scratch_request: int  # ScratchBufferRequest (head, during set-up)
    allocation_info: int  # AllocationInfo (temp, during planning)
    resource_variables: int  # MicroResourceVariables
    resource_variable: int  # MicroResourceVariable, per variable
    fc_builtin: tuple[int, int]  # TfLiteFullyConnectedParams (size, alignment)
    measured: bool  # a runtime in CI checks these figures
    rule: str  # how the figures are obtained, said beside a modelled figure
    struct_align: int = 8  # alignof of the structs holding pointers
    planner_per_buffer: int = 40  # GreedyMemoryPlanner's bytes per planned buffer
    max_scratch_per_op: int = 12  # kMaxScratchBuffersPerOp
    opdata: dict[str, int] = field(default_factory=dict)  # per-kernel OpData sizes that differ
    builtin: dict[str, tuple[int, int]] = field(default_factory=dict)  # builtin data that differs
    oracle: str = ""  # the build of .ci/build_tflm_targets.sh that runs this target's code ("": none)
    compression: bool = True  # USE_TFLM_COMPRESSION: some kernels keep OpData only then
    # MicroAllocator::Create(persistent, P, non_persistent, NP) takes these from the persistent
    # buffer instead of allocator_objects: its persistent and non-persistent buffer allocators,
    # the memory planner, the micro allocator (sizeof, compiled for the target's ABI)
    two_buffer_objects: tuple[int, ...] = ()
    cmsis_nn: str = ""  # CMSIS-NN kernels for this core family (kernels/tflm_cmsis_nn.py); "": reference
    # Kernels whose figures this target's own build contradicts with no rule found yet: named as
    # not modelled (the runtime may need more), never stated exact.
    unsettled: frozenset[str] = frozenset()
    # Kernels whose head figures (one plan for every target) count more than this build takes: the
    # kernel -> why, said beside the figure (an upper bound).
    over_counted: dict[str, str] = field(default_factory=dict)


# The pinned wheel's build (x86-64, compression on, GreedyMemoryPlanner) with a plain
# MicroInterpreter(model, resolver, arena, size), as a C++ program on the host uses it.
HOST = Target(
    name="host",
    description="tflite-micro 0.dev20261023182759 (the pinned wheel's build), x86-64, plain MicroInterpreter",
    pointer=8, allocator_objects=(72, 72, 72), builtin_allocator=16, subgraph_allocations=24,
    eval_tensor=24, node_and_registration=64, tflite_tensor=64, affine_quantization=24,
    scratch_handle=8, scratch_request=16, allocation_info=32, resource_variables=16,
    resource_variable=40, fc_builtin=(32, 8), measured=True, two_buffer_objects=(32, 56, 72, 72),
    rule="measured on the pinned wheel, whose Python interpreter (recording allocator: "
         "232 B more tail) runs each N here with N + 232 B")

# TFLite Micro built from its sources at the pinned commit for 64-bit Linux x86-64 (reference kernels,
# compression on as the wheel, a plain MicroInterpreter): what a C++ program compiled from those sources
# uses, and the build the two-buffer and shared-arena harnesses link (.ci/build_tflm_x86_64.sh). It lays
# out every structure the arena holds as the wheel does but one: TfLiteFullyConnectedParams, 16 B
# aligned to 4 (sizeof/alignof compiled with its flags), where the wheel's newer commit has 32 B aligned
# to 8. Its fit oracle runs natively (.ci/build_tflm_fit_x86_64.sh).
X86_64_LINUX = dataclasses.replace(
    HOST, name="x86_64-linux", fc_builtin=(16, 4), measured=False, oracle="x86_64-linux",
    description="TFLite Micro built from its sources at the pinned commit, 64-bit Linux x86-64, reference "
                "kernels, compression on, plain MicroInterpreter",
    rule="the pinned wheel's measured sizes but TfLiteFullyConnectedParams (16 B, aligned to 4), the "
         "sources' x86-64 layout")

# The Python interpreter's default kAllocationRecording: RecordingSingleArenaBufferAllocator (104
# instead of 72) and RecordingMicroAllocator (272 instead of 72), the first objects of the tail.
# With N + 232 B, the tail below them starts at the same address as a plain interpreter's in N B,
# so everything after (the head, the set-up room, every later allocation and its padding) is
# identical: the Python interpreter at N + 232 works exactly when the plain one at N does.
HOST_PLAIN_DIFFERENCE = (104 + 272) - (72 + 72)
RECORDING_ALLOCATOR_EXTRA = HOST_PLAIN_DIFFERENCE

# 32-bit ARM Linux (arm-linux-gnueabihf: 4-byte enums), reference kernels, a plain MicroInterpreter,
# compression off: what `--target cortex-m` modelled before device targets had their own ABI.
ARMHF_LINUX = Target(
    name="armhf-linux",
    description="32-bit ARM Linux (4-byte enums), reference kernels, plain MicroInterpreter, compression off",
    pointer=4, allocator_objects=(36, 44, 36), builtin_allocator=8, subgraph_allocations=8,
    eval_tensor=12, node_and_registration=32, tflite_tensor=40, affine_quantization=12,
    scratch_handle=4, scratch_request=12, allocation_info=24, resource_variables=12,
    resource_variable=20, fc_builtin=(16, 4), measured=False, struct_align=4, compression=False,
    two_buffer_objects=(16, 32, 44, 36),
    oracle="armhf-linux",
    rule="modelled: 32-bit struct sizes of the public tflite-micro sources (4-byte pointers), "
         "the same allocation order as the measured 64-bit build",
    opdata={"CONV_2D": 56, "DEPTHWISE_CONV_2D": 56, "FULLY_CONNECTED": 48,
            "UNIDIRECTIONAL_SEQUENCE_LSTM": 688, "SOFTMAX": 56, "QUANTIZE": 32,
            "CONCATENATION": 24, "TRANSPOSE_CONV": 72})
# Checked against the smallest arenas measured on a 32-bit ARM Linux build (compression off): the
# five TFLite Micro example models and the kernel fixtures it runs, all equal. The set-up room once
# needed 16 B more on keyword_scrambled_8bit: its QUANTIZE OpData is 32 B on ARM (a 64-bit member
# aligns it to 8), not i386's 24; float LSTM's 16 B more: OpDataLSTM is 688 B on ARM (680 on i386).
# Without compression OpDataFullyConnected loses its pointers (48 B). CONCATENATION's OpData is its ConcatenationParams alone
# without compression (two pointers, four int32: 24 B; 80 in the wheel's build), TRANSPOSE_CONV's
# 72 B (80 with compression).

# A bare-metal Cortex-M build (arm-none-eabi-gcc, as TFLite Micro's own Cortex-M targets build it),
# reference kernels: the same 32-bit layouts but short enums (an enum takes the fewest bytes its values
# need), so structures holding enums are smaller. Sizes compiled with arm-none-eabi-gcc 12.2 for
# cortex-m4 with and without -fno-short-enums (tests/oracle/tflm_sizes.cc): TfLiteTensor 32 B (40
# with 4-byte enums) and the builtin data below; every other structure the arena holds is the same.
# Reference kernels take no core-dependent path that changes a buffer, so every Cortex-M core
# (M0 to M85) has these figures.
CORTEX_M_SHORT_ENUM_BUILTIN = {
    "FULLY_CONNECTED": (5, 1), "SVDF": (8, 4), "ADD": (2, 1), "SUB": (2, 1), "MUL": (1, 1),
    "DIV": (1, 1), "L2_NORMALIZATION": (1, 1), "CAST": (2, 1), "ARG_MAX": (1, 1), "ARG_MIN": (1, 1),
    "TRANSPOSE_CONV": (16, 4), "SHAPE": (1, 1), "MIRROR_PAD": (1, 1),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (16, 4),
}
CORTEX_M_REFERENCE = dataclasses.replace(
    ARMHF_LINUX, name="cortex-m4",
    description="bare-metal Cortex-M (arm-none-eabi, short enums), reference kernels, plain MicroInterpreter",
    tflite_tensor=32, fc_builtin=CORTEX_M_SHORT_ENUM_BUILTIN["FULLY_CONNECTED"],
    builtin=CORTEX_M_SHORT_ENUM_BUILTIN, oracle="cortex-m4",
    rule="modelled: 32-bit struct sizes of the public tflite-micro sources as arm-none-eabi-gcc lays "
         "them out (short enums), the same allocation order as the measured 64-bit build")

TARGETS = {t.name: t for t in (HOST, X86_64_LINUX, ARMHF_LINUX, CORTEX_M_REFERENCE)}

# Cortex-M cores a target may name. With reference kernels every core has the M4 figures (and its
# oracle); `cortex-m` alone means that bare-metal build.
CORTEX_M_CORES = ("cortex-m0", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33",
                  "cortex-m55", "cortex-m85")
CMSIS_NN = "+cmsis-nn"  # a core's name with this: that core's build with CMSIS-NN kernels
TARGET_CHOICES = ("host", "x86_64-linux", "armhf-linux", "cortex-m", *CORTEX_M_CORES,
                  *(f"{core}{CMSIS_NN}" for core in ("cortex-m", *CORTEX_M_CORES)))

# The CMSIS-NN builds .ci/build_tflm_targets.sh makes, per core family: one core of each family
# stands for the others (the kernels' buffers depend on the family alone). MVE code cannot run
# here: the MVE build is a DSP build with CMSIS-NN's MVE buffer-size functions, whose set-up is an
# M55's (runtimes/tflm_targets.py, SET_UP_ONLY).
CMSIS_NN_ORACLES = {tflm_cmsis_nn.NO_DSP: "cortex-m3+cmsis-nn", tflm_cmsis_nn.DSP: "cortex-m4+cmsis-nn",
                    tflm_cmsis_nn.MVE: "cortex-m55+cmsis-nn"}


def target_named(name: str) -> Target | None:
    """The target a `--target` value names (None: not one): host, x86_64-linux, armhf-linux, cortex-m (= a
    bare-metal Cortex-M build, reference kernels), a core (e.g. cortex-m4), or either Cortex-M
    name with +cmsis-nn (that build with CMSIS-NN kernels; cortex-m+cmsis-nn is the M4's)."""
    if name in TARGETS:
        return TARGETS[name]
    if name == "cortex-m":
        return CORTEX_M_REFERENCE
    if name in CORTEX_M_CORES:
        return dataclasses.replace(CORTEX_M_REFERENCE, name=name,
                                   description=CORTEX_M_REFERENCE.description.replace("Cortex-M", name))
    if name.endswith(CMSIS_NN):
        core = name[:-len(CMSIS_NN)]
        core = "cortex-m4" if core == "cortex-m" else core
        family = tflm_cmsis_nn.CORE_FAMILY.get(core)
        if family is None:
            return None
        return dataclasses.replace(
            CORTEX_M_REFERENCE, name=f"{core}{CMSIS_NN}", cmsis_nn=family,
            description=f"bare-metal {core} (arm-none-eabi, short enums), CMSIS-NN kernels ({family}), "
                        "plain MicroInterpreter",
            oracle=CMSIS_NN_ORACLES.get(family, ""),
            rule="modelled: 32-bit struct sizes as arm-none-eabi-gcc lays them out (short enums), "
                 f"CMSIS-NN's OpData and {family} scratch sizes read from its sources "
                 "(kernels/tflm_cmsis_nn.py), the same allocation order as the measured 64-bit build")
    return None


# -- builtin data: one parsed params struct per builtin op (size, alignment) ----------------------

_BUILTIN_DATA: dict[str, tuple[int, int]] = {
    "CONV_2D": (28, 4), "DEPTHWISE_CONV_2D": (28, 4), "TRANSPOSE_CONV": (20, 4),
    "AVERAGE_POOL_2D": (40, 4), "MAX_POOL_2D": (40, 4), "L2_POOL_2D": (40, 4),
    "RESHAPE": (36, 4), "SQUEEZE": (36, 4), "SOFTMAX": (4, 4), "LEAKY_RELU": (4, 4),
    "ADD": (8, 4), "SUB": (8, 4), "MUL": (4, 4), "DIV": (4, 4), "CONCATENATION": (8, 4),
    "SVDF": (12, 4), "UNIDIRECTIONAL_SEQUENCE_LSTM": (16, 4), "CAST": (8, 4),
    "STRIDED_SLICE": (24, 4), "MEAN": (1, 1), "SUM": (1, 1), "REDUCE_MAX": (1, 1),
    "REDUCE_MIN": (1, 1), "REDUCE_PROD": (1, 1), "GATHER": (8, 4), "SPLIT": (4, 4),
    "SPLIT_V": (4, 4), "PACK": (8, 4), "UNPACK": (8, 4), "RESIZE_BILINEAR": (2, 1),
    "RESIZE_NEAREST_NEIGHBOR": (2, 1), "BATCH_MATMUL": (3, 1), "IF": (8, 4), "WHILE": (8, 4),
    "CALL_ONCE": (4, 4), "SHAPE": (4, 4), "DEPTH_TO_SPACE": (4, 4), "SPACE_TO_DEPTH": (4, 4),
    "ARG_MAX": (4, 4), "ARG_MIN": (4, 4), "L2_NORMALIZATION": (4, 4), "MIRROR_PAD": (4, 4),
    "GELU": (1, 1), "REDUCE_ALL": (1, 1), "CUMSUM": (2, 1),
}


def builtin_data(op: Operator, target: Target) -> tuple[int, int] | None:
    if op.opcode.is_custom:
        return None
    if op.name in target.builtin:
        return target.builtin[op.name]
    if op.name == "FULLY_CONNECTED":
        return target.fc_builtin
    if op.name == "VAR_HANDLE":  # two string pointers
        return 2 * target.pointer, target.pointer
    return _BUILTIN_DATA.get(op.name)


# -- persistent buffers a kernel asks for (Init, then Prepare), in order --------------------------

Rule = Callable[[Model, Subgraph, Operator, Target], list[int]]

# OpData allocated in Init, 64-bit sizes; Target.opdata overrides where 32-bit differs.
_OPDATA: dict[str, int] = {
    "CONV_2D": 80, "DEPTHWISE_CONV_2D": 80, "FULLY_CONNECTED": 72, "TRANSPOSE_CONV": 88,
    "SVDF": 36, "UNIDIRECTIONAL_SEQUENCE_LSTM": 688, "SOFTMAX": 80, "MEAN": 44, "SUM": 44,
    "REDUCE_MAX": 44, "REDUCE_MIN": 44, "AVERAGE_POOL_2D": 32, "MAX_POOL_2D": 32, "ADD": 60,
    "MUL": 36, "SUB": 52, "QUANTIZE": 32, "VAR_HANDLE": 4, "ASSIGN_VARIABLE": 4, "CALL_ONCE": 8,
    "IF": 8, "WHILE": 8, "RELU": 28, "RELU6": 8, "PRELU": 28, "TANH": 16, "LOGISTIC": 16,
    "LEAKY_RELU": 24, "DIV": 28, "PAD": 56, "PADV2": 56, "STRIDED_SLICE": 84,
    "CONCATENATION": 80, "GREATER": 32, "GREATER_EQUAL": 32, "LESS": 32, "LESS_EQUAL": 32,
    "EQUAL": 32, "NOT_EQUAL": 32,
    # Read from the kernels' sources (struct sizes, x86-64), checked on the kernel fixtures.
    "DEQUANTIZE": 28, "HARD_SWISH": 20, "ABS": 28, "RSQRT": 28, "ELU": 256,
    "L2_NORMALIZATION": 4, "SQUARED_DIFFERENCE": 112, "SELECT_V2": 1, "REDUCE_ALL": 44,
    "SPACE_TO_BATCH_ND": 4, "MIRROR_PAD": 20,
}

# Kernels that allocate nothing persistent (their OpData, if any, lives nowhere in the arena).
_NO_PERSISTENT = frozenset({
    "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "READ_VARIABLE", "CAST", "SPLIT",
    "SPLIT_V", "PACK", "UNPACK", "TRANSPOSE", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR",
    "MAXIMUM", "MINIMUM", "SHAPE", "ZEROS_LIKE", "FILL",
    # The kernels of the pinned build's op resolver that call no allocator at all.
    "BATCH_TO_SPACE_ND", "BROADCAST_ARGS", "BROADCAST_TO", "CEIL", "COS", "EXP", "FLOOR",
    "FLOOR_DIV", "FLOOR_MOD", "LOG", "LOGICAL_AND", "LOGICAL_NOT", "LOGICAL_OR", "NEG",
    "REVERSE_V2", "ROUND", "SIN", "SLICE", "SQRT", "SQUARE", "DYNAMIC_UPDATE_SLICE", "ARG_MAX",
    "ARG_MIN",
})


def _channels(sg: Subgraph, tensor: int, axis: int) -> int:
    shape = sg.tensors[tensor].shape
    return shape[axis] if shape else 1


def _conv(model, sg, op, target) -> list[int]:
    c = _channels(sg, op.inputs[1], 0)  # filter [C_out, H, W, C_in]
    return [target.opdata.get(op.name, _OPDATA[op.name]), 4 * c, 4 * c]


def _depthwise(model, sg, op, target) -> list[int]:
    c = _channels(sg, op.inputs[1], 3)  # filter [1, H, W, C]
    return [target.opdata.get(op.name, _OPDATA[op.name]), 4 * c, 4 * c]


def _transpose_conv(model, sg, op, target) -> list[int]:
    c = _channels(sg, op.inputs[1], 0)  # filter [C_out, H, W, C_in]
    return [target.opdata.get(op.name, _OPDATA[op.name]), 4 * c, 4 * c]


def _fully_connected(model, sg, op, target) -> list[int]:
    opdata = target.opdata.get(op.name, _OPDATA[op.name])
    weights = sg.tensors[op.inputs[1]]
    if weights.quant_channels > 1:  # per-channel: a multiplier and a shift per output
        return [opdata, 4 * weights.quant_channels, 4 * weights.quant_channels]
    return [opdata]


def _softmax(model, sg, op, target) -> list[int]:
    out = [target.opdata.get(op.name, _OPDATA[op.name])]
    if sg.tensors[op.inputs[0]].type == "INT16":  # the exp and 1/(1+x) lookup tables
        out += [2 * 513, 2 * 513]
    return out


def _opdata_only(model, sg, op, target) -> list[int]:
    if op.name in _COMPRESSION_OPDATA and not target.compression:
        return []
    return [target.opdata.get(op.name, _OPDATA[op.name])]


# Kernels whose Init takes an OpData only in a build with compression (assign_variable.cc: its
# scratch index for a compressed input); without it they register no Init at all.
_COMPRESSION_OPDATA = frozenset({"ASSIGN_VARIABLE"})


def _batch_matmul(model, sg, op, target) -> list[int]:
    """batch_matmul.cc: OpDataBatchMatmul (three pointers, three flags) in Init; in Prepare the
    quantization data of an int8/int16 product, a transposed copy (a TfLiteEvalTensor, its dims
    and its data) of the left side when adj_x and of the right side unless adj_y, then the
    output's dims moved to persistent memory."""
    lhs, rhs = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]]
    opdata = 3 * target.pointer + 3
    out = [-(-opdata // target.pointer) * target.pointer]
    if lhs.type in ("INT8", "INT16"):
        out.append(_BATCH_MATMUL_QUANTIZATION)
    for side, transposed in ((lhs, bool(op.options.get("adj_x"))), (rhs, not op.options.get("adj_y"))):
        if transposed:
            out += [target.eval_tensor, 4 + 4 * len(side.shape), side.nbytes or 0]
    return out + [_dims_copy(sg, op.outputs[0])]


_BATCH_MATMUL_QUANTIZATION = 7 * 4  # QuantizationOpDataBatchMatmul: seven int32 fields


def _dims_copy(sg: Subgraph, tensor: int) -> int:
    """CreateWritableTensorDimsWithCopy: the output's TfLiteIntArray (a size and an int per
    dimension) moved to persistent memory, since Prepare rewrites it."""
    return 4 + 4 * len(sg.tensors[tensor].shape)


def _output_dims(model, sg, op, target) -> list[int]:
    return [_dims_copy(sg, op.outputs[0])]


def _embedding_lookup(model, sg, op, target) -> list[int]:
    """Prepare moves the output's dims to persistent memory first, then takes its OpData (a float
    and a size_t): embedding_lookup.cc calls CreateWritableTensorDimsWithCopy before
    CalculateOpData. The order counts where the tail is not on a 16-byte boundary."""
    opdata = -(-(4 + target.pointer) // target.pointer) * target.pointer
    return [_dims_copy(sg, op.outputs[0]), opdata]


def _int8_only(size_64: int, size_32: int) -> Rule:
    """An OpData the kernel takes in Prepare for an int8 output only (LOG_SOFTMAX: two size_t
    members; CUMSUM and ADD_N: int32 members only)."""
    def rule(model, sg, op, target) -> list[int]:
        if sg.tensors[op.outputs[0]].type != "INT8":
            return []
        return [size_64 if target.pointer == 8 else size_32]
    return rule


RULES: dict[str, Rule] = {
    "CONV_2D": _conv, "DEPTHWISE_CONV_2D": _depthwise, "TRANSPOSE_CONV": _transpose_conv,
    "FULLY_CONNECTED": _fully_connected, "SOFTMAX": _softmax, "BATCH_MATMUL": _batch_matmul,
    **{name: _opdata_only for name in _OPDATA
       if name not in ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "FULLY_CONNECTED",
                       "SOFTMAX")},
    **{name: (lambda model, sg, op, target: []) for name in _NO_PERSISTENT},
    "GATHER": _output_dims, "GATHER_ND": _output_dims, "DEPTH_TO_SPACE": _output_dims,
    "SPACE_TO_DEPTH": _output_dims, "L2_POOL_2D": _output_dims,
    "EMBEDDING_LOOKUP": _embedding_lookup, "LOG_SOFTMAX": _int8_only(40, 28),
    "CUMSUM": _int8_only(36, 36), "ADD_N": _int8_only(40, 40),
}


def persistent_buffers(model: Model, s: int, op: Operator, target: Target) -> list[int] | None:
    """Bytes of each persistent buffer the op's kernel asks for; None when not modelled."""
    rule = RULES.get(op.name)
    if rule is None and op.opcode.is_custom and op.name == "TFLM_DECODE":
        from packager.kernels import tflm_decode  # compressed tensors' decoding
        return tflm_decode.persistent_buffers(model, s, op, target.pointer)
    if rule is None and op.opcode.is_custom:
        from packager.kernels import tflm_custom_ops  # TFLite Micro's own custom ops
        if op.name in tflm_custom_ops.NAMES:
            return tflm_custom_ops.persistent_buffers(op)
    if rule is None:
        from packager.kernels import tflm_signal  # custom ops of the Signal library
        return tflm_signal.persistent_buffers(model, s, op, target)
    buffers = rule(model, model.subgraphs[s], op, target)
    if target.cmsis_nn and op.name in tflm_cmsis_nn.REPLACED:  # CMSIS-NN's kernel instead
        return tflm_cmsis_nn.persistent_buffers(model.subgraphs[s], op, target.cmsis_nn, buffers,
                                                target.eval_tensor)
    return buffers


def unmodelled_name(model: Model, s: int, op: Operator) -> str:
    """How the figures name a kernel whose memory is not modelled (DECODE: with the decode type)."""
    if op.opcode.is_custom and op.name == "TFLM_DECODE":
        from packager.kernels import tflm_decode
        return tflm_decode.label(model, s, op)
    return op.name


def init_buffers(op: Operator, buffers: list[int]) -> int:
    """How many of the op's persistent buffers its kernel takes in Init (the rest in Prepare):
    the OpData of the builtin kernels, everything for the Signal ops but SignalFramer."""
    if op.opcode.is_custom and op.name == "TFLM_DECODE":
        return 0  # DECODE takes everything in Prepare
    if op.opcode.is_custom:
        from packager.kernels import tflm_signal
        return tflm_signal.init_buffer_count(op, buffers)
    return 1 if (op.name in _OPDATA and buffers) or op.name == "BATCH_MATMUL" else 0


def prepare_temp_tensors(op: Operator, sg: Subgraph | None = None, target: Target | None = None) -> list[int]:
    """The tensors (ids, -1 for an absent optional one) a kernel's Prepare holds as temporary
    TfLiteTensors at once, in order, repeats included (kernels/tflm_prepare_temps.py; a CMSIS-NN
    kernel's own Prepare: kernels/tflm_cmsis_nn.py); all of its inputs and outputs once for a
    kernel not listed there."""
    if sg is not None and target is not None and target.cmsis_nn:
        taken = tflm_cmsis_nn.prepare_temp_tensors(sg, op)
        if taken is not None:
            return taken
    if sg is not None:
        taken = tflm_prepare_temps.taken_tensors(sg, op)
        if taken is not None:
            return taken
    chosen = None
    if op.opcode.is_custom:
        from packager.kernels import tflm_custom_ops
        chosen = tflm_custom_ops.prepare_temp_positions(op)
    if chosen is None:
        return [*op.inputs, *op.outputs]
    inputs, outputs = chosen
    return [op.inputs[i] for i in inputs if i < len(op.inputs)] + \
        [op.outputs[i] for i in outputs if i < len(op.outputs)]


def prepare_temps(sg: Subgraph, op: Operator, target: Target, start: int,
                  taken: list[int] | None = None) -> tuple[int, int]:
    """(where the node's temporaries end, where the part its kernel still reads after taking its
    Prepare buffers ends), as offsets from the arena's start, the temporaries laid from `start`.

    TFLite Micro checks a persistent buffer against the head only, so a buffer taken in Prepare
    may overwrite temporaries. int16 SOFTMAX fills its two lookup tables, then reads its tensors'
    params and, releasing each quantized temporary, the two pointers that open its
    TfLiteAffineQuantization (scale, zero_point): above them the tables may lie; the kernels of
    _READS_STRUCTS_AFTER_BUFFERS likewise. Other kernels: everything stays live (safe, not proven
    the smallest). `taken`: prepare_temp_tensors(op, sg),
    when the caller has it already."""
    temp = live = start
    for t in prepare_temp_tensors(op, sg) if taken is None else taken:
        if t < 0:
            continue
        for k, (size, alignment) in enumerate(temp_tensor_bytes(sg.tensors[t], target)):
            temp = align_up(temp, alignment)
            if k == 0:  # the TfLiteTensor: read whole
                live = temp + size
            elif k == 1:  # its TfLiteAffineQuantization: the two pointers
                live = temp + 2 * target.pointer
            temp += size  # k == 2, the zero-point array: only its address is used
    return temp, (live if buffers_may_overlap_temps(sg, op, target) else temp)


def prepare_temps_before_buffers(sg: Subgraph, op: Operator, target: Target, start: int,
                                 taken: list[int] | None = None) -> int | None:
    """Where the temporaries a kernel takes before its Prepare buffers end, for a kernel that
    takes more after them (CONV_2D: output, input, filter; the per-channel arrays; input,
    filter, bias, output again); None for the others. `taken`: as for prepare_temps."""
    count = tflm_prepare_temps.taken_before_buffers(sg, op)
    if count is None:
        return None
    temp = start
    for t in (prepare_temp_tensors(op, sg) if taken is None else taken)[:count]:
        if t < 0:
            continue
        for size, alignment in temp_tensor_bytes(sg.tensors[t], target):
            temp = align_up(temp, alignment) + size
    return temp


# Kernels whose Prepare, once it has taken its persistent buffers, reads no more of its
# temporaries than their TfLiteTensors and the two pointers that open each
# TfLiteAffineQuantization (DeallocateTempTfLiteTensor reads zero_point's address only), so a
# buffer may overlap the topmost zero-point array (tflite-micro's kernels/*.cc): GATHER,
# DEPTH_TO_SPACE and SPACE_TO_DEPTH copy the output's dims (CreateWritableTensorDimsWithCopy),
# then read the tensors' dims; LOG_SOFTMAX's int8 OpData, FULLY_CONNECTED's per-channel
# multipliers and shifts and BATCH_MATMUL's quantization and transposed operands are followed
# by reads of the tensors' params and dims only.
_READS_STRUCTS_AFTER_BUFFERS = frozenset({
    "GATHER", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "LOG_SOFTMAX", "FULLY_CONNECTED",
    "BATCH_MATMUL"})


def prepare_buffers_overlap_by_rule(sg: Subgraph, op: Operator) -> bool:
    """The kernels whose Prepare buffers may overlap the temporaries they no longer read, by
    rule: int16 SOFTMAX (its lookup tables), and _READS_STRUCTS_AFTER_BUFFERS."""
    if op.name == "SOFTMAX":
        return sg.tensors[op.inputs[0]].type == "INT16"
    return op.name in _READS_STRUCTS_AFTER_BUFFERS


def buffers_may_overlap_temps(sg: Subgraph, op: Operator, target: Target) -> bool:
    """prepare_buffers_overlap_by_rule on `target`: on a CMSIS-NN build also its integer LSTM
    (its kernel sums)."""
    return prepare_buffers_overlap_by_rule(sg, op) or (
        bool(target.cmsis_nn) and tflm_cmsis_nn.prepare_buffers_overlap_temps(sg, op))


def align_up(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


def temp_tensor_bytes(tensor, target: Target) -> list[tuple[int, int]]:
    """What a kernel's GetTensor puts in temp memory for one tensor during Prepare: a TfLiteTensor
    and, when quantized, its TfLiteAffineQuantization and zero-point array (size, alignment)."""
    return quantized_io_bytes(tensor, target)


def resource_buffers(model: Model) -> list[int]:
    """Bytes of each resource variable's buffer: the first ASSIGN_VARIABLE of a resource asks
    for the value tensor's bytes as a persistent buffer (MicroResourceVariables::Allocate)."""
    seen, out = set(), []
    for s, sg in enumerate(model.subgraphs):
        names = {o: str(op.options.get("shared_name", "")) for op in operators_named(model, s, "VAR_HANDLE")
                 for o in op.outputs}
        for op in operators_named(model, s, "ASSIGN_VARIABLE"):
            if len(op.inputs) < 2:
                continue
            resource = names.get(op.inputs[0], (s, op.inputs[0]))
            if resource not in seen:
                seen.add(resource)
                out.append(sg.tensors[op.inputs[1]].nbytes or 0)
    return out


def resource_variable_count(model: Model) -> int:
    """Distinct shared names of VAR_HANDLE ops: what the Python wrapper counts before it creates
    the resource-variable table."""
    names = {str(op.options.get("shared_name", "")) for s in range(len(model.subgraphs))
             for op in operators_named(model, s, "VAR_HANDLE")}
    return len(names)


def temp_alignments(target: Target) -> tuple[int, ...]:
    """Every alignment temp_tensor_bytes (quantized_io_bytes) uses on `target`."""
    return target.struct_align, 4


def quantized_io_bytes(tensor, target: Target) -> list[tuple[int, int]]:
    """The tail allocations of one graph input or output: its TfLiteTensor and, when quantized,
    its TfLiteAffineQuantization and zero-point array (size, alignment)."""
    out = [(target.tflite_tensor, target.struct_align)]
    if tensor.quant_channels:
        out += [(target.affine_quantization, target.struct_align), (4 + 4 * tensor.quant_channels, 4)]
    return out


def elements(shape) -> int:
    return math.prod(shape)
