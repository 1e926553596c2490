"""The rules of each target runtime, as data. lifetimes.py reads these; nothing else branches on
the runtime's name.

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

TFLITE = Semantics(
    name="tflite",
    description="TFLite CPU interpreter: inputs kept, 64-byte alignment, in-place sharing",
    alignment=64, size_rounding=1, pin_inputs=True, unread_to_end=True,
    persistent_variables=True, persistent_dequantized_constants=True,
    inplace=_TFLITE_INPLACE, inplace_needs_single_reader=True, inplace_allows_graph_io=False,
    inline_subgraphs=False,
    dynamic_output_rules={"RESHAPE": (1,)},
)

TFLM = Semantics(
    name="tflm",
    description="TFLite Micro: sizes rounded to 16 bytes, inputs freed after their last reader",
    alignment=16, size_rounding=16, pin_inputs=False, unread_to_end=False,
    persistent_variables=True, persistent_dequantized_constants=False,
    inplace={}, inplace_needs_single_reader=True, inplace_allows_graph_io=False,
    inline_subgraphs=True,
)

IDEAL = Semantics(
    name="ideal",
    description="least memory for this operator order: minimal lifetimes, in-place wherever legal",
    alignment=16, size_rounding=1, pin_inputs=False, unread_to_end=False,
    persistent_variables=True, persistent_dequantized_constants=False,
    inplace=_IDEAL_INPLACE, inplace_needs_single_reader=False, inplace_allows_graph_io=True,
    inline_subgraphs=False,
)

SEMANTICS: Mapping[str, Semantics] = {s.name: s for s in (TFLITE, TFLM, IDEAL)}
