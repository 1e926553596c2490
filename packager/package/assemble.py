"""Planned arenas -> the sidecar plan (package/sidecar.py): each arena's tensors with their
offsets, aliases and persistent tensors, its shared-object plan, its multi-pass plan, and the
model's symbols. Plain conversion: what is planned was decided on the one path (packager/arenas.py)."""

from __future__ import annotations

from operator import attrgetter
from typing import Mapping

import packager
from packager.arenas import Bindings, PlannedArena, alias_bytes
from packager.dynamic.shapes import DynamicShapes
from packager.gc_pause import without_collector_pauses
from packager.lifetimes import PERSISTENT
from packager.model import Model
from packager.package.sidecar import (SCRATCH, TENSOR, ArenaSection, ObjectSection, OffsetSection,
                                      PackagePlan, PassSection, PersistentEntry, SourceModel, SymbolEntry,
                                      tensor_entries)
from packager.plan.records import ObjectPlan, OffsetPlan, UsageRecord
from packager.semantics import SEMANTICS


@without_collector_pauses
def package_plan(model: Model, semantics: str, source: SourceModel, planned: list[PlannedArena],
                 bindings: Bindings | None) -> PackagePlan:
    """The sidecar plan of the planned arenas, as the package writes it (not yet checked)."""
    sections = tuple(arena_section(model, p) for p in planned)
    return PackagePlan(source=source, semantics=semantics, alignment=SEMANTICS[semantics].alignment,
                       arenas=sections, generator=f"tflpack {packager.__version__}",
                       symbols=() if bindings is None else symbol_entries(bindings.shapes, bindings.bounds))


def arena_section(model: Model, planned: PlannedArena) -> ArenaSection:
    """The section of one planned arena: the offset plan to ship, the best shared-object plan and,
    with dynamic shapes, the multi-pass plan."""
    arena, result, offsets, objects = planned.arena, planned.result, planned.offsets, planned.result.best_objects
    passes = None if planned.passes is None else planned.passes.plan
    lifetimes, scratch, sizes = arena.lifetimes, arena.scratch, arena.sizes
    problem = result.problem
    assert isinstance(offsets.plan, OffsetPlan) and isinstance(objects.plan, ObjectPlan)
    assert (passes is None) == (sizes is None)

    def where(tensor_id: int) -> tuple[int, int]:
        return lifetimes.tensor_subgraph.get(tensor_id, (lifetimes.subgraph, tensor_id))

    def entry(r: UsageRecord, offset: int, alias_of: int | None = None) -> tuple:
        """The entry's fields in order (made into entries all at once: sidecar.tensor_entries)."""
        g = r.tensor
        more = static if sizes is None else (sizes.passes[g], str(sizes.expressions[g]))
        if g in scratch:
            return (g, subgraph, -1, SCRATCH, scratch[g], "UINT8", (r.size,), offset, r.size,
                    r.first_op, r.last_op, None, *more)
        s, t = subgraph_of(g, (subgraph, g))  # where(g), asked once per tensor
        tensor = subgraphs[s].tensors[t]
        return (g, s, t, TENSOR, tensor.name, tensor.type, tensor.shape, offset,
                r.size, r.first_op, r.last_op, alias_of, *more)

    static, subgraph, subgraphs = (0, None), lifetimes.subgraph, model.subgraphs
    subgraph_of = lifetimes.tensor_subgraph.get

    rows = [entry(r, o) for r, o in zip(problem.records, offsets.plan.offsets)]
    by_id = {row[0]: row for row in rows}
    for alias, owner in sorted(problem.aliases.items()):
        # (first_op, last_op), size and offset of the owner's entry
        first, last = problem.alias_intervals.get(alias, (by_id[owner][9], by_id[owner][10]))
        # Its own bytes, inside the owner's buffer (in-place sharing needs equal sizes anyway).
        size = min(alias_bytes(model, lifetimes, alias) if sizes is None else sizes.largest[alias],
                   by_id[owner][8])
        rows.append(entry(UsageRecord(alias, first, last, size), by_id[owner][7], owner))
    entries = tensor_entries(rows)
    del rows, by_id
    persistent = []
    for g in lifetimes.ids(PERSISTENT):
        s, t = where(g)
        tensor = model.subgraphs[s].tensors[t]
        persistent.append(PersistentEntry(g, s, t, tensor.name, tensor.nbytes or 0))
    object_plan = objects.plan
    return ArenaSection(
        subgraph=lifetimes.subgraph, inline=lifetimes.inline, steps=lifetimes.num_steps,
        offsets=OffsetSection(offsets.strategy, offsets.plan.arena, problem.offset_lower_bound,
                              tuple(entries), result.offset_plan_optimal(offsets)),
        objects=ObjectSection(objects.strategy, object_plan.total, problem.object_lower_bound,
                              tuple(object_plan.object_sizes),
                              tuple(zip(map(_TENSOR_ID, problem.records), object_plan.assignment)),
                              result.object_plan_optimal(objects)),
        persistent=tuple(persistent), persistent_bytes=lifetimes.persistent_bytes,
        passes=None if passes is None else PassSection(
            passes.arena, tuple(zip(map(_TENSOR_ID, problem.records), passes.offsets))))


_TENSOR_ID = attrgetter("tensor")


def symbol_entries(shapes: DynamicShapes, bounds: Mapping[str, tuple[int, int]]) -> tuple[SymbolEntry, ...]:
    return tuple(SymbolEntry(s.name, s.source, s.data_dependent, s.pass_index, *bounds[s.name])
                 for s in shapes.symbols)
