"""Finished plans -> the pictures the report and the PNG draw (packager/emit/report_data.py):
every planned tensor with its name, shape, lifetime and offset, its aliases, the persistent
tensors, the breadth per step, the chosen shared-object plan and the table of strategies. A layout
that is not a strategy's own plan (shared objects laid end to end, a packaged plan) passes the
validator before it is drawn."""

from __future__ import annotations

from dataclasses import replace
from itertools import repeat

import numpy as np
from typing import Mapping, Sequence

from packager.arenas import PlannedArena
from packager.emit.report_data import (AliasInfo, ArenaPicture, ObjectRow, PlacedTensor, StrategyRow,
                                       TensorInfo)
from packager.lifetimes import PERSISTENT, ArenaLifetimes
from packager.model import Model
from packager.plan.offsets.objects_end_to_end import plan as objects_end_to_end
from packager.plan.portfolio import Outcome, PortfolioResult, validate
from packager.plan.problem import Problem
from packager.plan.records import (ObjectPlan, OffsetPlan, Records, UsageRecord, align_up, breadth_by_step,
                                   overhead_pct)
from packager.semantics import SEMANTICS


def laid_end_to_end(problem: Problem, outcome: Outcome) -> OffsetPlan:
    """A shared-object plan as offsets (objects side by side, by the objects_end_to_end strategy),
    validated: the layout to draw when only an object strategy was asked for."""
    assert isinstance(outcome.plan, ObjectPlan)
    laid = replace(objects_end_to_end(problem.records, problem.alignment, outcome.plan),
                   strategy=f"{outcome.strategy} (objects end to end)")
    validate(problem, laid)
    return laid


def chosen_outcomes(result: PortfolioResult, strategy: str) -> tuple[Outcome | None, Outcome | None]:
    """(offset outcome, object outcome) to draw: the best of each for best/all, else the named one."""
    if strategy in ("best", "all"):
        return result.best_offsets, result.best_objects

    def named(outcomes: Sequence[Outcome]) -> Outcome | None:
        return next((o for o in outcomes if o.strategy == strategy), None)

    return named(result.offsets), named(result.objects)


def tensor_info(model: Model, arena: ArenaLifetimes, tensor_id: int, size: int | None = None,
                labels: Mapping[int, str] | None = None) -> TensorInfo:
    """What to say about a record: its tensor in the file, or, for a buffer the file does not have
    (a runtime's scratch buffer planned beside the tensors), the label the caller gave it."""
    return TensorInfo(*_info_fields(model, arena, tensor_id, size, labels))


def _info_fields(model: Model, arena: ArenaLifetimes, tensor_id: int, size: int | None,
                 labels: Mapping[int, str] | None) -> tuple[int, str, str, tuple[int, ...], int]:
    """tensor_info()'s fields, in TensorInfo's order."""
    sg, index = arena.tensor_subgraph.get(tensor_id, (arena.subgraph, tensor_id))
    if (labels and tensor_id in labels) or not 0 <= index < len(model.subgraphs[sg].tensors):
        return tensor_id, (labels or {}).get(tensor_id, f"buffer {tensor_id}"), "", (), size or 0
    t = model.subgraphs[sg].tensors[index]
    # On an inline arena ids are global: say which subgraph a tensor of a child comes from.
    name = t.name if not arena.inline or sg == 0 else f"{t.name} (subgraph {sg})"
    if size is None:
        size = align_up(t.nbytes or 0, SEMANTICS[arena.semantics].size_rounding)
    return tensor_id, name, t.type, tuple(t.shape), size


# Marks one chart draws at most: a chart 900 pixels wide cannot show more one by one, and a page
# with hundreds of thousands of elements is slow to write and to open. Above it, the largest
# tensors (bytes x lifetime) are drawn and the page says how many are left out.
MAX_DRAWN = 20_000
_AREA_LIMIT = 1 << 63  # areas below it fit int64: sorted as numpy columns


def largest(records: Sequence[UsageRecord], limit: int = MAX_DRAWN) -> list[int]:
    """Positions of the `limit` records of largest area (bytes x lifetime; ties by position), in
    record order: all of them when there are no more than `limit`."""
    if len(records) <= limit:
        return list(range(len(records)))
    cols = Records.of(records)
    if int(cols.size.max()) * (int((cols.last - cols.first).max()) + 1) < _AREA_LIMIT:
        # the same order as the sort below, on int64 columns: a stable sort keeps ties by position
        by_area_columns = np.argsort(-(cols.size * (cols.last - cols.first + 1)), kind="stable")
        return np.sort(by_area_columns[:limit]).tolist()
    by_area = sorted(range(len(records)),
                     key=lambda i: (-records[i].size * (records[i].last_op - records[i].first_op + 1), i))
    return sorted(by_area[:limit])


def placed_tensors(model: Model, arena: ArenaLifetimes, records: Sequence[UsageRecord],
                   offsets: Sequence[int], labels: Mapping[int, str] | None = None,
                   drawn: Sequence[int] | None = None,
                   infos: Sequence[TensorInfo] | None = None) -> tuple[PlacedTensor, ...]:
    """records[i] at offsets[i], each with the aliases that share its buffer; only the positions
    `drawn` when given; `infos`: the tensor_info of each drawn record, when already made."""
    aliases_of: dict[int, list[AliasInfo]] = {}
    for alias, owner in sorted(arena.aliases.items()):
        first, last = arena.alias_intervals[alias]
        aliases_of.setdefault(owner, []).append(AliasInfo(tensor_info(model, arena, alias), first, last))
    if drawn is None:
        drawn = range(len(records))
    if infos is None:
        infos = _drawn_infos(model, arena, records, labels, drawn)
    drawn_records = [records[i] for i in drawn]
    return tuple(map(PlacedTensor, infos, [r.first_op for r in drawn_records], [r.last_op for r in drawn_records],
                     [offsets[i] for i in drawn],
                     [tuple(aliases_of.get(r.tensor, ())) for r in drawn_records] if aliases_of
                     else repeat((), len(drawn_records))))


def _drawn_infos(model: Model, arena: ArenaLifetimes, records: Sequence[UsageRecord],
                 labels: Mapping[int, str] | None, drawn: Sequence[int]) -> list[TensorInfo]:
    """tensor_info of each drawn record (made once for the layout and the shared objects)."""
    return [TensorInfo(*_info_fields(model, arena, records[i].tensor, records[i].size, labels)) for i in drawn]


def _object_rows(model: Model, arena: ArenaLifetimes, records: Sequence[UsageRecord],
                 plan: ObjectPlan, labels: Mapping[int, str] | None,
                 drawn: Sequence[int] | None = None,
                 infos: Sequence[TensorInfo] | None = None) -> tuple[ObjectRow, ...]:
    members: list[list[tuple[TensorInfo, int, int]]] = [[] for _ in plan.object_sizes]
    if drawn is None:
        drawn = range(len(records))
    if infos is None:
        infos = _drawn_infos(model, arena, records, labels, drawn)
    for i, info in zip(drawn, infos):
        r, k = records[i], plan.assignment[i]
        members[k].append((info, r.first_op, r.last_op))
    return tuple(ObjectRow(size, tuple(sorted(m, key=lambda e: (e[1], e[0].id))))
                 for size, m in zip(plan.object_sizes, members))


def _strategy_rows(result: PortfolioResult, chosen: Sequence[Outcome | None]) -> tuple[StrategyRow, ...]:
    p = result.problem
    rows = []
    for o in (*result.offsets, *result.objects, *result.baselines):
        bound = p.object_lower_bound if o.kind == "objects" else p.offset_lower_bound
        # By name, not identity: a caller may draw a strategy's plan after adjusting it (package
        # moves TFLite Micro's scratch buffers).
        is_chosen = any(c is not None and (o.kind, o.strategy) == (c.kind, c.strategy) for c in chosen)
        rows.append(StrategyRow(o.kind, o.strategy, o.total, bound, overhead_pct(o.total, bound),
                                o.seconds, is_chosen))
    for s in result.stopped_above:  # where its plan would be: no arena, it was not finished
        rows.insert(s.position, StrategyRow("offsets", s.strategy, None, p.offset_lower_bound, 0.0,
                                            s.seconds, False))
    return tuple(rows)


def arena_title(arena: ArenaLifetimes, model: Model) -> str:
    if arena.inline:
        return "whole model (inline)"
    return f"subgraph {arena.subgraph} '{model.subgraphs[arena.subgraph].name}'"


def arena_picture(model: Model, planned: PlannedArena, strategy: str = "best", layout_outcome: Outcome | None = None,
                  labels: Mapping[int, str] | None = None) -> ArenaPicture:
    """The picture of one planned arena. `layout_outcome` draws that offset plan instead of the
    chosen strategy's (it passes the validator first, unless it carries the proof of these
    numbers for these records); `labels` names records that are not tensors of
    the file."""
    arena, result = planned.lifetimes, planned.result
    problem = result.problem
    records = problem.records
    offsets_outcome, objects_outcome = chosen_outcomes(result, strategy)
    layout: OffsetPlan | None = None
    layout_name: str | None = None
    note = "no plan"
    if layout_outcome is not None:
        proven = layout_outcome.proven  # a plan proven when made needs no second proof
        if proven is None or not proven.same_numbers(layout_outcome.plan, records):
            validate(problem, layout_outcome.plan)
        offsets_outcome = layout_outcome
        layout, layout_name, note = layout_outcome.plan, layout_outcome.strategy, "the plan as packaged"
    elif offsets_outcome is not None:
        layout, layout_name = offsets_outcome.plan, offsets_outcome.strategy  # validated by the portfolio
        note = ("the smallest validated offset plan" if strategy in ("best", "all")
                else "the offset plan asked for")
    elif objects_outcome is not None:
        layout = laid_end_to_end(problem, objects_outcome)
        layout_name, note = layout.strategy, "the shared objects laid end to end, validated"
    drawn = largest(records)
    infos = _drawn_infos(model, arena, records, labels, drawn) if layout or objects_outcome else None
    placed = placed_tensors(model, arena, records, layout.offsets, labels, drawn, infos) if layout else ()
    rows = _object_rows(model, arena, records, objects_outcome.plan, labels, drawn, infos) if objects_outcome else ()
    left_out = len(drawn) < len(records)
    persistent = tuple(tensor_info(model, arena, t) for t in arena.ids(PERSISTENT))
    return ArenaPicture(
        title=arena_title(arena, model), step_name="scope" if arena.inline else "operator",
        steps=max(arena.num_steps, max((r.last_op + 1 for r in records), default=0)),
        alignment=problem.alignment, layout_strategy=layout_name, layout_note=note,
        arena=layout.arena if layout else 0, lower_bound=problem.offset_lower_bound, placed=placed,
        breadths=tuple(breadth_by_step(records, arena.num_steps)),
        objects_strategy=objects_outcome.strategy if objects_outcome else None, object_rows=rows,
        object_lower_bound=problem.object_lower_bound, persistent=persistent,
        persistent_bytes=arena.persistent_bytes,
        strategies=_strategy_rows(result, (offsets_outcome, objects_outcome)),
        dynamic_bounds=_dynamic_bounds(planned),
        placed_total=len(records) if left_out and layout else None,
        object_members_total=len(records) if left_out and objects_outcome else None,
        not_needed=result.not_needed,
        stopped_above=tuple((s.strategy, s.placed, s.steps) for s in result.stopped_above))


def _dynamic_bounds(planned: PlannedArena) -> tuple[tuple[str, int, int], ...]:
    passes = getattr(planned, "passes", None)  # the multi-pass plan of a model with dynamic shapes
    if passes is None:
        return ()
    return tuple((name, lo, hi) for name, (lo, hi) in sorted(passes.bounds.items()))
