"""The packaged plan: what the sidecar files hold, as plain frozen data.

Built once from validated planning results; the JSON and FlatBuffer writers, the C header and the
summary all read this, and `package.load.load` gives it back, so every output says the same thing.

Tensor ids follow the arena's numbering: for an inline (tflm) arena the global id (subgraphs
concatenated in order, as in TFLite Micro's OfflineMemoryAllocation), else the tensor's index in
its subgraph. Scratch buffers TFLite Micro's kernels request get ids from 2^30 on
(packager/kernels/tflm_scratch.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from packager.dynamic.shapes import DynamicShapes, worst_case_lifetimes
from packager.lifetimes import PERSISTENT, ArenaLifetimes, model_lifetimes
from packager.model import Model
from packager.plan.portfolio import Outcome, PortfolioResult
from packager.plan.records import ObjectPlan, OffsetPlan, UsageRecord, align_up
from packager.compare.predict_tflm import scratch_records
from packager.dynamic.symbolic import Value

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
    size_expr: str | None = None  # bytes over the symbols (dynamic shapes only); `size` is its largest value


@dataclass(frozen=True)
class OffsetSection:
    strategy: str
    arena_bytes: int
    lower_bound: int
    tensors: tuple[TensorEntry, ...]  # planned records in problem order, then the aliases
    optimal: bool = False  # at the lower bound, or proven optimal: no offset plan has a smaller arena


@dataclass(frozen=True)
class ObjectSection:
    strategy: str
    total_bytes: int
    lower_bound: int
    object_sizes: tuple[int, ...]
    assignment: tuple[tuple[int, int], ...]  # (tensor id, object), in problem order
    optimal: bool = False  # at the lower bound, or proven optimal: no shared-object plan is smaller


@dataclass(frozen=True)
class PassSection:
    """The multi-pass plan of a model with dynamic shapes: each pass placed with the earlier passes
    fixed, at the largest sizes, so a runtime may keep earlier offsets and re-plan a later pass."""
    arena_bytes: int
    offsets: tuple[tuple[int, int], ...]  # (tensor id, offset), in problem order


@dataclass(frozen=True)
class SymbolEntry:
    name: str
    source: str  # "input 'x' axis 0" or "output 0 axis 0 of op 2 (WHERE)"
    data_dependent: bool  # known only after its op runs
    pass_: int
    min: int
    max: int


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
    passes: PassSection | None = None  # models with dynamic shapes only

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
    symbols: tuple[SymbolEntry, ...] = ()  # dynamic shapes: the symbols and their bounds

    @property
    def is_dynamic(self) -> bool:
        return bool(self.symbols)

    @property
    def arena_bases(self) -> tuple[int, ...]:
        """Where each arena starts when all are laid end to end, each start aligned."""
        return end_to_end([a.offsets.arena_bytes for a in self.arenas], self.alignment)[0]

    @property
    def arena_bytes(self) -> int:
        """Bytes of all arenas laid end to end (the one arena, for tflm)."""
        return end_to_end([a.offsets.arena_bytes for a in self.arenas], self.alignment)[1]

    @property
    def lower_bound(self) -> int:
        return sum(a.offsets.lower_bound for a in self.arenas)

    @property
    def objects_bytes(self) -> int:
        return sum(a.objects.total_bytes for a in self.arenas)


def end_to_end(sizes: Sequence[int], alignment: int) -> tuple[tuple[int, ...], int]:
    """(start of each arena, total bytes) when arenas of these sizes are laid end to end, each
    start aligned."""
    bases, end = [], 0
    for size in sizes:
        bases.append(align_up(end, alignment))
        end = bases[-1] + size
    return tuple(bases), end


# -- building it from planning results --------------------------------------------------------

def arena_section(model: Model, arena: ArenaToPlan, result: PortfolioResult, offsets: Outcome,
                  objects: Outcome, passes: OffsetPlan | None = None) -> ArenaSection:
    """The section of one planned arena; `passes` is its multi-pass plan (dynamic shapes)."""
    lifetimes, scratch, sizes = arena.lifetimes, arena.scratch, arena.sizes
    problem = result.problem
    assert isinstance(offsets.plan, OffsetPlan) and isinstance(objects.plan, ObjectPlan)
    assert (passes is None) == (sizes is None)

    def where(tensor_id: int) -> tuple[int, int]:
        return lifetimes.tensor_subgraph.get(tensor_id, (lifetimes.subgraph, tensor_id))

    def entry(r: UsageRecord, offset: int, alias_of: int | None = None) -> TensorEntry:
        if r.tensor in scratch:
            e = TensorEntry(r.tensor, lifetimes.subgraph, -1, SCRATCH, scratch[r.tensor], "UINT8",
                            (r.size,), offset, r.size, r.first_op, r.last_op, None)
        else:
            s, t = where(r.tensor)
            tensor = model.subgraphs[s].tensors[t]
            e = TensorEntry(r.tensor, s, t, TENSOR, tensor.name, tensor.type, tensor.shape, offset,
                            r.size, r.first_op, r.last_op, alias_of)
        if sizes is None:
            return e
        return replace(e, pass_=sizes.passes[r.tensor], size_expr=str(sizes.expressions[r.tensor]))

    entries = [entry(r, o) for r, o in zip(problem.records, offsets.plan.offsets)]
    by_id = {e.index: e for e in entries}
    for alias, owner in sorted(problem.aliases.items()):
        first, last = problem.alias_intervals.get(alias, (by_id[owner].first_op, by_id[owner].last_op))
        # Its own bytes, inside the owner's buffer (in-place sharing needs equal sizes anyway).
        size = min(alias_bytes(model, lifetimes, alias) if sizes is None else sizes.largest[alias],
                   by_id[owner].size)
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
                              tuple(entries), result.offset_plan_optimal(offsets)),
        objects=ObjectSection(objects.strategy, object_plan.total, problem.object_lower_bound,
                              tuple(object_plan.object_sizes),
                              tuple((r.tensor, k) for r, k in zip(problem.records, object_plan.assignment)),
                              result.object_plan_optimal(objects)),
        persistent=tuple(persistent), persistent_bytes=lifetimes.persistent_bytes,
        passes=None if passes is None else PassSection(
            passes.arena, tuple((r.tensor, o) for r, o in zip(problem.records, passes.offsets))))


def alias_bytes(model: Model, lifetimes: ArenaLifetimes, tensor_id: int) -> int:
    """An alias's bytes as the file states them."""
    s, t = lifetimes.tensor_subgraph.get(tensor_id, (lifetimes.subgraph, tensor_id))
    return model.subgraphs[s].tensors[t].nbytes or 0


def symbol_entries(shapes: DynamicShapes, bounds: Mapping[str, tuple[int, int]]) -> tuple[SymbolEntry, ...]:
    return tuple(SymbolEntry(s.name, s.source, s.data_dependent, s.pass_index, *bounds[s.name])
                 for s in shapes.symbols)


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
class DynamicSizes:
    """A dynamic-shape model's sizes in one arena, per tensor id (records and aliases): the pass
    that knows the size, the size as an expression over the symbols, and its largest value inside
    the bounds (what the plan reserves, rounded as the runtime rounds)."""
    passes: Mapping[int, int]
    expressions: Mapping[int, Value]
    largest: Mapping[int, int]


@dataclass(frozen=True)
class DynamicBinding:
    """The symbols of a model with dynamic shapes and the bounds the plan is made for."""
    shapes: DynamicShapes
    bounds: Mapping[str, tuple[int, int]]


@dataclass(frozen=True)
class ArenaToPlan:
    lifetimes: ArenaLifetimes  # with the scratch buffers' records appended; largest sizes if dynamic
    scratch: Mapping[int, str]  # record id -> label, for the scratch buffers
    unmodelled_ops: tuple[str, ...]  # ops whose scratch requests are not known
    sizes: DynamicSizes | None = None  # models with dynamic shapes only


def arenas_to_plan(model: Model, semantics: str, dynamic: DynamicBinding | None = None) -> list[ArenaToPlan]:
    """The model's arenas under the semantics. For TFLite Micro the scratch buffers its kernels
    request are planned too (packager/kernels/tflm_scratch.py says which), so the plan leaves
    room for them: TFLite Micro places them itself, around the offline-planned tensors. With
    dynamic shapes, every record (data-dependent outputs too) is at its largest size."""
    out = []
    for arena in model_lifetimes(model, semantics, plan_dynamic=dynamic is not None):
        labels: dict[int, str] = {}
        unmodelled: tuple[str, ...] = ()
        if semantics == "tflm" and arena.inline:
            records, names, missing = scratch_records(model, arena.op_scopes)
            labels = {r.tensor: f"scratch buffer of {name} (steps {r.first_op}..{r.last_op})"
                      for r, name in zip(records, names)}
            arena, unmodelled = replace(arena, records=arena.records + tuple(records)), tuple(missing)
        if dynamic is None:
            out.append(ArenaToPlan(arena, labels, unmodelled))
        else:
            worst, sizes = _at_largest_sizes(model, arena, dynamic)
            out.append(ArenaToPlan(worst, labels, unmodelled, sizes))
    return out


def _at_largest_sizes(model: Model, arena: ArenaLifetimes,
                      dynamic: DynamicBinding) -> tuple[ArenaLifetimes, DynamicSizes]:
    # The aliases ride along as records so that they are sized by the same rules as the tensors
    # (scratch buffers and other subgraphs' tensors keep the size they come with).
    aliases = tuple(UsageRecord(a, *arena.alias_intervals.get(a, (0, 0)), alias_bytes(model, arena, a))
                    for a in sorted(arena.aliases))
    n = len(arena.records)
    worst, passes, exprs = worst_case_lifetimes(replace(arena, records=arena.records + aliases),
                                                dynamic.shapes, dynamic.bounds)
    ids = [r.tensor for r in worst.records]
    sizes = DynamicSizes(dict(zip(ids, passes)), dict(zip(ids, exprs)),
                         {r.tensor: r.size for r in worst.records})
    return replace(arena, records=worst.records[:n]), sizes
