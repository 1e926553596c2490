"""The packaged plan as a FlatBuffer (schemas/plan.fbs, identifier "TPLN"), and back.

The same content as the JSON form; `alias_of` None is stored as -1 (the schema's default). The
dynamic-shape fields are written only for a model with dynamic shapes; absent, they read back as
none, so a static model's file is what it was before they existed.
"""

from __future__ import annotations

import struct

import flatbuffers
import numpy as np

from packager.errors import PlanError
from packager.package.flatbuffer_builder import (_PACK_I32, _PACK_I64, _PACK_U16, _PACK_U32,
                                                  LeanBuilder)
from packager.package.flatbuffer_builder import LeanBuilder as _Lean  # the class itself, however named
from packager.package.columns import tensor_columns
from packager.package.tensor_tables import write_assignment_tables, write_tensor_tables
from packager.package.sidecar import (ArenaSection, ObjectSection, OffsetSection, PackagePlan,
                                   PassSection, PersistentEntry, RuntimeArena, SourceModel, SymbolEntry,
                                   TensorEntry)
from schemas.tflpack_plan import (Arena, ObjectAssignment, ObjectPlan, OffsetPlan, PassOffset, PassPlan,
                                  PersistentTensor, Plan, RuntimeArena as FbRuntimeArena,
                                  SourceModel as FbSourceModel, Symbol,
                                  TensorEntry as FbTensorEntry)

FILE_IDENTIFIER = b"TPLN"
NO_ALIAS = -1


# -- writing ---------------------------------------------------------------------------------

def dumps(plan: PackagePlan) -> bytes:
    b = LeanBuilder(1024)  # flatbuffers.Builder's bytes, faster
    arenas = [_arena(b, a) for a in plan.arenas]
    source = _source(b, plan.source)
    fmt, gen, sem = (b.CreateString(s) for s in (plan.format, plan.generator, plan.semantics))
    arena_vec = _offsets_vector(b, Plan.StartArenasVector, arenas)
    symbols = (_offsets_vector(b, Plan.StartSymbolsVector, [_symbol(b, s) for s in plan.symbols])
               if plan.symbols else None)
    runtime_arena = None if plan.runtime_arena is None else _runtime_arena(b, plan.runtime_arena)
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
    b.Finish(Plan.End(b), file_identifier=FILE_IDENTIFIER)
    return bytes(memoryview(b.Bytes)[b.head:])  # b.Output()'s bytes, copied once (it copies too)


def _runtime_arena(b: flatbuffers.Builder, r: RuntimeArena) -> int:
    runtime, target, rule, reason = (b.CreateString(x) for x in (r.runtime, r.target, r.rule, r.reason))
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
    return FbRuntimeArena.End(b)


def _offsets_vector(b: flatbuffers.Builder, start, offsets: list[int]) -> int:
    start(b, len(offsets))
    if isinstance(b, _Lean) and offsets:
        # PrependUOffsetTRelative of each, last first, in one step: StartVector made room for all
        # of them, 4-aligned, so each goes 4 bytes below the one before, `here` growing by 4.
        n = len(offsets)
        end, head = len(b.Bytes), b.head
        targets = np.asarray(offsets, dtype=np.int64)
        here = (end - head) + 4 * np.arange(n - 1, -1, -1, dtype=np.int64)  # each one's `here`
        if (targets > here).any():
            raise flatbuffers.builder.OffsetArithmeticError("flatbuffers: Offset arithmetic error.")
        b.Bytes[head - 4 * n:head] = (here - targets + 4).astype("<u4").tobytes()
        b.head = head - 4 * n
        return b.EndVector()
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def _scalar_vector(b: flatbuffers.Builder, start, prepend: str, values) -> int:
    start(b, len(values))
    for v in reversed(values):
        getattr(b, prepend)(v)
    return b.EndVector()


def _source(b: flatbuffers.Builder, s: SourceModel) -> int:
    file, sha = b.CreateString(s.file), b.CreateString(s.sha256)
    counts = _scalar_vector(b, FbSourceModel.StartSubgraphTensorCountsVector, "PrependInt32",
                            s.subgraph_tensor_counts)
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
    entries = []
    for index, offset in p.offsets:
        PassOffset.Start(b)
        PassOffset.AddIndex(b, index)
        PassOffset.AddOffset(b, offset)
        entries.append(PassOffset.End(b))
    tensors = _offsets_vector(b, PassPlan.StartTensorsVector, entries)
    PassPlan.Start(b)
    PassPlan.AddArenaBytes(b, p.arena_bytes)
    PassPlan.AddTensors(b, tensors)
    return PassPlan.End(b)


def _tensor(b: flatbuffers.Builder, t: TensorEntry) -> int:
    kind, name, type_ = (b.CreateString(s) for s in (t.kind, t.name, t.type))
    size_expr = None if t.size_expr is None else b.CreateString(t.size_expr)
    shape = _scalar_vector(b, FbTensorEntry.StartShapeVector, "PrependInt32", t.shape)
    FbTensorEntry.Start(b)
    FbTensorEntry.AddIndex(b, t.index)
    FbTensorEntry.AddSubgraph(b, t.subgraph)
    FbTensorEntry.AddTensor(b, t.tensor)
    FbTensorEntry.AddKind(b, kind)
    FbTensorEntry.AddName(b, name)
    FbTensorEntry.AddType(b, type_)
    FbTensorEntry.AddShape(b, shape)
    FbTensorEntry.AddOffset(b, t.offset)
    FbTensorEntry.AddSize(b, t.size)
    FbTensorEntry.AddFirstOp(b, t.first_op)
    FbTensorEntry.AddLastOp(b, t.last_op)
    FbTensorEntry.AddAliasOf(b, NO_ALIAS if t.alias_of is None else t.alias_of)
    FbTensorEntry.AddPass_(b, t.pass_)
    if size_expr is not None:
        FbTensorEntry.AddSizeExpr(b, size_expr)
    return FbTensorEntry.End(b)


def _tensors(b: flatbuffers.Builder, section: OffsetSection) -> list[int]:
    """Each tensor entry's table, as _tensor writes it with the builder's methods, here with the
    same steps done in place (space made once, the same alignment, fields and vtable sharing),
    from the section's columns (package/columns.py): thirty builder calls per entry were seconds
    for a plan of 100,000 tensors. LeanBuilder only: a test compares both with the library's
    Builder."""
    tensors = section.tensors
    if not isinstance(b, _Lean) or b.nested:
        return [_tensor(b, t) for t in tensors]
    columns = tensor_columns(section)
    strings = [columns.utf8(k) for k in ("kind", "name", "type", "size_expr")]  # UTF-8, once
    exprs = strings[3].lengths >= 0
    # Room for every entry: strings with their length, terminator and padding, the shape vector,
    # 14 fields of at most 8 bytes, alignment and a vtable of 16 slots.
    room = (sum(len(column.data) for column in strings) + 8 * int(exprs.sum())
            + 4 * int(columns.ranks().sum()) + len(tensors) * (3 * 8 + 8 + 14 * 8 + 8 + 36))
    _make_room(b, room)
    buf, end, head, vtables = b.Bytes, len(b.Bytes), b.head, b.vtables
    b.minalign = max(b.minalign, 4)
    if bool(columns["offset"].any()) or bool(columns["size"].any()):
        b.minalign = max(b.minalign, 8)
    def one(head: int, i: int) -> tuple[int, int]:
        return _tensor_entry(buf, end, head, vtables, tensors[i], tuple(column.encoded(i) for column in strings))

    written = write_tensor_tables(buf, end, head, vtables, columns, one)
    b.head, out = written if written is not None else _one_by_one(head, len(tensors), one)
    return out


def _one_by_one(head: int, n: int, one) -> tuple[int, list[int]]:
    """Entries 0..n-1 written by `one(head, i)` one after another (where a value does not fit
    the column form, whose builder error then stands): (the new head, their table offsets)."""
    out = []
    for i in range(n):
        head, object_offset = one(head, i)
        out.append(object_offset)
    return head, out


def _tensor_entry(buf: bytearray, end: int, head: int, vtables: dict, t: TensorEntry,
                  strings: tuple) -> tuple[int, int]:
    """One entry written below `head`: (the new head, its table's offset)."""
    i32, u32, i64 = _PACK_I32, _PACK_U32, _PACK_I64
    # Each field as the builder's Prepend*Slot writes it: aligned below head, its position from
    # the buffer's end kept for the vtable (0: absent, at its default). Written out in full, not
    # through helpers: a call per field per entry is most of the time at 100,000 entries.
    refs = []
    for x in strings:
        if x is None:
            refs.append(0)
            continue
        n = len(x)
        head -= (-(end - head + n + 1)) & 3  # padding bytes below head are zero already
        head -= n + 1
        buf[head:head + n] = x
        head -= 4
        u32(buf, head, n)
        refs.append(end - head)
    kind, name, type_, size_expr = refs
    shape = t.shape
    head -= (head - end) & 3
    for d in reversed(shape):
        head -= 4
        i32(buf, head, d)
    head -= 4
    u32(buf, head, len(shape))
    shape_ref = object_end = end - head
    vtable = [0] * 14
    for slot, x, default in ((0, t.index, 0), (1, t.subgraph, 0), (2, t.tensor, -1)):
        if x != default:
            head -= ((head - end) & 3) + 4
            i32(buf, head, x)
            vtable[slot] = end - head
    for slot, off in ((3, kind), (4, name), (5, type_), (6, shape_ref)):
        head -= (head - end) & 3
        here = end - head
        head -= 4
        u32(buf, head, here - off + 4)
        vtable[slot] = end - head
    for slot, x in ((7, t.offset), (8, t.size)):
        if x != 0:
            head -= ((head - end) & 7) + 8
            i64(buf, head, x)
            vtable[slot] = end - head
    for slot, x, default in ((9, t.first_op, 0), (10, t.last_op, 0),
                             (11, NO_ALIAS if t.alias_of is None else t.alias_of, NO_ALIAS),
                             (12, t.pass_, 0)):
        if x != default:
            head -= ((head - end) & 3) + 4
            i32(buf, head, x)
            vtable[slot] = end - head
    if size_expr:
        head -= (head - end) & 3
        here = end - head
        head -= 4
        u32(buf, head, here - size_expr + 4)
        vtable[13] = end - head
    return _vtable(buf, end, head, vtables, vtable, object_end)


ROOM_SLACK = 1 << 16  # beyond what is asked: the small tables written after a section fit too


def _make_room(b: flatbuffers.Builder, room: int) -> None:
    """At least `room` free bytes below the head, in one new buffer of the size needed: doubling
    towards it held the old buffer beside one up to twice the size (48 MB at 100,000 tensors).
    The bytes written are the same: every offset and alignment counts from the buffer's end."""
    if b.head >= room:
        return
    grow = room - b.head + ROOM_SLACK
    old = b.Bytes
    if len(old) + grow > flatbuffers.Builder.MAX_BUFFER_SIZE:
        raise flatbuffers.builder.BuilderSizeError("flatbuffers: cannot grow buffer beyond 2 gigabytes")
    grown = bytearray(len(old) + grow)
    grown[grow:] = old
    b.Bytes, b.head = grown, b.head + grow


def _vtable(buf: bytearray, end: int, head: int, vtables: dict, vtable: list[int],
            object_end: int) -> tuple[int, int]:
    """The object's vtable, shared with an equal one written before (LeanBuilder.WriteVtable's
    steps): (the new head, the object's offset)."""
    head -= ((head - end) & 3) + 4
    object_offset = end - head
    last = len(vtable)
    while last and vtable[last - 1] == 0:
        last -= 1
    fields = [object_offset - e if e else 0 for e in vtable[:last]]
    object_size = object_offset - object_end
    key = (*reversed(fields), object_size)
    existing = vtables.get(key)
    if existing is None:
        for off in (*reversed(fields), object_size, (last + 2) * 2):
            head -= 2
            _PACK_U16(buf, head, off)
        here = end - head
        _PACK_I32(buf, end - object_offset, here - object_offset)
        vtables[key] = here
    else:
        _PACK_I32(buf, head, existing - object_offset)
    return head, object_offset


def _assignments(b: flatbuffers.Builder, assignment: tuple[tuple[int, int], ...]) -> list[int]:
    """Each (index, object) pair's ObjectAssignment table, as Start, AddIndex, AddObject and End
    write it, the same steps done in place (LeanBuilder only, as _tensors)."""
    if not isinstance(b, _Lean) or b.nested:
        out = []
        for index, obj in assignment:
            ObjectAssignment.Start(b)
            ObjectAssignment.AddIndex(b, index)
            ObjectAssignment.AddObject(b, obj)
            out.append(ObjectAssignment.End(b))
        return out
    _make_room(b, 24 * len(assignment) + 16)  # two fields, the vtable offset, a vtable, alignment
    buf, end, head, vtables = b.Bytes, len(b.Bytes), b.head, b.vtables
    b.minalign = max(b.minalign, 4)
    def one(head: int, i: int) -> tuple[int, int]:
        return _assignment_entry(buf, end, head, vtables, *assignment[i])

    written = write_assignment_tables(buf, end, head, vtables, assignment, one)
    b.head, out = written if written is not None else _one_by_one(head, len(assignment), one)
    return out


def _assignment_entry(buf: bytearray, end: int, head: int, vtables: dict, index: int,
                      obj: int) -> tuple[int, int]:
    """One ObjectAssignment written below `head`: (the new head, its table's offset)."""
    object_end = end - head
    vtable = [0, 0]
    if index != 0:
        head -= ((head - end) & 3) + 4
        _PACK_I32(buf, head, index)
        vtable[0] = end - head
    if obj != 0:
        head -= ((head - end) & 3) + 4
        _PACK_I32(buf, head, obj)
        vtable[1] = end - head
    return _vtable(buf, end, head, vtables, vtable, object_end)


def _arena(b: flatbuffers.Builder, a: ArenaSection) -> int:
    tensors = _offsets_vector(b, OffsetPlan.StartTensorsVector, _tensors(b, a.offsets))
    strategy = b.CreateString(a.offsets.strategy)
    OffsetPlan.Start(b)
    OffsetPlan.AddStrategy(b, strategy)
    OffsetPlan.AddArenaBytes(b, a.offsets.arena_bytes)
    OffsetPlan.AddLowerBound(b, a.offsets.lower_bound)
    OffsetPlan.AddTensors(b, tensors)
    OffsetPlan.AddOptimal(b, a.offsets.optimal)
    offsets = OffsetPlan.End(b)

    assigned = _offsets_vector(b, ObjectPlan.StartTensorsVector, _assignments(b, a.objects.assignment))
    sizes = _scalar_vector(b, ObjectPlan.StartObjectSizesVector, "PrependInt64", a.objects.object_sizes)
    strategy = b.CreateString(a.objects.strategy)
    ObjectPlan.Start(b)
    ObjectPlan.AddStrategy(b, strategy)
    ObjectPlan.AddTotalBytes(b, a.objects.total_bytes)
    ObjectPlan.AddLowerBound(b, a.objects.lower_bound)
    ObjectPlan.AddObjectSizes(b, sizes)
    ObjectPlan.AddTensors(b, assigned)
    ObjectPlan.AddOptimal(b, a.objects.optimal)
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
    persistent_vec = _offsets_vector(b, Arena.StartPersistentVector, persistent)
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
    """Parse a FlatBuffer plan; PlanError when it is not one or is damaged."""
    return _loads(data, _tensor_entries)


def loads_with_columns(data: bytes, raw: bool = False) -> tuple[PackagePlan, list[dict[str, object]]]:
    """The plan with each offset plan's tensor entries left out (no entries), and those entries
    as columns, one dict per arena (_tensor_fields): what the read-back check compares column by
    column, without 100,000 entry objects. `raw`: texts, shapes and aliases as the bytes and
    numbers stored (_raw_fields), not decoded one entry at a time."""
    columns: list[dict[str, object]] = []

    def keep(data: bytes, vector: int, count: int) -> list[TensorEntry]:
        columns.append((_raw_fields if raw else _tensor_fields)(data, vector, count))
        return []
    return _loads(data, keep, columns), columns


def _loads(data: bytes, tensors_of, columns: list | None = None) -> PackagePlan:
    data = bytes(data)
    if not is_flatbuffer_plan(data):
        raise PlanError("not a FlatBuffer plan file (identifier 'TPLN' missing)")
    try:
        root = Plan.Plan.GetRootAs(data, 0)
        for what, present in (("source", root.Source()), ("format", root.Format())):
            if present is None:
                raise PlanError(f"malformed FlatBuffer plan: no {what}")
        return PackagePlan(
            format=_s(root.Format()), format_version=root.FormatVersion(),
            generator=_s(root.Generator()), source=_source_from(root.Source()),
            semantics=_s(root.Semantics()), alignment=root.Alignment(),
            arenas=tuple(_arena_from(_need(root.Arenas(i), "arena"), tensors_of, columns)
                         for i in _n(root.ArenasLength(), data)),
            symbols=tuple(_symbol_from(_need(root.Symbols(i), "symbol")) for i in _n(root.SymbolsLength(), data)),
            runtime_arena=_runtime_arena_from(root.RuntimeArena()))
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


def _ints(obj, field: str, data_len: int) -> tuple[int, ...]:
    n = getattr(obj, field + "Length")()
    if n < 0 or n * 4 > data_len:
        raise PlanError(f"corrupt FlatBuffer plan: {field} claims {n} entries")
    get = getattr(obj, field)
    return tuple(int(get(i)) for i in range(n))


def _source_from(s) -> SourceModel:
    size = len(s._tab.Bytes)
    return SourceModel(_s(s.File()), _s(s.Sha256()), s.Bytes(), _ints(s, "SubgraphTensorCounts", size))


def _arena_from(a, tensors_of, columns: list | None) -> ArenaSection:
    size = len(a._tab.Bytes)
    off, obj = _need(a.Offsets(), "offset plan"), _need(a.Objects(), "object plan")
    count = _n(off.TensorsLength(), a._tab.Bytes)
    if count:
        tensors = tensors_of(a._tab.Bytes, off._tab.Vector(off._tab.Offset(10)), len(count))
    else:
        tensors = []
        if columns is not None:
            columns.append(None)  # no entries
    count = _n(obj.TensorsLength(), a._tab.Bytes)
    assignment = (_pairs(a._tab.Bytes, obj._tab.Vector(obj._tab.Offset(12)), len(count), _I32)
                  if count else ())
    persistent = tuple(PersistentEntry(p.Index(), p.Subgraph(), p.Tensor(), _s(p.Name()), p.Size())
                       for p in (a.Persistent(i) for i in _n(a.PersistentLength(), a._tab.Bytes)))
    return ArenaSection(
        subgraph=a.Subgraph(), inline=bool(a.Inline()), steps=a.Steps(),
        offsets=OffsetSection(_s(off.Strategy()), off.ArenaBytes(), off.LowerBound(), tuple(tensors),
                              bool(off.Optimal())),
        objects=ObjectSection(_s(obj.Strategy()), obj.TotalBytes(), obj.LowerBound(),
                              _ints(obj, "ObjectSizes", size), assignment, bool(obj.Optimal())),
        persistent=persistent, persistent_bytes=a.PersistentBytes(), passes=_passes_from(a.Passes()))


_U16, _U32 = struct.Struct("<H").unpack_from, struct.Struct("<I").unpack_from
_I32, _I64 = struct.Struct("<i").unpack_from, struct.Struct("<q").unpack_from


def _tensor_entries(data: bytes, vector: int, count: int) -> list[TensorEntry]:
    """The offset plan's tensor entries read straight from the bytes (_tensor_fields)."""
    f = _tensor_fields(data, vector, count)
    numbers = {k: v.tolist() for k, v in f["numbers"].items()}
    return list(map(TensorEntry, numbers["index"], numbers["subgraph"], numbers["tensor"], f["kind"], f["name"],
                    f["type"], f["shape"], numbers["offset"], numbers["size"], numbers["first_op"],
                    numbers["last_op"], f["alias_of"], numbers["pass_"], f["size_expr"]))


def _tensor_fields(data: bytes, vector: int, count: int) -> dict[str, object]:
    """The offset plan's tensor entries read straight from the bytes (vtable slot k at 4 + 2k, as
    schemas/plan.fbs orders TensorEntry's fields), the numbers of all entries at once: the
    generated accessors cost a dozen calls per field, seconds for a plan of 100,000 tensors. Same
    values, defaults and errors as they give. "numbers": int64 arrays by TensorEntry's field
    names; "alias_of" (None for none), "kind", "name", "type", "shape", "size_expr": lists."""
    u8, t, vt, vt_size = _tables(data, vector, count)
    slots = [_slot(u8, vt, vt_size, f) for f in range(14)]

    def number(f: int, dtype: str, default: int = 0) -> np.ndarray:
        return _field(u8, t, slots[f], dtype, default)

    def text(f: int) -> list[str | None]:
        out: list[str | None] = [None] * count
        has, s, n = _strings(u8, t, slots[f], len(data))
        for k, a, b in zip(has.tolist(), (s + 4).tolist(), (s + 4 + n).tolist()):
            out[k] = data[a:b].decode("utf-8")
        return out

    shapes: list[tuple[int, ...]] = [()] * count
    has, v, n = _shapes(u8, t, slots[6], len(data))
    unpack = struct.unpack_from
    for k, start, dims in zip(has.tolist(), (v + 4).tolist(), n.tolist()):
        shapes[k] = unpack(f"<{dims}i", data, start)
    aliases = [None if a == NO_ALIAS else a for a in number(11, "<i4", NO_ALIAS).tolist()]
    kinds, names, types = ([x or "" for x in text(f)] for f in (3, 4, 5))
    numbers = {"index": number(0, "<i4"), "subgraph": number(1, "<i4"), "tensor": number(2, "<i4", -1)}
    numbers.update(offset=number(7, "<i8"), size=number(8, "<i8"), first_op=number(9, "<i4"),
                   last_op=number(10, "<i4"), pass_=number(12, "<i4"))
    return {"numbers": numbers, "alias_of": aliases, "kind": kinds, "name": names, "type": types,
            "shape": shapes, "size_expr": text(13)}


_TEXTS_AT_A_TIME = 1 << 13


def _raw_fields(data: bytes, vector: int, count: int) -> dict[str, object]:
    """As _tensor_fields, with the same bounds checks and defaults, but nothing made per entry:
    "numbers" also holds "alias_of" (NO_ALIAS where absent) and "rank" (a shape's dimensions, 0
    where absent); "dims": every shape's dimensions, one after another; each text field ("kind",
    "name", "type", "size_expr") as (present: bool array, byte lengths (0 where absent), its
    UTF-8 bytes one after another)."""
    u8, t, vt, vt_size = _tables(data, vector, count)
    slots = [_slot(u8, vt, vt_size, f) for f in range(14)]

    def runs(starts: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
        """The byte positions of `width`-byte items, lengths[k] of them from starts[k]."""
        before = np.cumsum(lengths) - lengths
        return np.repeat(starts - width * before, lengths) + width * np.arange(int(lengths.sum()), dtype=np.int64)

    def text(f: int) -> tuple:
        present = slots[f] != 0
        has, s, n = _strings(u8, t, slots[f], len(data))
        lengths = np.zeros(count, dtype=np.int64)
        lengths[has] = n
        # a byte position per byte read: a bounded number of entries at a time (for a whole
        # large plan at once, the positions alone were 16 MB)
        return present, lengths, b"".join([u8[runs(s[a:a + _TEXTS_AT_A_TIME] + 4, n[a:a + _TEXTS_AT_A_TIME], 1)]
                                           .tobytes() for a in range(0, len(has), _TEXTS_AT_A_TIME)])

    has, v, n = _shapes(u8, t, slots[6], len(data))
    rank = np.zeros(count, dtype=np.int64)
    rank[has] = n
    numbers = {"index": _field(u8, t, slots[0], "<i4"), "subgraph": _field(u8, t, slots[1], "<i4"),
               "tensor": _field(u8, t, slots[2], "<i4", -1), "offset": _field(u8, t, slots[7], "<i8"),
               "size": _field(u8, t, slots[8], "<i8"), "first_op": _field(u8, t, slots[9], "<i4"),
               "last_op": _field(u8, t, slots[10], "<i4"), "pass_": _field(u8, t, slots[12], "<i4"),
               "alias_of": _field(u8, t, slots[11], "<i4", NO_ALIAS), "rank": rank}
    return {"count": count, "numbers": numbers, "dims": _gather(u8, runs(v + 4, n, 4), "<i4"),
            **{k: text(f) for k, f in (("kind", 3), ("name", 4), ("type", 5), ("size_expr", 13))}}


def _vectors(u8: np.ndarray, t: np.ndarray, slot: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the entries that have the vector field, where each vector starts, its length)."""
    has = np.flatnonzero(slot)
    v = t[has] + slot[has]
    v = v + _gather(u8, v, "<u4")
    return has, v, _gather(u8, v, "<u4")


def _strings(u8: np.ndarray, t: np.ndarray, slot: np.ndarray, size: int):
    """_vectors of a string field, each checked to end inside the file."""
    has, s, n = _vectors(u8, t, slot)
    if len(s) and int((s + 4 + n).max()) > size:
        raise PlanError("corrupt FlatBuffer plan: a string runs past the end of the file")
    return has, s, n


def _shapes(u8: np.ndarray, t: np.ndarray, slot: np.ndarray, size: int):
    """_vectors of the shape field, no count beyond what the file could hold."""
    has, v, n = _vectors(u8, t, slot)
    if len(n) and int(n.max()) * 4 > size:
        raise PlanError(f"corrupt FlatBuffer plan: Shape claims {int(n.max())} entries")
    return has, v, n


def _gather(u8: np.ndarray, positions: np.ndarray, dtype: str) -> np.ndarray:
    """The little-endian numbers of type `dtype` at these byte positions (struct.error, as
    unpack_from gives, for a position outside the bytes)."""
    width = np.dtype(dtype).itemsize
    if len(positions) and (int(positions.min()) < 0 or int(positions.max()) + width > len(u8)):
        raise struct.error(f"unpack_from requires a buffer of at least {int(positions.max()) + width} bytes")
    if not (positions & (width - 1)).any():  # all aligned (as a FlatBuffer's numbers are): one index each
        return u8[:len(u8) - len(u8) % width].view(dtype)[positions // width].astype(np.int64)
    rows = u8[positions[:, None] + np.arange(width)]
    return np.ascontiguousarray(rows).view(dtype).reshape(-1).astype(np.int64)


def _pairs(data: bytes, vector: int, count: int, second) -> tuple[tuple[int, int], ...]:
    """(index, value) tables of two fields (an int and `second`), read straight from the bytes,
    all entries at once (as _tensor_fields reads the tensors): ObjectAssignment (index, object)
    and PassOffset (index, offset)."""
    u8, t, vt, vt_size = _tables(data, vector, count)
    values = [_field(u8, t, _slot(u8, vt, vt_size, f), dtype).tolist()
              for f, dtype in ((0, "<i4"), (1, "<i4" if second is _I32 else "<i8"))]
    return tuple(zip(*values))


def _tables(data: bytes, vector: int, count: int) -> tuple[np.ndarray, ...]:
    """The bytes as uint8, and for each of the `count` tables of the vector at `vector`: its
    position, its vtable's position and its vtable's size."""
    u8 = np.frombuffer(data, dtype=np.uint8)
    at = vector + 4 * np.arange(count, dtype=np.int64)
    t = at + _gather(u8, at, "<u4")
    vt = t - _gather(u8, t, "<i4")
    return u8, t, vt, _gather(u8, vt, "<u2")


def _slot(u8: np.ndarray, vt: np.ndarray, vt_size: np.ndarray, f: int) -> np.ndarray:
    """Each table's offset of its field f (vtable slot f at 4 + 2f); 0 where the field is absent."""
    slot = np.zeros(len(vt), dtype=np.int64)
    present = 4 + 2 * f < vt_size
    slot[present] = _gather(u8, vt[present] + 4 + 2 * f, "<u2")
    return slot


def _field(u8: np.ndarray, t: np.ndarray, slot: np.ndarray, dtype: str, default: int = 0) -> np.ndarray:
    """Each table's number of one field (`default` where it is absent), as int64."""
    out = np.full(len(t), default, dtype=np.int64)
    has = slot != 0
    out[has] = _gather(u8, t[has] + slot[has], dtype)
    return out


def _passes_from(p) -> PassSection | None:
    if p is None:
        return None
    count = _n(p.TensorsLength(), p._tab.Bytes)
    return PassSection(p.ArenaBytes(), _pairs(p._tab.Bytes, p._tab.Vector(p._tab.Offset(6)), len(count), _I64)
                       if count else ())


def _runtime_arena_from(r) -> RuntimeArena | None:
    if r is None:
        return None
    return RuntimeArena(_s(r.Runtime()), _s(r.Target()), r.ArenaBytes(), r.HeadBytes(), r.TailBytes(),
                        r.SetupBytes(), bool(r.Exact()), bool(r.Modelled()), _s(r.Rule()), _s(r.Reason()),
                        _s(r.HeadPlan()))


def _symbol_from(s) -> SymbolEntry:
    return SymbolEntry(_s(s.Name()), _s(s.Source()), bool(s.DataDependent()), s.Pass_(), s.Min(), s.Max())
