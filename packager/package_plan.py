"""The packaged plan: what the sidecar files hold, as plain frozen data.

Built once from validated planning results; the JSON and FlatBuffer writers, the C header and the
summary all read this, and `plan_file.load` gives it back, so every output says the same thing.

Tensor ids follow the arena's numbering: for an inline (tflm) arena the global id (subgraphs
concatenated in order, as in TFLite Micro's OfflineMemoryAllocation), else the tensor's index in
its subgraph. Scratch buffers TFLite Micro's kernels request get ids from 2^30 on
(packager/predict/tflm_arena.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from packager.lifetimes import PERSISTENT, ArenaLifetimes, model_lifetimes
from packager.model import Model
from packager.plan.portfolio import Outcome, PortfolioResult
from packager.plan.records import ObjectPlan, OffsetPlan, UsageRecord, align_up
from packager.predict.tflm_arena import scratch_records

FORMAT_NAME = "tflpack-plan"
FORMAT_VERSION = 1
TENSOR = "tensor"
SCRATCH = "scratch"


@dataclass(frozen=True)
class TensorEntry:
    index: int  # id in the arena's numbering
    subgraph: int
    tensor: int  # index inside its subgraph; -1 for a scratch buffer
    kind: str  # TENSOR or SCRATCH
    name: str
    type: str
    shape: tuple[int, ...]
    offset: int
    size: int  # planned bytes (rounded as the runtime rounds)
    first_op: int
    last_op: int
    alias_of: int | None  # the planned tensor whose buffer this one uses
    pass_: int = 0  # planning pass (dynamic shapes); 0: sizes known from the file


@dataclass(frozen=True)
class OffsetSection:
    strategy: str
    arena_bytes: int
    lower_bound: int
    tensors: tuple[TensorEntry, ...]  # planned records in problem order, then the aliases


@dataclass(frozen=True)
class ObjectSection:
    strategy: str
    total_bytes: int
    lower_bound: int
    object_sizes: tuple[int, ...]
    assignment: tuple[tuple[int, int], ...]  # (tensor id, object), in problem order


@dataclass(frozen=True)
class PersistentEntry:
    index: int
    subgraph: int
    tensor: int
    name: str
    size: int


@dataclass(frozen=True)
class ArenaSection:
    subgraph: int  # 0 for the whole-model inline arena
    inline: bool
    steps: int  # length of the arena's timeline (ops, or TFLite Micro allocation scopes)
    offsets: OffsetSection
    objects: ObjectSection
    persistent: tuple[PersistentEntry, ...]
    persistent_bytes: int

    @property
    def planned(self) -> tuple[TensorEntry, ...]:
        return tuple(t for t in self.offsets.tensors if t.alias_of is None)


@dataclass(frozen=True)
class SourceModel:
    file: str
    sha256: str
    bytes: int
    subgraph_tensor_counts: tuple[int, ...]


@dataclass(frozen=True)
class PackagePlan:
    source: SourceModel
    semantics: str
    alignment: int
    arenas: tuple[ArenaSection, ...]
    generator: str
    format: str = FORMAT_NAME
    format_version: int = FORMAT_VERSION

    @property
    def arena_bases(self) -> tuple[int, ...]:
        """Where each arena starts when all are laid end to end, each start aligned."""
        bases, end = [], 0
        for a in self.arenas:
            bases.append(align_up(end, self.alignment))
            end = bases[-1] + a.offsets.arena_bytes
        return tuple(bases)

    @property
    def arena_bytes(self) -> int:
        """Bytes of all arenas laid end to end (the one arena, for tflm)."""
        if not self.arenas:
            return 0
        return self.arena_bases[-1] + self.arenas[-1].offsets.arena_bytes

    @property
    def lower_bound(self) -> int:
        return sum(a.offsets.lower_bound for a in self.arenas)

    @property
    def objects_bytes(self) -> int:
        return sum(a.objects.total_bytes for a in self.arenas)


# -- building it from planning results --------------------------------------------------------

def arena_section(model: Model, lifetimes: ArenaLifetimes, result: PortfolioResult,
                  offsets: Outcome, objects: Outcome, scratch: Mapping[int, str]) -> ArenaSection:
    """`scratch`: record id -> label of each scratch buffer among the records."""
    problem = result.problem
    assert isinstance(offsets.plan, OffsetPlan) and isinstance(objects.plan, ObjectPlan)

    def where(tensor_id: int) -> tuple[int, int]:
        return lifetimes.tensor_subgraph.get(tensor_id, (lifetimes.subgraph, tensor_id))

    def entry(r: UsageRecord, offset: int, alias_of: int | None = None) -> TensorEntry:
        if r.tensor in scratch:
            return TensorEntry(r.tensor, lifetimes.subgraph, -1, SCRATCH, scratch[r.tensor], "UINT8",
                               (r.size,), offset, r.size, r.first_op, r.last_op, None)
        s, t = where(r.tensor)
        tensor = model.subgraphs[s].tensors[t]
        return TensorEntry(r.tensor, s, t, TENSOR, tensor.name, tensor.type, tensor.shape, offset,
                           r.size, r.first_op, r.last_op, alias_of)

    entries = [entry(r, o) for r, o in zip(problem.records, offsets.plan.offsets)]
    by_id = {e.index: e for e in entries}
    for alias, owner in sorted(problem.aliases.items()):
        first, last = problem.alias_intervals.get(alias, (by_id[owner].first_op, by_id[owner].last_op))
        s, t = where(alias)
        # Its own bytes, inside the owner's buffer (in-place sharing needs equal sizes anyway).
        size = min(model.subgraphs[s].tensors[t].nbytes or 0, by_id[owner].size)
        entries.append(entry(UsageRecord(alias, first, last, size), by_id[owner].offset, owner))
    persistent = []
    for g in lifetimes.ids(PERSISTENT):
        s, t = where(g)
        tensor = model.subgraphs[s].tensors[t]
        persistent.append(PersistentEntry(g, s, t, tensor.name, tensor.nbytes or 0))
    object_plan = objects.plan
    return ArenaSection(
        subgraph=lifetimes.subgraph, inline=lifetimes.inline, steps=lifetimes.num_steps,
        offsets=OffsetSection(offsets.strategy, offsets.plan.arena, problem.offset_lower_bound,
                              tuple(entries)),
        objects=ObjectSection(objects.strategy, object_plan.total, problem.object_lower_bound,
                              tuple(object_plan.object_sizes),
                              tuple((r.tensor, k) for r, k in zip(problem.records, object_plan.assignment))),
        persistent=tuple(persistent), persistent_bytes=lifetimes.persistent_bytes)


# -- turning it back into what the validator checks ----------------------------------------------

def offset_plan_of(arena: ArenaSection, alignment: int) -> tuple[
        list[UsageRecord], OffsetPlan, dict[int, int], dict[int, tuple[int, int]]]:
    """(records, offset plan, aliases, alias intervals) exactly as the section states them."""
    planned = arena.planned
    records = [UsageRecord(t.index, t.first_op, t.last_op, t.size) for t in planned]
    aliases = {t.index: t.alias_of for t in arena.offsets.tensors if t.alias_of is not None}
    intervals = {t.index: (t.first_op, t.last_op) for t in arena.offsets.tensors if t.alias_of is not None}
    plan = OffsetPlan(arena.offsets.strategy, tuple(t.offset for t in planned),
                      arena.offsets.arena_bytes, alignment)
    return records, plan, aliases, intervals


def object_plan_of(arena: ArenaSection) -> ObjectPlan:
    return ObjectPlan(arena.objects.strategy, tuple(k for _, k in arena.objects.assignment),
                      arena.objects.object_sizes)


# -- what gets planned when packaging ----------------------------------------------------------

@dataclass(frozen=True)
class ArenaToPlan:
    lifetimes: ArenaLifetimes  # with the scratch buffers' records appended
    scratch: Mapping[int, str]  # record id -> label, for the scratch buffers
    unmodelled_ops: tuple[str, ...]  # ops whose scratch requests are not known


def arenas_to_plan(model: Model, semantics: str) -> list[ArenaToPlan]:
    """The model's arenas under the semantics. For TFLite Micro the scratch buffers its kernels
    request are planned too (packager/predict/tflm_scratch.py says which), so the plan leaves
    room for them: TFLite Micro places them itself, around the offline-planned tensors."""
    out = []
    for arena in model_lifetimes(model, semantics):
        if semantics != "tflm" or not arena.inline:
            out.append(ArenaToPlan(arena, {}, ()))
            continue
        records, names, unmodelled = scratch_records(model, arena.op_scopes)
        labels = {r.tensor: f"scratch buffer of {name} (steps {r.first_op}..{r.last_op})"
                  for r, name in zip(records, names)}
        out.append(ArenaToPlan(replace(arena, records=arena.records + tuple(records)), labels,
                               tuple(unmodelled)))
    return out
