"""The plain data a picture of one arena needs: every planned tensor with its name, shape,
lifetime and offset, its aliases, the persistent tensors, the breadth per operator, the chosen
shared-object plan and the table of strategies; and a runtime's measured layout beside it.

packager/pictures.py builds these from finished plans (and packager/compare/measured_layout.py the
measured layout); the HTML report and the PNG only draw them, so they never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)  # slots: made a field at a time (pictures.py)
class TensorInfo:
    id: int  # the arena's id: the subgraph's tensor index, or the global id of an inline arena
    name: str
    dtype: str
    shape: tuple[int, ...]
    size: int  # bytes the arena gives it (rounded as the semantics says)


@dataclass(frozen=True)
class AliasInfo:
    tensor: TensorInfo
    first_op: int
    last_op: int


@dataclass(frozen=True, slots=True)  # slots: made a field at a time (pictures.py)
class PlacedTensor:
    tensor: TensorInfo
    first_op: int
    last_op: int
    offset: int
    aliases: tuple[AliasInfo, ...]  # tensors that use this tensor's buffer


@dataclass(frozen=True)
class ObjectRow:
    size: int
    tensors: tuple[tuple[TensorInfo, int, int], ...]  # (tensor, first_op, last_op), by first_op


@dataclass(frozen=True)
class StrategyRow:
    kind: str  # offsets | objects | baseline
    name: str
    total: int | None  # None: stopped above the bound before its plan was finished (package)
    bound: int
    over_bound_pct: float
    seconds: float
    chosen: bool


@dataclass(frozen=True)
class ArenaPicture:
    title: str  # "subgraph 0 'main'" or "whole model (inline)"
    step_name: str  # what the x axis counts: "operator", or "scope" on TFLite Micro's timeline
    steps: int
    alignment: int
    layout_strategy: str | None  # None when no offset plan was made
    layout_note: str  # how the drawn layout was chosen
    arena: int  # bytes of the drawn layout (0 when there is none)
    lower_bound: int  # the largest operator breadth
    placed: tuple[PlacedTensor, ...]  # in record order
    breadths: tuple[int, ...]  # bytes alive at each step
    objects_strategy: str | None
    object_rows: tuple[ObjectRow, ...]
    object_lower_bound: int
    persistent: tuple[TensorInfo, ...]
    persistent_bytes: int
    strategies: tuple[StrategyRow, ...]
    dynamic_bounds: tuple[tuple[str, int, int], ...] = ()  # (symbol, min, max): sizes are at max
    # A chart cannot show more marks than it has pixels: above a limit only the largest tensors
    # (bytes x lifetime) are drawn. The totals say how many there are (None: all drawn).
    placed_total: int | None = None
    object_members_total: int | None = None
    # (kind, name) of strategies not run because a plan already met the lower bound (package).
    not_needed: tuple[tuple[str, str], ...] = ()
    # (name, steps done, steps) of offset strategies stopped once a tensor they placed ended
    # above the lower bound, not finished since a later plan met it (package): no arena to show.
    stopped_above: tuple[tuple[str, int, int], ...] = ()


@dataclass(frozen=True)
class MeasuredLayout:
    runtime: str  # e.g. "ai-edge-litert 2.3.0"
    arena: int  # bytes of TFLite's working arena, temporaries included
    placed: tuple[PlacedTensor, ...]  # our planned tensors at TFLite's offsets
    unmatched: tuple[tuple[str, int], ...]  # (what, bytes) TFLite has in the arena but we cannot draw
    notes: tuple[str, ...] = ()
