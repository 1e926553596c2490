"""The rules of each target runtime, as data. lifetimes.py, the one path (arenas.py), packaging and
the emitters read these; nothing branches on the runtime's name.

Sources: TFLite's ArenaPlanner / SimpleMemoryArena and kernels (in-place sharing flags, persistent
outputs), TFLite Micro's GreedyMemoryPlanner and allocation-info builder (REFERENCE.md 3 and 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping


@dataclass(frozen=True)
class InPlaceRule:
    """Output 0 of the op may take the buffer of one of `inputs` (tried in order)."""

    inputs: tuple[int, ...]
    data_unmodified: bool = False  # a view (RESHAPE...): no size or reader conditions in TFLite


@dataclass(frozen=True)
class Semantics:
    name: str
    description: str
    alignment: int  # every planned offset is a multiple of this
    size_rounding: int  # every planned size is rounded up to this
    pin_inputs: bool  # graph inputs stay alive until the end (TFLite keeps them intact)
    unread_to_end: bool  # a tensor no op reads (and not an output) is never freed
    persistent_variables: bool  # variables go to a persistent arena, not the working one
    persistent_dequantized_constants: bool  # DEQUANTIZE of a constant runs once; output persists
    inplace: Mapping[str, InPlaceRule]
    # TFLite's conditions: same size, > 4 bytes, input read by this op only, no graph input or
    # output involved. The ideal planner instead asks that this op be the buffer's last reader.
    inplace_needs_single_reader: bool
    inplace_allows_graph_io: bool
    inline_subgraphs: bool  # control-flow subgraphs planned inside the caller's arena (TFLM)
    dynamic_output_rules: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    # op -> inputs that, when not constant, make its outputs dynamic (allocated outside the arena)
    caller_owned_inputs: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    # control-flow op -> positions in its subgraph list whose inputs the op supplies itself: the
    # child's input tensors point at the caller's buffers (kTfLiteCustom) and take no arena space
    kernel_scratch_in_arena: bool = False  # the kernels' scratch buffers are planned in the arena
    # (TFLite Micro's RequestScratchBufferInArena), placed by the runtime around the given offsets
    offline_plan: bool = False  # the runtime reads a plan stored in the model (TFLite Micro's
    # OfflineMemoryAllocation metadata), so a package can carry it
    layout_measurable: bool = False  # the runtime shows each tensor's address (TFLite's Python
    # interpreter), so its measured layout can be set beside ours, arena by arena
    runtime_tail: str | None = None  # what the runtime keeps beyond the planned head, for users
    arena_note: str | None = None  # how the runtime's whole arena relates to the plan, for users
    whole_arena_predicted: bool = False  # the runtime's whole arena (head, tail, set-up room) is
    # predicted from the file (TFLite Micro: packager/kernels/tflm_whole_arena.py)
    runtime: str = ""  # the runtime these rules are of, in words, for users
    runs_stored_shapes: bool = False  # the runtime ignores shape_signature and runs the shapes
    # stored in the file (TFLite Micro), so a complete stored shape needs no --dim
    prepare_time_outputs: frozenset[str] = frozenset()
    # ops whose integer outputs the runtime computes once, at Prepare, into a persistent read-only
    # buffer (kTfLitePersistentRo) when every input is constant or so computed; SHAPE and RANK
    # always (their input's shape is known at Prepare). Such outputs take no place in the working arena,
    # and an op reading them as its shape input is not dynamic.
    while_prunes_unread: bool = False
    # WHILE's Prepare drops the condition's inputs no condition op reads, and the outputs of loop
    # variables the body passes through unchanged when no op of the caller reads them: neither
    # gets a buffer (tflite/kernels/while.cc, RemoveUnusedInputs and the read-only input check).
    children_alternate: bool = False
    # the arenas of a control-flow op's children are alternatives over the caller's arena (one
    # child runs at a time), not a sum (TFLite allocates them all): control_flow.py


_BINARY = InPlaceRule(inputs=(0, 1))
_FIRST = InPlaceRule(inputs=(0,))
_VIEW = InPlaceRule(inputs=(0,), data_unmodified=True)

_TFLITE_INPLACE = {
    "RESHAPE": _VIEW, "SQUEEZE": _VIEW, "EXPAND_DIMS": _VIEW, "BITCAST": _VIEW,
    "ADD": _BINARY, "SUB": _BINARY, "MUL": _BINARY, "DIV": _BINARY,
    "SOFTMAX": _FIRST, "DYNAMIC_UPDATE_SLICE": _FIRST,
}

# Every op that reads each element before writing the same element (or only relabels the shape)
# can write its output over an input that dies at it.
_IDEAL_INPLACE = {
    **{op: _VIEW for op in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS", "BITCAST")},
    **{op: _BINARY for op in ("ADD", "SUB", "MUL", "DIV", "SQUARED_DIFFERENCE", "MAXIMUM",
                              "MINIMUM", "POW", "FLOOR_DIV", "FLOOR_MOD", "SELECT_V2")},
    **{op: _FIRST for op in ("RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "LEAKY_RELU",
                             "LOGISTIC", "TANH", "HARD_SWISH", "ELU", "GELU", "ABS", "NEG", "EXP",
                             "LOG", "SQRT", "RSQRT", "SQUARE", "SIN", "COS", "FLOOR", "CEIL",
                             "ROUND", "SIGN", "PRELU", "SOFTMAX", "CAST", "DYNAMIC_UPDATE_SLICE")},
}

# Ops whose output TFLite allocates on the fly (kTfLiteDynamic, outside the arena) when the listed
# inputs are not constant: the output's size depends on their values.
_TFLITE_DYNAMIC_OUTPUTS = {
    "RESHAPE": (1,), "WHERE": (0,), "UNIQUE": (0,), "NON_MAX_SUPPRESSION_V4": (2,),
    "NON_MAX_SUPPRESSION_V5": (2,), "TOPK_V2": (1,), "RANGE": (0, 1, 2), "FILL": (0,),
    "BROADCAST_TO": (1,), "TILE": (1,), "SLICE": (1, 2), "STRIDED_SLICE": (1, 2, 3),
    "PAD": (1,), "PADV2": (1,), "MIRROR_PAD": (1,), "RESIZE_BILINEAR": (1,),
    "RESIZE_NEAREST_NEIGHBOR": (1,), "TRANSPOSE": (1,), "SPLIT_V": (1, 2),
    # Sized by index values (measured on the coverage matrix, fixtures/op_matrix.py).
    # SEGMENT_SUM's Prepare always leaves its output dynamic: listed on both inputs, it is so
    # whenever either is computed.
    "SCATTER_ND": (2,), "SEGMENT_SUM": (0, 1), "UNSORTED_SEGMENT_SUM": (1, 2),
    "UNSORTED_SEGMENT_PROD": (1, 2), "UNSORTED_SEGMENT_MAX": (1, 2), "UNSORTED_SEGMENT_MIN": (1, 2),
    "RANDOM_UNIFORM": (0,), "RANDOM_STANDARD_NORMAL": (0,),  # a computed shape
    "MULTINOMIAL": (0, 1),  # sized in Prepare only when logits and num_samples are constant
    "EMBEDDING_LOOKUP_SPARSE": (0, 1, 2, 3),  # resized at Eval from the ids and indices
    "TRANSPOSE_CONV": (0,),  # its output_shape input, when computed
}

TFLITE = Semantics(
    name="tflite", runtime="TFLite's CPU interpreter",
    description="TFLite CPU interpreter: inputs kept, 64-byte alignment, in-place sharing",
    alignment=64, size_rounding=1, pin_inputs=True, unread_to_end=True,
    persistent_variables=True, persistent_dequantized_constants=True,
    inplace=_TFLITE_INPLACE, inplace_needs_single_reader=True, inplace_allows_graph_io=False,
    inline_subgraphs=False,
    dynamic_output_rules=_TFLITE_DYNAMIC_OUTPUTS, layout_measurable=True,
    # tflite/kernels/if.cc and while.cc (Prepare): branch and body inputs become kTfLiteCustom.
    caller_owned_inputs={"IF": (0, 1), "WHILE": (1,)},
    # Measured with ai-edge-litert 2.3 and tflite-runtime 2.14 on SHAPE arithmetic
    # (tests/compare/test_runtime_cases.py): ADD, SUB, SLICE, PACK, FLOOR_DIV... stay in the arena.
    while_prunes_unread=True,
    prepare_time_outputs=frozenset({"SHAPE", "RANK", "STRIDED_SLICE", "CONCATENATION", "GATHER",
                                    "MUL", "TILE", "RESHAPE"}),
)

TFLM = Semantics(
    name="tflm", runtime="TFLite Micro",
    description="TFLite Micro: sizes rounded to 16 bytes, inputs freed after their last reader",
    alignment=16, size_rounding=16, pin_inputs=False, unread_to_end=False,
    persistent_variables=True, persistent_dequantized_constants=False,
    inplace={}, inplace_needs_single_reader=True, inplace_allows_graph_io=False,
    inline_subgraphs=True, kernel_scratch_in_arena=True, offline_plan=True,
    runtime_tail="TFLite Micro's persistent tail (print_allocations() reports it)",
    arena_note="TFLite Micro's arena = this head + its tail (print_allocations() reports it)",
    whole_arena_predicted=True, runs_stored_shapes=True,
)

IDEAL = Semantics(
    name="ideal",
    description="least memory for this operator order: minimal lifetimes, in-place wherever legal",
    alignment=16, size_rounding=1, pin_inputs=False, unread_to_end=False,
    persistent_variables=True, persistent_dequantized_constants=False,
    inplace=_IDEAL_INPLACE, inplace_needs_single_reader=False, inplace_allows_graph_io=True,
    inline_subgraphs=False, children_alternate=True,
)

# The setting of Pisarchyk & Lee 2020, whose tables our benchmark reproduces (benchmarks/bench.py):
# the TFLite GPU delegate's intermediate tensors with their exact byte sizes, each alive from the op
# that writes it to its last reader, no in-place sharing, no alignment. Constants (and DEQUANTIZE of
# constants, which the delegate folds into weights) are not planned.
PAPER = Semantics(
    name="paper",
    description="Pisarchyk & Lee 2020 (GPU delegate): exact sizes, minimal lifetimes, no in-place",
    alignment=1, size_rounding=1, pin_inputs=False, unread_to_end=False,
    persistent_variables=True, persistent_dequantized_constants=True,
    inplace={}, inplace_needs_single_reader=True, inplace_allows_graph_io=False,
    inline_subgraphs=False,
)

SEMANTICS: Mapping[str, Semantics] = {s.name: s for s in (TFLITE, TFLM, IDEAL, PAPER)}
