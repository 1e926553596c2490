"""Planned arenas -> the sidecar plan (package/sidecar.py): each arena's tensors with their
offsets, aliases and persistent tensors, its shared-object plan, its multi-pass plan, and the
model's symbols. Plain conversion: what is planned was decided on the one path (packager/arenas.py)."""

from __future__ import annotations

from itertools import compress, count as count_from, islice
from operator import attrgetter
from typing import Mapping

import packager
from packager.arenas import Bindings, DynamicSizes, PlannedArena, alias_bytes
from packager.dynamic.shapes import DynamicShapes
from packager.lifetimes import PERSISTENT, ArenaLifetimes
from packager.model import Model
from packager.package.columns import NO_ALIAS, TensorColumns
from packager.package.sidecar import (SCRATCH, TENSOR, ArenaSection, ObjectSection, OffsetSection,
                                      PackagePlan, PassSection, PersistentEntry, SourceModel, SymbolEntry)
from packager.plan.problem import Problem
from packager.plan.records import ObjectPlan, OffsetPlan
from packager.semantics import SEMANTICS


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
    ids = list(map(_TENSOR_ID, problem.records))
    tensors = TensorColumns(*_entry_columns(model, lifetimes, scratch, sizes, problem, ids, offsets.plan.offsets))
    persistent = []
    for g in lifetimes.ids(PERSISTENT):
        s, t = lifetimes.tensor_subgraph.get(g, (lifetimes.subgraph, g))
        tensor = model.subgraphs[s].tensors[t]
        persistent.append(PersistentEntry(g, s, t, tensor.name, tensor.nbytes or 0))
    object_plan = objects.plan
    section = OffsetSection(offsets.strategy, offsets.plan.arena, problem.offset_lower_bound,
                            tensors, result.offset_plan_optimal(offsets))
    return ArenaSection(
        subgraph=lifetimes.subgraph, inline=lifetimes.inline, steps=lifetimes.num_steps,
        offsets=section,
        objects=ObjectSection(objects.strategy, object_plan.total, problem.object_lower_bound,
                              tuple(object_plan.object_sizes),
                              tuple(zip(ids, object_plan.assignment)),
                              result.object_plan_optimal(objects)),
        persistent=tuple(persistent), persistent_bytes=lifetimes.persistent_bytes,
        passes=None if passes is None else PassSection(
            passes.arena, tuple(zip(ids, passes.offsets))))


def _entry_columns(model: Model, lifetimes: ArenaLifetimes, scratch: Mapping[int, str],
                   sizes: DynamicSizes | None, problem: Problem, ids: list[int],
                   placed: tuple[int, ...]) -> list[list]:
    """TensorColumns' fields in order, a column each: the records in problem order (a tensor, or a
    runtime scratch buffer), then the aliases in id order, each at its owner's offset with its
    own bytes."""
    records = problem.records
    index, offset = list(ids), list(placed)
    first, last = list(map(_FIRST_OP, records)), list(map(_LAST_OP, records))
    size, alias_of = list(map(_SIZE, records)), [NO_ALIAS] * len(records)
    if problem.aliases:
        position = dict(zip(ids, range(len(ids))))
        for alias, owner in sorted(problem.aliases.items()):
            at = position[owner]
            # (first_op, last_op), size and offset of the owner's entry
            interval = problem.alias_intervals.get(alias, (first[at], last[at]))
            # Its own bytes, inside the owner's buffer (in-place sharing needs equal sizes anyway).
            own = alias_bytes(model, lifetimes, alias) if sizes is None else sizes.largest[alias]
            index.append(alias)
            first.append(interval[0])
            last.append(interval[1])
            size.append(min(own, size[at]))
            offset.append(offset[at])
            alias_of.append(owner)
    count = len(index)
    # Where each tensor is in the model; the scratch buffers (not the model's) are set after.
    at_scratch = list(compress(count_from(), map(scratch.__contains__, index))) if scratch else []
    tensor_ids = [g for g in index if g not in scratch] if at_scratch else index
    subgraph, tensor = lifetimes.where_columns(tensor_ids)
    subgraphs = model.subgraphs
    if len(set(subgraph)) == 1:
        tensors = list(map(subgraphs[subgraph[0]].tensors.__getitem__, tensor))
    else:
        tensors = [subgraphs[s].tensors[t] for s, t in zip(subgraph, tensor)]
    name, type_, shape = (list(map(attrgetter(f), tensors)) for f in ("name", "type", "shape"))
    del tensors
    kind = [TENSOR] * count
    if at_scratch:
        for column in (subgraph, tensor, name, type_, shape):
            column[:] = _with_gaps(column, at_scratch)
        for k in at_scratch:
            g = index[k]
            subgraph[k], tensor[k], kind[k], name[k] = lifetimes.subgraph, -1, SCRATCH, scratch[g]
            type_[k], shape[k], alias_of[k] = "UINT8", (size[k],), NO_ALIAS
    if sizes is None:
        pass_, size_expr = [0] * count, [None] * count
    else:
        pass_ = [sizes.passes[g] for g in index]
        size_expr = [str(sizes.expressions[g]) for g in index]
    return [index, subgraph, tensor, kind, name, type_, shape, offset, size, first, last, alias_of,
            pass_, size_expr]


def _with_gaps(column: list, gaps: list[int]) -> list:
    """`column`'s values in order with None inserted at the positions `gaps` (ascending)."""
    out, values, done = [], iter(column), 0
    for k in gaps:
        out.extend(islice(values, k - done))
        out.append(None)
        done = k + 1
    out.extend(values)
    return out


_FIRST_OP, _LAST_OP, _SIZE = attrgetter("first_op"), attrgetter("last_op"), attrgetter("size")
_TENSOR_ID = attrgetter("tensor")


def symbol_entries(shapes: DynamicShapes, bounds: Mapping[str, tuple[int, int]]) -> tuple[SymbolEntry, ...]:
    return tuple(SymbolEntry(s.name, s.source, s.data_dependent, s.pass_index, *bounds[s.name])
                 for s in shapes.symbols)
