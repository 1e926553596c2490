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
        writes.append((pos, "str", j))
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


def write_tensor_tables(buf: bytearray, end: int, head: int, vtables: dict, tensors, encoded,
                        one_by_one) -> tuple[int, list[int]] | None:
    """(the new head, each entry's table offset), the entries written below `head` (room made
    already); None when a value does not fit its field (the caller then writes one by one and
    the builder's range error stands). `one_by_one(head, i)` writes entry i as the builder
    would and returns (head, offset)."""
    try:
        columns = _columns(tensors)
    except OverflowError:
        return None
    if columns is None:
        return None
    return _write(buf, end, head, vtables, tensors, encoded, one_by_one, columns)


def _columns(tensors) -> dict | None:
    n = len(tensors)
    columns = {
        "index": np.fromiter((t.index for t in tensors), np.int64, n),
        "subgraph": np.fromiter((t.subgraph for t in tensors), np.int64, n),
        "tensor": np.fromiter((t.tensor for t in tensors), np.int64, n),
        "first_op": np.fromiter((t.first_op for t in tensors), np.int64, n),
        "last_op": np.fromiter((t.last_op for t in tensors), np.int64, n),
        "alias_of": np.fromiter((-1 if t.alias_of is None else t.alias_of for t in tensors),
                                np.int64, n),
        "pass_": np.fromiter((t.pass_ for t in tensors), np.int64, n),
    }
    columns["offset"] = np.fromiter((t.offset for t in tensors), np.int64, n)
    columns["size"] = np.fromiter((t.size for t in tensors), np.int64, n)
    dims = np.fromiter(chain.from_iterable(t.shape for t in tensors), np.int64)
    if any(c.size and (c.min() < _I32[0] or c.max() > _I32[1])
           for c in (*(columns[k] for k in _I32_SLOTS.values()), dims)):
        return None
    return columns


def _write(buf, end, head, vtables, tensors, encoded, one_by_one, columns):
    n = len(tensors)
    nonzero = {k: columns[k] != d for k, d in (("index", 0), ("subgraph", 0), ("tensor", -1),
                                               ("offset", 0), ("size", 0), ("first_op", 0),
                                               ("last_op", 0), ("alias_of", -1), ("pass_", 0))}
    present = np.stack([nonzero[k] for k in ("index", "subgraph", "tensor", "offset", "size",
                                             "first_op", "last_op", "alias_of", "pass_")], 1)
    presence = present.dot(1 << np.arange(9)).tolist()
    bits = [tuple(bool(m >> i & 1) for i in range(9)) for m in range(512)]
    # Each entry's layout but for its phase, numbered in order of first use (an int: a cheap key).
    numbers: dict[tuple, int] = {}
    classes = [numbers.setdefault((len(s[0]), len(s[1]), len(s[2]), None if s[3] is None else len(s[3]),
                                   len(t.shape), m), len(numbers))
               for s, t, m in zip(encoded, tensors, presence)]
    kinds = list(numbers)

    def layout_of(c: int, pos: int) -> Layout:
        kind = kinds[c]
        return layout(kind[:4], kind[4], bits[kind[5]], pos)

    return _write_tables(buf, end, head, vtables, classes, 7, layout_of, one_by_one, columns, tensors, encoded)


def _write_tables(buf, end: int, head: int, vtables: dict, classes: list[int], phase: int, layout_of,
                  one_by_one, columns: dict, tensors=None, encoded=None) -> tuple[int, list[int]]:
    """Entries 0..n-1 below `head`, as the builder would write them one after another: (the new
    head, each entry's table offset). `classes[i]` numbers entry i's layout but for where it
    starts, whose phase (pos & `phase`, at most 7) completes it; `layout_of(class, pos)` works that
    layout out. The first entry of each vtable goes through `one_by_one` (so vtable sharing is
    the builder's own); the rest are grouped by layout and written a group at a time."""
    n = len(classes)
    layouts: dict[int, Layout] = {}
    ready: dict[int, Layout] = {}  # layouts whose vtable is in the cache already
    keys = [-1] * n  # each entry's layout and phase (class * 8 + phase); -1: written one by one
    starts = [0] * n
    out = [0] * n
    pos = end - head
    for i, c in enumerate(classes):
        key = c << 3 | (pos & phase)
        lay = ready.get(key)
        if lay is None:
            lay = layouts.get(key)
            if lay is None:
                lay = layouts[key] = layout_of(c, pos)
            if lay.vtable_key not in vtables:  # the first of its vtable: as the builder does
                head, out[i] = one_by_one(end - pos, i)
                pos = end - head
                continue
            ready[key] = lay
        starts[i] = pos
        out[i] = pos + lay.object_offset
        pos += lay.size
        keys[i] = key
    view = np.frombuffer(buf, np.uint8)
    try:
        for key, members in _groups(keys):
            _write_group(view, end, layouts[key], members, starts, tensors, encoded, columns,
                         vtables)
    finally:
        del view
    return end - pos, out


def _groups(keys: list[int]) -> list[tuple[int, list[int]]]:
    """(key, the positions holding it in increasing order) for each key but -1."""
    if not keys:
        return []
    by_key = np.argsort(np.asarray(keys, np.int64), kind="stable")
    ordered = np.asarray(keys, np.int64)[by_key]
    cuts = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
    bounds = [0, *cuts.tolist(), len(keys)]
    return [(int(ordered[a]), by_key[a:b].tolist()) for a, b in zip(bounds, bounds[1:]) if ordered[a] != -1]


def _write_group(view: np.ndarray, end: int, lay: Layout, members: list[int], starts: list[int],
                 tensors, encoded, columns: dict, vtables: dict) -> None:
    """The entries `members` (of one layout, starting at `starts`) written in place, a row each."""
    k, size = len(members), lay.size
    index = np.asarray(members, np.int64)
    first = np.asarray([starts[i] for i in members], np.int64)  # pos where each entry starts
    rows = np.zeros((k, size), np.uint8)
    for p, what, arg in lay.writes:
        column = size - p  # the part's first byte, counted from the entry's lowest byte
        if what == "str":
            width = len(encoded[members[0]][arg])
            if width:
                rows[:, column:column + width] = np.frombuffer(
                    b"".join([encoded[i][arg] for i in members]), np.uint8).reshape(k, width)
        elif what == "u32":
            rows[:, column:column + 4] = np.frombuffer(np.uint32(arg).astype("<u4").tobytes(),
                                                       np.uint8)
        elif what == "dim":
            dims = np.asarray([tensors[i].shape[arg] for i in members], "<i4")
            rows[:, column:column + 4] = dims.view(np.uint8).reshape(k, 4)
        elif what == "i32":
            values = columns[arg][index].astype("<i4")
            rows[:, column:column + 4] = values.view(np.uint8).reshape(k, 4)
        elif what == "i64":
            values = columns[arg][index].astype("<i8")
            rows[:, column:column + 8] = values.view(np.uint8).reshape(k, 8)
        else:  # the soffset to the shared vtable: its position minus the table's
            values = (vtables[lay.vtable_key] - (first + lay.object_offset)).astype("<i4")
            rows[:, column:column + 4] = values.view(np.uint8).reshape(k, 4)
    low = end - (first + size)  # each entry's lowest byte in the buffer
    if k > 1 and bool(np.all(np.diff(low) == -size)):  # back to back, each below the one before
        view[int(low[-1]):int(low[0]) + size] = rows[::-1].reshape(-1)
        return
    # Else a byte index per byte written, a bounded number of rows at a time: for a whole large
    # plan at once, the index alone was 80 MB.
    for a in range(0, k, _ROWS_AT_A_TIME):
        part = low[a:a + _ROWS_AT_A_TIME]
        view[(part[:, None] + np.arange(size)).reshape(-1)] = rows[a:a + _ROWS_AT_A_TIME].reshape(-1)


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
        index = np.fromiter((a for a, _ in assignment), np.int64, n)
        obj = np.fromiter((o for _, o in assignment), np.int64, n)
    except OverflowError:
        return None
    if n and (min(index.min(), obj.min()) < _I32[0] or max(index.max(), obj.max()) > _I32[1]):
        return None
    columns = {"index": index, "object": obj}
    masks = ((index != 0) + 2 * (obj != 0)).tolist()
    return _write_tables(buf, end, head, vtables, masks, 3, assignment_layout, one_by_one, columns)
