"""The packaged plan as a FlatBuffer (schemas/plan.fbs, identifier "TPLN"), and back.

The same content as the JSON form. Written by the library's Builder, each list of entries as
columns (format version 2: a vector per field, written from numpy arrays at once). The
dynamic-shape fields are written only for a model with dynamic shapes. Version 1 files (a table
per entry) are still read.
"""

from __future__ import annotations

import struct

import flatbuffers
import numpy as np

from packager.errors import PlanError
from packager.package.columns import NO_ALIAS, TensorColumns, TensorEntry, utf8_texts
from packager.package.sidecar import (ArenaSection, ObjectSection, OffsetSection, PackagePlan,
                                      PassSection, PersistentEntry, Region, RuntimeArena, SourceModel, SymbolEntry)
from schemas.tflpack_plan import (Arena, ObjectPlan, OffsetPlan, PassPlan, PersistentTensor, Plan,
                                  Region as FbRegion,
                                  RuntimeArena as FbRuntimeArena, SourceModel as FbSourceModel, Symbol,
                                  TensorColumns as FbTensorColumns, Texts)

FILE_IDENTIFIER = b"TPLN"
_INT32 = np.iinfo(np.int32)


# -- writing ---------------------------------------------------------------------------------

def dumps(plan: PackagePlan) -> bytes:
    b = flatbuffers.Builder(_size_hint(plan))
    arenas = [_arena(b, a) for a in plan.arenas]
    source = _source(b, plan.source)
    fmt, gen, sem = (b.CreateString(s) for s in (plan.format, plan.generator, plan.semantics))
    arena_vec = _table_vector(b, Plan.StartArenasVector, arenas)
    symbols = (_table_vector(b, Plan.StartSymbolsVector, [_symbol(b, s) for s in plan.symbols])
               if plan.symbols else None)
    runtime_arena = None if plan.runtime_arena is None else _runtime_arena(b, plan.runtime_arena)
    regions = (_table_vector(b, Plan.StartRegionsVector, [_region(b, r) for r in plan.regions])
               if plan.regions else None)
    Plan.Start(b)
    Plan.AddFormat(b, fmt)
    Plan.AddFormatVersion(b, plan.format_version)
    Plan.AddGenerator(b, gen)
    Plan.AddSource(b, source)
    Plan.AddSemantics(b, sem)
    Plan.AddAlignment(b, plan.alignment)
    Plan.AddArenas(b, arena_vec)
    if symbols is not None:
        Plan.AddSymbols(b, symbols)
    if runtime_arena is not None:
        Plan.AddRuntimeArena(b, runtime_arena)
    if regions is not None:
        Plan.AddRegions(b, regions)
    b.Finish(Plan.End(b), file_identifier=FILE_IDENTIFIER)
    return bytes(memoryview(b.Bytes)[b.Head():])  # b.Output(), copied once (it makes a copy too)


def _size_hint(plan: PackagePlan) -> int:
    """About the bytes the file takes, so that the builder makes its buffer once: grown by
    doubling, it held the old buffer beside one twice its size."""
    size = 1 << 16
    for a in plan.arenas:
        c = a.offsets.tensors
        texts = sum(len(t) for column in (c.kind, c.name, c.type) for t in column)
        size += c.count * (9 * 8 + 3 * 8) + 4 * sum(map(len, c.shape)) + 2 * texts
        size += 16 * (len(a.objects.assignment) + len(a.objects.object_sizes))
        if a.passes is not None:
            size += 16 * len(a.passes.offsets) + 2 * sum(len(e or "") for e in c.size_expr)
    return size


def _table_vector(b: flatbuffers.Builder, start, tables: list[int]) -> int:
    start(b, len(tables))
    for t in reversed(tables):
        b.PrependUOffsetTRelative(t)
    return b.EndVector()


def _ints(b: flatbuffers.Builder, values, what: str) -> int:
    """A vector of 32-bit ints (PlanError for a value that does not fit one)."""
    values = np.asarray(values, dtype=np.int64)
    if values.size and (values.min() < _INT32.min or values.max() > _INT32.max):
        raise PlanError(f"the plan's {what} does not fit the FlatBuffer's 32-bit field")
    return b.CreateNumpyVector(values.astype("<i4"))


def _longs(b: flatbuffers.Builder, values) -> int:
    return b.CreateNumpyVector(np.asarray(values, dtype="<i8"))


def _texts(b: flatbuffers.Builder, texts) -> int:
    encoded = utf8_texts(texts)
    absent = encoded.lengths < 0
    utf8 = b.CreateByteVector(encoded.data)
    ends = _longs(b, np.cumsum(np.maximum(encoded.lengths, 0)))
    absent_vec = b.CreateNumpyVector(absent) if absent.any() else None
    Texts.Start(b)
    Texts.AddUtf8(b, utf8)
    Texts.AddEnds(b, ends)
    if absent_vec is not None:
        Texts.AddAbsent(b, absent_vec)
    return Texts.End(b)


def _tensor_columns(b: flatbuffers.Builder, c: TensorColumns) -> int:
    ints = {f: _ints(b, c[f], f) for f in ("index", "subgraph", "tensor", "first_op", "last_op",
                                             "alias_of", "pass_")}
    ranks = np.fromiter(map(len, c.shape), np.int64, c.count)
    rank = _ints(b, ranks, "shape")
    dims = _ints(b, np.fromiter((d for s in c.shape for d in s), np.int64, int(ranks.sum())), "shape")
    offset, size = _longs(b, c.offset), _longs(b, c.size)
    kind, name, type_ = (_texts(b, getattr(c, f)) for f in ("kind", "name", "type"))
    size_expr = _texts(b, c.size_expr) if c.size_expr.count(None) != c.count else None
    T = FbTensorColumns
    T.Start(b)
    T.AddIndex(b, ints["index"])
    T.AddSubgraph(b, ints["subgraph"])
    T.AddTensor(b, ints["tensor"])
    T.AddKind(b, kind)
    T.AddName(b, name)
    T.AddType(b, type_)
    T.AddShapeRank(b, rank)
    T.AddShapeDims(b, dims)
    T.AddOffset(b, offset)
    T.AddSize(b, size)
    T.AddFirstOp(b, ints["first_op"])
    T.AddLastOp(b, ints["last_op"])
    T.AddAliasOf(b, ints["alias_of"])
    T.AddPass_(b, ints["pass_"])
    if size_expr is not None:
        T.AddSizeExpr(b, size_expr)
    return T.End(b)


def _region(b: flatbuffers.Builder, r: Region) -> int:
    part, section, bound, reason = (b.CreateString(x) for x in (r.part, r.section, r.bound, r.reason))
    FbRegion.Start(b)
    FbRegion.AddPart(b, part)
    FbRegion.AddSection(b, section)
    FbRegion.AddCapacity(b, r.capacity)
    FbRegion.AddBytes(b, r.bytes)
    FbRegion.AddBound(b, bound)
    FbRegion.AddReason(b, reason)
    return FbRegion.End(b)


def _runtime_arena(b: flatbuffers.Builder, r: RuntimeArena) -> int:
    runtime, target, rule, reason, bound = (b.CreateString(x) for x in (r.runtime, r.target, r.rule, r.reason,
                                                                         r.bound))
    not_run = b.CreateString(r.not_run) if r.not_run else None
    head_plan = b.CreateString(r.head_plan) if r.head_plan else None  # absent when the head is this plan
    FbRuntimeArena.Start(b)
    FbRuntimeArena.AddRuntime(b, runtime)
    FbRuntimeArena.AddTarget(b, target)
    FbRuntimeArena.AddArenaBytes(b, r.arena_bytes)
    FbRuntimeArena.AddHeadBytes(b, r.head_bytes)
    FbRuntimeArena.AddTailBytes(b, r.tail_bytes)
    FbRuntimeArena.AddSetupBytes(b, r.setup_bytes)
    FbRuntimeArena.AddExact(b, r.exact)
    FbRuntimeArena.AddModelled(b, r.modelled)
    FbRuntimeArena.AddRule(b, rule)
    FbRuntimeArena.AddReason(b, reason)
    if head_plan is not None:
        FbRuntimeArena.AddHeadPlan(b, head_plan)
    FbRuntimeArena.AddBound(b, bound)
    if not_run is not None:
        FbRuntimeArena.AddNotRun(b, not_run)
    return FbRuntimeArena.End(b)


def _source(b: flatbuffers.Builder, s: SourceModel) -> int:
    file, sha = b.CreateString(s.file), b.CreateString(s.sha256)
    counts = _ints(b, s.subgraph_tensor_counts, "tensor counts")
    FbSourceModel.Start(b)
    FbSourceModel.AddFile(b, file)
    FbSourceModel.AddSha256(b, sha)
    FbSourceModel.AddBytes(b, s.bytes)
    FbSourceModel.AddSubgraphTensorCounts(b, counts)
    return FbSourceModel.End(b)


def _symbol(b: flatbuffers.Builder, s: SymbolEntry) -> int:
    name, source = b.CreateString(s.name), b.CreateString(s.source)
    Symbol.Start(b)
    Symbol.AddName(b, name)
    Symbol.AddSource(b, source)
    Symbol.AddDataDependent(b, s.data_dependent)
    Symbol.AddPass_(b, s.pass_)
    Symbol.AddMin(b, s.min)
    Symbol.AddMax(b, s.max)
    return Symbol.End(b)


def _passes(b: flatbuffers.Builder, p: PassSection) -> int:
    index = _ints(b, [i for i, _ in p.offsets], "multi-pass tensor ids")
    offset = _longs(b, [o for _, o in p.offsets])
    PassPlan.Start(b)
    PassPlan.AddArenaBytes(b, p.arena_bytes)
    PassPlan.AddTensorIndex(b, index)
    PassPlan.AddTensorOffset(b, offset)
    return PassPlan.End(b)


def _arena(b: flatbuffers.Builder, a: ArenaSection) -> int:
    columns = _tensor_columns(b, a.offsets.tensors)
    strategy = b.CreateString(a.offsets.strategy)
    OffsetPlan.Start(b)
    OffsetPlan.AddStrategy(b, strategy)
    OffsetPlan.AddArenaBytes(b, a.offsets.arena_bytes)
    OffsetPlan.AddLowerBound(b, a.offsets.lower_bound)
    OffsetPlan.AddOptimal(b, a.offsets.optimal)
    OffsetPlan.AddColumns(b, columns)
    offsets = OffsetPlan.End(b)

    index = _ints(b, [i for i, _ in a.objects.assignment], "object tensor ids")
    objects_of = _ints(b, [k for _, k in a.objects.assignment], "objects")
    sizes = _longs(b, a.objects.object_sizes)
    strategy = b.CreateString(a.objects.strategy)
    ObjectPlan.Start(b)
    ObjectPlan.AddStrategy(b, strategy)
    ObjectPlan.AddTotalBytes(b, a.objects.total_bytes)
    ObjectPlan.AddLowerBound(b, a.objects.lower_bound)
    ObjectPlan.AddObjectSizes(b, sizes)
    ObjectPlan.AddOptimal(b, a.objects.optimal)
    ObjectPlan.AddTensorIndex(b, index)
    ObjectPlan.AddTensorObject(b, objects_of)
    objects = ObjectPlan.End(b)

    persistent = []
    for p in a.persistent:
        name = b.CreateString(p.name)
        PersistentTensor.Start(b)
        PersistentTensor.AddIndex(b, p.index)
        PersistentTensor.AddSubgraph(b, p.subgraph)
        PersistentTensor.AddTensor(b, p.tensor)
        PersistentTensor.AddName(b, name)
        PersistentTensor.AddSize(b, p.size)
        persistent.append(PersistentTensor.End(b))
    persistent_vec = _table_vector(b, Arena.StartPersistentVector, persistent)
    passes = None if a.passes is None else _passes(b, a.passes)
    Arena.Start(b)
    Arena.AddSubgraph(b, a.subgraph)
    Arena.AddInline(b, a.inline)
    Arena.AddSteps(b, a.steps)
    Arena.AddOffsets(b, offsets)
    Arena.AddObjects(b, objects)
    Arena.AddPersistent(b, persistent_vec)
    Arena.AddPersistentBytes(b, a.persistent_bytes)
    if passes is not None:
        Arena.AddPasses(b, passes)
    return Arena.End(b)


# -- reading ---------------------------------------------------------------------------------

_CORRUPT = (IndexError, struct.error, ValueError, TypeError, UnicodeDecodeError, AttributeError,
            OverflowError, RecursionError, MemoryError)


def is_flatbuffer_plan(data: bytes) -> bool:
    return len(data) >= 8 and data[4:8] == FILE_IDENTIFIER


def loads(data: bytes) -> PackagePlan:
    """Parse a FlatBuffer plan (version 2, or 1); PlanError when it is not one or is damaged."""
    data = bytes(data)
    if not is_flatbuffer_plan(data):
        raise PlanError("not a FlatBuffer plan file (identifier 'TPLN' missing)")
    try:
        root = Plan.Plan.GetRootAs(data, 0)
        for what, present in (("source", root.Source()), ("format", root.Format())):
            if present is None:
                raise PlanError(f"malformed FlatBuffer plan: no {what}")
        version = root.FormatVersion()
        return PackagePlan(
            format=_s(root.Format()), format_version=version,
            generator=_s(root.Generator()), source=_source_from(root.Source()),
            semantics=_s(root.Semantics()), alignment=root.Alignment(),
            arenas=tuple(_arena_from(_need(root.Arenas(i), "arena"), version)
                         for i in _n(root.ArenasLength(), data)),
            symbols=tuple(_symbol_from(_need(root.Symbols(i), "symbol")) for i in _n(root.SymbolsLength(), data)),
            runtime_arena=_runtime_arena_from(root.RuntimeArena()),
            regions=tuple(_region_from(_need(root.Regions(i), "region")) for i in _n(root.RegionsLength(), data)))
    except PlanError:
        raise
    except _CORRUPT as e:
        raise PlanError(f"corrupt FlatBuffer plan ({type(e).__name__}: {e})") from None


def _n(count: int, data: bytes) -> range:
    if count < 0 or count * 4 > len(data):
        raise PlanError(f"corrupt FlatBuffer plan: a vector claims {count} entries")
    return range(count)


def _need(obj, what: str):
    if obj is None:
        raise PlanError(f"malformed FlatBuffer plan: missing {what}")
    return obj


def _s(raw: bytes | None) -> str:
    return raw.decode("utf-8") if raw else ""


def _numbers(obj, field: str) -> list[int]:
    """A vector of numbers as Python ints (none when absent)."""
    values = getattr(obj, field + "AsNumpy")()
    return [] if isinstance(values, int) else values.tolist()  # 0: the vector is absent


def _source_from(s) -> SourceModel:
    return SourceModel(_s(s.File()), _s(s.Sha256()), s.Bytes(), tuple(_numbers(s, "SubgraphTensorCounts")))


def _arena_from(a, version: int) -> ArenaSection:
    off, obj = _need(a.Offsets(), "offset plan"), _need(a.Objects(), "object plan")
    data = a._tab.Bytes
    if version == 1:
        tensors = TensorColumns.of_entries(_tensor_v1(_need(off.Tensors(i), "tensor"))
                                           for i in _n(off.TensorsLength(), data))
        assignment = tuple((t.Index(), t.Object()) for t in (_need(obj.Tensors(i), "object")
                                                             for i in _n(obj.TensorsLength(), data)))
    else:
        tensors = _tensors_from(off.Columns())
        assignment = _pairs(_numbers(obj, "TensorIndex"), _numbers(obj, "TensorObject"))
    persistent = tuple(PersistentEntry(p.Index(), p.Subgraph(), p.Tensor(), _s(p.Name()), p.Size())
                       for p in (_need(a.Persistent(i), "persistent tensor")
                                 for i in _n(a.PersistentLength(), data)))
    return ArenaSection(
        subgraph=a.Subgraph(), inline=bool(a.Inline()), steps=a.Steps(),
        offsets=OffsetSection(_s(off.Strategy()), off.ArenaBytes(), off.LowerBound(), tensors,
                              bool(off.Optimal())),
        objects=ObjectSection(_s(obj.Strategy()), obj.TotalBytes(), obj.LowerBound(),
                              tuple(_numbers(obj, "ObjectSizes")), assignment, bool(obj.Optimal())),
        persistent=persistent, persistent_bytes=a.PersistentBytes(), passes=_passes_from(a.Passes(), version))


def _pairs(index: list[int], values: list[int]) -> tuple[tuple[int, int], ...]:
    if len(index) != len(values):
        raise PlanError("corrupt FlatBuffer plan: paired vectors differ in length")
    return tuple(zip(index, values))


def _tensors_from(c) -> TensorColumns:
    """Version 2: the entries' columns."""
    if c is None:
        return TensorColumns.empty()
    numbers = {f: getattr(c, name + "AsNumpy")() for f, name in (
        ("index", "Index"), ("subgraph", "Subgraph"), ("tensor", "Tensor"), ("offset", "Offset"),
        ("size", "Size"), ("first_op", "FirstOp"), ("last_op", "LastOp"), ("alias_of", "AliasOf"),
        ("pass_", "Pass_"))}
    numbers = {f: np.zeros(0, np.int64) if isinstance(v, int) else v for f, v in numbers.items()}
    count = len(numbers["index"])
    ranks, dims = (_numbers(c, f) for f in ("ShapeRank", "ShapeDims"))
    if len(ranks) != count or sum(ranks) != len(dims) or min(ranks, default=0) < 0:
        raise PlanError("corrupt FlatBuffer plan: the shapes do not match the entries")
    ends = np.cumsum(ranks).tolist()
    shapes = [tuple(dims[e - r:e]) for r, e in zip(ranks, ends)]
    texts = {f: _texts_from(getattr(c, name)(), count, optional=f == "size_expr")
             for f, name in (("kind", "Kind"), ("name", "Name"), ("type", "Type"), ("size_expr", "SizeExpr"))}
    return TensorColumns(shape=shapes, **texts, **numbers)


def _texts_from(t, count: int, optional: bool) -> list[str | None]:
    """A Texts column of `count` texts; absent as a whole: None each where `optional`, else ""."""
    if t is None:
        return [None if optional else ""] * count
    data, ends = t.Utf8AsNumpy(), _numbers(t, "Ends")
    data = b"" if isinstance(data, int) else data.tobytes()
    if len(ends) != count or (ends and (ends[-1] != len(data) or min(np.diff(ends, prepend=0)) < 0)):
        raise PlanError("corrupt FlatBuffer plan: a text column does not match the entries")
    starts = [0, *ends[:-1]]
    if data.isascii():  # a character a byte: one decoding, then slices
        text = data.decode("ascii")
        out: list[str | None] = [text[a:e] for a, e in zip(starts, ends)]
    else:
        out = [data[a:e].decode("utf-8") for a, e in zip(starts, ends)]
    absent = t.AbsentAsNumpy()
    if not isinstance(absent, int):
        if len(absent) != count:
            raise PlanError("corrupt FlatBuffer plan: a text column does not match the entries")
        for k in np.flatnonzero(absent).tolist():
            out[k] = None
    return out


def _tensor_v1(t) -> TensorEntry:
    """Version 1: one entry's table."""
    alias = t.AliasOf()
    size_expr = t.SizeExpr()
    return TensorEntry(t.Index(), t.Subgraph(), t.Tensor(), _s(t.Kind()), _s(t.Name()), _s(t.Type()),
                       tuple(_numbers(t, "Shape")), t.Offset(), t.Size(), t.FirstOp(), t.LastOp(),
                       None if alias == NO_ALIAS else alias, t.Pass_(),
                       None if size_expr is None else size_expr.decode("utf-8"))


def _passes_from(p, version: int) -> PassSection | None:
    if p is None:
        return None
    if version == 1:
        data = p._tab.Bytes
        offsets = tuple((e.Index(), e.Offset()) for e in (_need(p.Tensors(i), "pass offset")
                                                          for i in _n(p.TensorsLength(), data)))
    else:
        offsets = _pairs(_numbers(p, "TensorIndex"), _numbers(p, "TensorOffset"))
    return PassSection(p.ArenaBytes(), offsets)


def _runtime_arena_from(r) -> RuntimeArena | None:
    if r is None:
        return None
    return RuntimeArena(_s(r.Runtime()), _s(r.Target()), r.ArenaBytes(), r.HeadBytes(), r.TailBytes(),
                        r.SetupBytes(), bool(r.Exact()), bool(r.Modelled()), _s(r.Rule()), _s(r.Reason()),
                        _s(r.HeadPlan()),
                        # a plan written before standings were recorded: exact as it said, else unknown
                        _s(r.Bound()) or ("exact" if r.Exact() else "unknown"), _s(r.NotRun()))


def _region_from(r) -> Region:
    return Region(_s(r.Part()), _s(r.Section()), r.Capacity(), r.Bytes(), _s(r.Bound()), _s(r.Reason()))


def _symbol_from(s) -> SymbolEntry:
    return SymbolEntry(_s(s.Name()), _s(s.Source()), bool(s.DataDependent()), s.Pass_(), s.Min(), s.Max())
