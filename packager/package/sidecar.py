"""The packaged plan: what the sidecar files hold, as plain frozen data.

Built once from validated planning results; the JSON and FlatBuffer writers, the C header and the
summary all read this, and `package.load.load` gives it back, so every output says the same thing.

Tensor ids follow the arena's numbering: for an inline (tflm) arena the global id (subgraphs
concatenated in order, as in TFLite Micro's OfflineMemoryAllocation), else the tensor's index in
its subgraph. Scratch buffers TFLite Micro's kernels request get ids from 2^30 on
(packager/kernels/tflm_scratch.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from packager.package.columns import TensorColumns, TensorEntry
from packager.plan.records import ObjectPlan, OffsetPlan, UsageRecord, align_up

FORMAT_NAME = "tflpack-plan"
FORMAT_VERSION = 2  # 2: the entries stored as columns in both files; 1: an object or table per entry
READABLE_VERSIONS = (1, 2)
TENSOR = "tensor"
SCRATCH = "scratch"


@dataclass(frozen=True)
class OffsetSection:
    strategy: str
    arena_bytes: int
    lower_bound: int
    tensors: TensorColumns  # planned records in problem order, then the aliases
    optimal: bool = False  # at the lower bound, or proven optimal: no offset plan has a smaller arena

    def __post_init__(self) -> None:
        if not isinstance(self.tensors, TensorColumns):  # entries given one by one
            object.__setattr__(self, "tensors", TensorColumns.of_entries(self.tensors))


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
    def planned(self) -> list[TensorEntry]:
        tensors = self.offsets.tensors
        return tensors.entries(np.flatnonzero(tensors.planned).tolist())


@dataclass(frozen=True)
class SourceModel:
    file: str
    sha256: str
    bytes: int
    subgraph_tensor_counts: tuple[int, ...]


@dataclass(frozen=True)
class RuntimeArena:
    """TFLite Micro's whole arena for the packaged model: the number to give `MicroInterpreter`
    (packager/package/runtime_arena.py works it out)."""
    runtime: str  # the build the figures are for, e.g. "tflite-micro 0.dev20261023182759"
    target: str  # the build: "host" (the pinned Python wheel, 64-bit), "armhf-linux", a Cortex-M core
    arena_bytes: int  # the smallest arena (multiple of 16) that sets the model up and runs it
    head_bytes: int  # the plan: non-persistent memory (tensors and scratch buffers)
    tail_bytes: int  # persistent memory: TFLite Micro's structs and every kernel's buffers
    setup_bytes: int  # the arena TFLite Micro's planning step needs while it sets the model up
    exact: bool  # True only when shown: a build of the target ran it, or every kernel form is proven on it
    modelled: bool  # True: not measured or proven on this target's own TFLite Micro (`rule` says how they are made)
    rule: str
    reason: str = ""  # one line: why the figure stands where it does (how it was shown exact)
    head_plan: str = ""  # "": the head is this plan; else whose it is ("the model's own Vela plan")
    bound: str = "unknown"  # exact | upper | lower | unknown: which side of the runtime's need it is on
    not_run: str = ""  # why no build of the target ran the packaged model; "" when one did


@dataclass(frozen=True)
class Region:
    """One of the two buffers of `package --regions` (MicroAllocator::Create(persistent, P,
    non_persistent, NP)): the part of TFLite Micro's memory it holds, where it goes and whether it
    fits (packager/package/regions.py)."""
    part: str  # "non-persistent" (the head and the set-up temporaries) or "persistent" (the tail)
    section: str  # the linker section the header declares its buffer in
    capacity: int  # the bytes the region offers (the user's figure)
    bytes: int  # the bytes TFLite Micro needs there: a multiple of 16
    bound: str  # exact | upper | lower | unknown, as the whole arena's standing
    reason: str  # one line: why the figure stands where it does

    @property
    def fits(self) -> bool:
        return self.bytes <= self.capacity


@dataclass(frozen=True)
class WrittenFile:
    """A file a run wrote beside its plan JSON, as the plan records it: what lets a later run
    tell its own earlier files (same name, same bytes) from a user's (packager/package/owned_files.py)."""
    name: str
    sha256: str
    bytes: int


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
    runtime_arena: RuntimeArena | None = None  # tflm only: TFLite Micro's whole arena
    regions: tuple[Region, ...] = ()  # package --regions: the non-persistent and the persistent buffer

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


# -- turning it back into what the validator checks ----------------------------------------------

def offset_plan_of(arena: ArenaSection, alignment: int) -> tuple[
        list[UsageRecord], OffsetPlan, dict[int, int], dict[int, tuple[int, int]]]:
    """(records, offset plan, aliases, alias intervals) exactly as the section states them."""
    tensors = arena.offsets.tensors
    planned, aliases = tensors.planned, ~tensors.planned
    index, first, last = (tensors[f][planned].tolist() for f in ("index", "first_op", "last_op"))
    records = list(map(UsageRecord, index, first, last, tensors.size[planned].tolist()))
    alias_ids = tensors.index[aliases].tolist()
    owners = dict(zip(alias_ids, tensors.alias_of[aliases].tolist()))
    intervals = dict(zip(alias_ids, zip(tensors.first_op[aliases].tolist(), tensors.last_op[aliases].tolist())))
    plan = OffsetPlan(arena.offsets.strategy, tuple(tensors.offset[planned].tolist()),
                      arena.offsets.arena_bytes, alignment)
    return records, plan, owners, intervals


def object_plan_of(arena: ArenaSection) -> ObjectPlan:
    return ObjectPlan(arena.objects.strategy, tuple(k for _, k in arena.objects.assignment),
                      arena.objects.object_sizes)
