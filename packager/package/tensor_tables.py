"""The plan FlatBuffer's TensorEntry tables written with numpy, same bytes as one by one.

An entry's bytes depend on its strings' lengths, its shape's rank, which scalar fields differ
from their defaults (a "layout") and on where it starts modulo 8 (the padding before the 64-bit
fields): entries with the same layout and phase have the same bytes at the same places, apart
from the values. One pass over the entries finds where each starts (a table of layouts, no
bytes written); entries of one (layout, phase) are then written together, a row each. An entry
whose vtable is not written yet goes one by one (plan_flatbuffer._tensor_entry), so the vtable
sharing is the builder's.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np

_I32 = (-2**31, 2**31 - 1)
_I32_SLOTS = {0: "index", 1: "subgraph", 2: "tensor", 9: "first_op", 10: "last_op",
              11: "alias_of", 12: "pass_"}


@dataclass(frozen=True)
class Layout:
    """Where an entry's parts lie, as distances from the buffer's end relative to where the
    entry starts (`pos`: the builder's len(Bytes) - head)."""

    size: int  # bytes the entry takes, padding included
    writes: tuple  # (distance after writing, what, argument) per part
    object_offset: int  # the table's offset, relative
    vtable_key: tuple  # the builder's vtable cache key


def layout(str_lens: tuple, ndims: int, present: tuple, pos: int) -> Layout:
    """The steps of plan_flatbuffer._tensor_entry, positions only. `present`: slots 0, 1, 2,
    7, 8, 9, 10, 11, 12 differ from their defaults."""
    start = pos
    writes = []
    refs = []
    for j, n in enumerate(str_lens):
        if n is None:
            refs.append(0)
            continue
        pos += (-(pos + n + 1)) & 3
        pos += n + 1
        writes.append((pos, "str", (j, n)))
        pos += 4
        writes.append((pos, "u32", n))
        refs.append(pos)
    pos += (-pos) & 3
    for d in reversed(range(ndims)):
        pos += 4
        writes.append((pos, "dim", d))
    pos += 4
    writes.append((pos, "u32", ndims))
    object_end = shape_ref = pos
    vtable = [0] * 14
    has = dict(zip((0, 1, 2, 7, 8, 9, 10, 11, 12), present))
    for slot in (0, 1, 2):
        if has[slot]:
            pos += ((-pos) & 3) + 4
            writes.append((pos, "i32", _I32_SLOTS[slot]))
            vtable[slot] = pos
    for slot, off in ((3, refs[0]), (4, refs[1]), (5, refs[2]), (6, shape_ref)):
        pos += (-pos) & 3
        here = pos
        pos += 4
        writes.append((pos, "u32", here - off + 4))
        vtable[slot] = pos
    for slot in (7, 8):
        if has[slot]:
            pos += ((-pos) & 7) + 8
            writes.append((pos, "i64", "offset" if slot == 7 else "size"))
            vtable[slot] = pos
    for slot in (9, 10, 11, 12):
        if has[slot]:
            pos += ((-pos) & 3) + 4
            writes.append((pos, "i32", _I32_SLOTS[slot]))
            vtable[slot] = pos
    if refs[3]:
        pos += (-pos) & 3
        here = pos
        pos += 4
        writes.append((pos, "u32", here - refs[3] + 4))
        vtable[13] = pos
    return _closed(start, object_end, pos, writes, vtable)


def _closed(start: int, object_end: int, pos: int, writes: list, vtable: list[int]) -> Layout:
    """The builder's EndObject, positions only: the soffset to the vtable, then the vtable's
    fields (trailing zero fields trimmed) as the key tables of one shape share."""
    pos += ((-pos) & 3) + 4
    object_offset = pos
    writes.append((pos, "soffset", None))
    last = len(vtable)
    while last and vtable[last - 1] == 0:
        last -= 1
    fields = [object_offset - e if e else 0 for e in vtable[:last]]
    return Layout(pos - start, tuple((p - start, what, arg) for p, what, arg in writes),
                  object_offset - start, (*reversed(fields), object_offset - object_end))


def write_tensor_tables(buf: bytearray, end: int, head: int, vtables: dict, columns,
                        one_by_one) -> tuple[int, list[int]] | None:
    """(the new head, each entry's table offset), the entries written below `head` (room made
    already); None when a value does not fit its field (the caller then writes one by one and
    the builder's range error stands). `columns`: the entries' TensorColumns (package/columns.py),
    their texts taken as UTF-8 from it. `one_by_one(head, i)` writes entry i as the builder
    would and returns (head, offset)."""
    numbers = {k: columns[k] for k in ("index", "subgraph", "tensor", "offset", "size", "first_op",
                                       "last_op", "pass_")}
    try:
        numbers["alias_of"] = columns.alias_numbers()
        rank, dims = columns.ranks(), columns.dims()
    except OverflowError:
        return None
    if any(c.size and (c.min() < _I32[0] or c.max() > _I32[1])
           for c in (*(numbers[k] for k in _I32_SLOTS.values()), dims)):
        return None
    present = np.stack([numbers[k] != d for k, d in (
        ("index", 0), ("subgraph", 0), ("tensor", -1), ("offset", 0), ("size", 0), ("first_op", 0),
        ("last_op", 0), ("alias_of", -1), ("pass_", 0))], 1)
    strings = [columns.utf8(k) for k in ("kind", "name", "type", "size_expr")]
    lengths = [texts.lengths for texts in strings]  # -1: absent
    rows = np.stack([*lengths, rank, present.dot(1 << np.arange(9))], 1)
    base_of, first = _row_ids(rows)
    bases = [tuple(b) for b in rows[first].tolist()]
    bits = [tuple(bool(m >> i & 1) for i in range(9)) for m in range(512)]

    def layout_of(base: int, pos: int) -> Layout:
        l0, l1, l2, l3, r, mask = bases[base]
        return layout((l0, l1, l2, None if l3 < 0 else l3), r, bits[mask], pos)

    texts = [_Texts(column) for column in strings]
    dim_at = np.cumsum(rank) - rank

    def part(what: str, arg, members: np.ndarray, width: int) -> np.ndarray:
        """The bytes of one part of the entries `members`, a row each."""
        if what == "str":
            return texts[arg].rows(members, width)
        if what == "dim":
            return dims[dim_at[members] + arg].astype("<i4").view(np.uint8).reshape(-1, 4)
        if what == "i32":
            return numbers[arg][members].astype("<i4").view(np.uint8).reshape(-1, 4)
        return numbers[arg][members].astype("<i8").view(np.uint8).reshape(-1, 8)  # i64

    return _write_by_base(buf, end, head, vtables, base_of.tolist(), len(bases), 8,
                          layout_of, one_by_one, part)


def _row_ids(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's number among the distinct rows, and the first row of each number: one column
    at a time (np.unique over whole rows sorts them as bytes, many times slower)."""
    ids = np.zeros(len(rows), np.int64)
    for column in rows.T:
        _, within = np.unique(column, return_inverse=True)
        _, ids = np.unique(ids * (int(within.max(initial=0)) + 1) + within.reshape(-1), return_inverse=True)
        ids = ids.reshape(-1)
    _, first = np.unique(ids, return_index=True)
    return ids, first


class _Texts:
    """One text column's UTF-8 bytes run together, to take rows of one width from at once."""

    def __init__(self, column) -> None:
        self.bytes = np.frombuffer(column.data, np.uint8)
        size = np.maximum(column.lengths, 0)
        self.start = np.cumsum(size) - size

    def rows(self, members: np.ndarray, width: int) -> np.ndarray:
        return self.bytes[self.start[members][:, None] + np.arange(width)]


def _write_by_base(buf, end: int, head: int, vtables: dict, base_of: list[int], n_bases: int,
                   phases: int, layout_of, one_by_one, part) -> tuple[int, list[int]]:
    """Entries 0..n-1 below `head`, as the builder would write them one after another: (the new
    head, each entry's table offset). An entry's layout is its base (`base_of[i]`: string
    lengths, rank, fields present) and where it starts modulo `phases` (its alignment);
    `layout_of(base, pos)` works a layout out. The first entry of each vtable goes through
    `one_by_one` (so vtable sharing is the builder's own); the rest are grouped by layout and
    written a group at a time, `part(what, arg, members, width)` giving a part's bytes."""
    n = len(base_of)
    layouts: dict[int, Layout] = {}
    sizes: list = [None] * (n_bases * phases)  # per layout whose vtable is written already: its size
    codes = [0] * n  # base * phases + phase; -1: written one by one
    starts = [0] * n
    alone: dict[int, int] = {}  # entry -> table offset, for those written one by one
    pos = end - head
    for i, base in enumerate(base_of):
        code = base * phases + pos % phases
        size = sizes[code]
        if size is None:
            lay = layouts.get(code)
            if lay is None:
                lay = layouts[code] = layout_of(base, pos)
            if lay.vtable_key not in vtables:  # the first of its vtable: as the builder does
                head, alone[i] = one_by_one(end - pos, i)
                pos = end - head
                codes[i] = -1
                continue
            size = sizes[code] = lay.size
        starts[i] = pos
        codes[i] = code
        pos += size
    code_of, start_of = np.asarray(codes, np.int64), np.asarray(starts, np.int64)
    table = np.zeros(n, np.int64)
    view = np.frombuffer(buf, np.uint8)
    try:
        for code in np.unique(code_of[code_of >= 0]).tolist():
            lay = layouts[code]
            members = np.flatnonzero(code_of == code)
            first = start_of[members]
            table[members] = first + lay.object_offset
            _write_group(view, end, lay, first, members, part, vtables)
    finally:
        del view
    for i, offset in alone.items():
        table[i] = offset
    return end - pos, table.tolist()


def _write_group(view: np.ndarray, end: int, lay: Layout, first: np.ndarray, members: np.ndarray,
                 part, vtables: dict) -> None:
    """The entries `members` (of one layout, starting at `first`) written in place, a row each."""
    k, size = len(members), lay.size
    rows = np.zeros((k, size), np.uint8)
    for p, what, arg in lay.writes:
        column = size - p  # the part's first byte, counted from the entry's lowest byte
        if what == "u32":
            rows[:, column:column + 4] = np.frombuffer(np.uint32(arg).astype("<u4").tobytes(),
                                                       np.uint8)
        elif what == "soffset":  # to the shared vtable: its position minus the table's
            values = (vtables[lay.vtable_key] - (first + lay.object_offset)).astype("<i4")
            rows[:, column:column + 4] = values.view(np.uint8).reshape(k, 4)
        elif what == "str":
            j, width = arg
            if width:
                rows[:, column:column + width] = part(what, j, members, width)
        else:
            width = 8 if what == "i64" else 4
            rows[:, column:column + width] = part(what, arg, members, width)
    low = end - (first + size)  # each entry's lowest byte in the buffer
    if k > 1 and bool(np.all(np.diff(low) == -size)):  # back to back, each below the one before
        view[int(low[-1]):int(low[0]) + size] = rows[::-1].reshape(-1)
        return
    # Else a byte index per byte written, a bounded number of rows at a time: for a whole large
    # plan at once, the index alone was 80 MB.
    for a in range(0, k, _ROWS_AT_A_TIME):
        part_low = low[a:a + _ROWS_AT_A_TIME]
        view[(part_low[:, None] + np.arange(size)).reshape(-1)] = rows[a:a + _ROWS_AT_A_TIME].reshape(-1)


_ROWS_AT_A_TIME = 4096


# -- ObjectAssignment tables: an index and an object, each written when not 0 -------------------

def assignment_layout(mask: int, pos: int) -> Layout:
    """plan_flatbuffer._assignments' steps for one table, positions only (mask: bit 0 the
    index differs from 0, bit 1 the object)."""
    start = object_end = pos
    writes, vtable = [], [0, 0]
    for slot, name in ((0, "index"), (1, "object")):
        if mask >> slot & 1:
            pos += ((-pos) & 3) + 4
            writes.append((pos, "i32", name))
            vtable[slot] = pos
    return _closed(start, object_end, pos, writes, vtable)


def write_assignment_tables(buf: bytearray, end: int, head: int, vtables: dict, assignment,
                            one_by_one) -> tuple[int, list[int]] | None:
    """As write_tensor_tables, for (index, object) pairs; `one_by_one(head, i)` writes pair i
    as the builder would."""
    n = len(assignment)
    try:
        pairs = np.fromiter(chain.from_iterable(assignment), np.int64, 2 * n).reshape(n, 2)
    except OverflowError:
        return None
    index, obj = pairs[:, 0].copy(), pairs[:, 1].copy()
    if n and (min(index.min(), obj.min()) < _I32[0] or max(index.max(), obj.max()) > _I32[1]):
        return None
    columns = {"index": index, "object": obj}
    masks = ((index != 0) + 2 * (obj != 0)).tolist()
    return _write_by_base(buf, end, head, vtables, masks, 4, 4, assignment_layout, one_by_one,
                          lambda what, arg, members, width: columns[arg][members].astype("<i4")
                          .view(np.uint8).reshape(-1, 4))
