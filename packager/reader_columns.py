"""The reader's fast path: a subgraph's tensor and operator tables read field by field over the
whole vector with numpy (one gather per field instead of a dozen struct calls per table), for the
models of 100,000 operators whose per-table Python work was most of `read`.

Only plain tables are read here. Anything unusual (a position outside the file, an unknown element
type, a stored -1 or another negative dimension, a shape signature, quantization, sparsity, an
index out of range, an operator code that does not exist, control flow) goes back to the
reader's table-by-table path, which reads it and names any error exactly as before; so the model
is the same either way.
"""

from __future__ import annotations

from itertools import repeat
from typing import Callable, NamedTuple

import numpy as np



_WIDTH = {"<i1": 1, "<u1": 1, "<u2": 2, "<i4": 4, "<u4": 4}  # bytes of each type read here


class Unusual(Exception):
    """A vector this path does not read: the table-by-table path reads it instead."""


class Columns:
    """Little-endian numbers at many byte positions of one file at once."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.u8 = np.frombuffer(data, dtype=np.uint8)
        self._aligned: dict[str, np.ndarray] = {}

    def _view(self, dtype: str) -> np.ndarray:
        """The whole file as numbers of one type, for positions that are a multiple of its width."""
        if dtype not in self._aligned:
            width = np.dtype(dtype).itemsize
            self._aligned[dtype] = np.frombuffer(self.data, dtype=dtype, count=len(self.data) // width)
        return self._aligned[dtype]

    def gather(self, positions: np.ndarray, dtype: str) -> np.ndarray:
        width = _WIDTH[dtype]
        if not len(positions):
            return np.zeros(0, dtype=np.int64)
        if int(positions.min()) < 0 or int(positions.max()) + width > len(self.u8):
            raise Unusual()
        if width == 1 or not (positions & (width - 1)).any():  # aligned, as writers place them
            return self._view(dtype)[positions // width if width > 1 else positions].astype(np.int64)
        rows = self.u8[positions[:, None] + np.arange(width)]
        return np.ascontiguousarray(rows).view(dtype).reshape(-1).astype(np.int64)

    def vtables(self, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each table's vtable position and the vtable's size in bytes."""
        vt = tables - self.gather(tables, "<i4")
        return vt, self.gather(vt, "<u2")

    def fields(self, tables: np.ndarray, vtables: tuple[np.ndarray, np.ndarray], slot: int) -> np.ndarray:
        """Absolute position of each table's field in `slot`, 0 where the field is absent."""
        vt, vt_size = vtables
        rel = np.zeros(len(tables), dtype=np.int64)
        inside = slot < vt_size
        rel[inside] = self.gather(vt[inside] + slot, "<u2")
        return np.where(rel != 0, tables + rel, 0)

    def scalars(self, at: np.ndarray, dtype: str, default: int = 0) -> np.ndarray:
        out = np.full(len(at), default, dtype=np.int64)
        present = at != 0
        out[present] = self.gather(at[present], dtype)
        return out

    def refs(self, at: np.ndarray) -> np.ndarray:
        """Where offset fields point to, 0 where absent."""
        out = np.zeros(len(at), dtype=np.int64)
        present = at != 0
        out[present] = at[present] + self.gather(at[present], "<u4")
        return out

    def int32_vectors(self, at: np.ndarray, products: bool = False, shared: bool = False,
                      ids: list[int] | None = None) -> Int32Vectors:
        """The int32 vector each offset field points to, () where absent. Vectors of one length
        are read as one matrix (a model's shapes and operand lists come in few lengths), so the
        Python work is one tuple per vector. `shared`: equal vectors are one tuple (a model has
        few distinct shapes); `ids`: the numbers -1 .. len(ids) - 2 as one list, whose objects the
        tuples then hold instead of new ones (operand lists name tensors; each number a model
        holds costs memory for as long as it runs)."""
        vec = self.refs(at)
        counts = self.scalars(vec, "<u4")
        starts = vec + 4
        if len(vec) and int((starts + 4 * counts).max(initial=0)) > len(self.data):
            raise Unusual()
        rows: list[tuple[int, ...]] = [()] * len(vec)
        lows, highs = np.zeros(len(vec), dtype=np.int64), np.full(len(vec), -1, dtype=np.int64)
        prods = np.ones(len(vec), dtype=np.float64) if products else None
        for count in np.unique(counts).tolist():
            if count == 0:
                continue
            which = np.flatnonzero(counts == count)
            where = (starts[which][:, None] + 4 * np.arange(count, dtype=np.int64)).reshape(-1)
            values = self.gather(where, "<i4").reshape(len(which), count)
            lows[which], highs[which] = values.min(axis=1), values.max(axis=1)
            if prods is not None:  # float: only compared with a limit, never used as a size
                prods[which] = np.prod(values.astype(np.float64), axis=1)
            if ids is not None and int(values.min()) >= -1 and int(values.max()) <= len(ids) - 2:
                columns = [list(map(ids.__getitem__, (column + 1).tolist())) for column in values.T]
            else:
                columns = values.T.tolist()
            tuples = list(zip(*columns))  # zip makes the tuples: no list per row
            if shared:
                known: dict[tuple[int, ...], tuple[int, ...]] = {}
                tuples = [known.setdefault(t, t) for t in tuples]
            if len(which) == len(vec):
                rows = tuples
            else:
                for k, t in zip(which.tolist(), tuples):
                    rows[k] = t
        return Int32Vectors(rows, lows, highs, prods)

    def strings(self, at: np.ndarray) -> list[bytes | None]:
        s = self.refs(at)
        n = self.scalars(s, "<u4")
        if len(s) and int((s + 4 + n).max(initial=0)) > len(self.data):
            raise Unusual()
        data = self.data
        return [data[a + 4:a + 4 + k] if a else None for a, k in zip(s.tolist(), n.tolist())]


class Int32Vectors(NamedTuple):
    rows: list[tuple[int, ...]]
    lows: np.ndarray  # each vector's smallest entry, 0 for an empty one
    highs: np.ndarray  # each vector's largest entry, -1 for an empty one
    products: np.ndarray | None  # each vector's product as a float (1 for an empty one), if asked


class TypeTables(NamedTuple):
    """Element types by their int8 code + 128: the name (None: unknown) and the bits (0: unknown;
    8 for variable-size types, as the size check counts them)."""
    names: list[str | None]
    bits: np.ndarray

    @classmethod
    def of(cls, type_names: dict[int, str], element_bits: dict) -> "TypeTables":
        names = [type_names.get(code - 128) for code in range(256)]
        return cls(names, np.array([(element_bits[n] or 8) if n is not None else 0 for n in names],
                                   dtype=np.float64))


def plain_tensors(cols: Columns, tables: np.ndarray, slots: dict[str, int], types: TypeTables,
                  max_bytes: int, buffer_sizes: np.ndarray, make: type,
                  slow: Callable[[int, int], object]) -> list:
    """The tensors of one subgraph, instances of `make` (a frozen, slotted dataclass: model.Tensor);
    `slow(i, table)` reads tensor i the table-by-table way."""
    t = tables
    vts = cols.vtables(t)
    field = {name: cols.fields(t, vts, slot) for name, slot in slots.items()}
    type_codes = cols.scalars(field["type"], "<i1") + 128  # int8 codes as indexes into the tables
    names_by_code, bits_by_code = types
    shapes = cols.int32_vectors(field["shape"], products=True, shared=True)
    names = cols.strings(field["name"])
    buffer = cols.scalars(field["buffer"], "<u4")
    inside = (buffer > 0) & (buffer < len(buffer_sizes))  # buffer 0 is the empty sentinel
    has_data = inside & (buffer_sizes[np.where(inside, buffer, 0)] > 0) if len(buffer_sizes) else inside
    buffers = buffer.tolist()
    variable = (cols.scalars(field["is_variable"], "<u1") != 0).tolist()
    # Read the table-by-table way (which names any error): a shape signature, quantization,
    # sparsity, an unknown type, a negative dimension, or a size near the 2^63-byte limit (the
    # float product only decides which path reads it; the slow path checks exactly).
    unusual = ((field["signature"] != 0) | (field["quantization"] != 0) | (field["sparsity"] != 0)
               | (bits_by_code[type_codes] == 0) | (shapes.lows < 0)
               | (shapes.products * bits_by_code[type_codes] >= float(max_bytes) * 4))
    n = len(t)
    # make's fields in order (model.Tensor).
    out = list(map(make, *(
        range(n), [name.decode("utf-8", "replace") if name else "" for name in names],
        list(map(names_by_code.__getitem__, type_codes.tolist())), shapes.rows, repeat(None, n),
        buffers, has_data.tolist(), repeat(False, n), variable, repeat(False, n), repeat(0, n),
        repeat((), n))))
    for i in np.flatnonzero(unusual).tolist():  # in order: the first error is the one named
        out[i] = slow(i, int(tables[i]))
    return out


def operator_fields(cols: Columns, tables: list[int], slots: dict[str, int], n_tensors: int,
                    n_opcodes: int) -> tuple[list[int], list[int], list[int], list[tuple[int, ...]],
                                             list[tuple[int, ...]], list[tuple[int, ...]]]:
    """(opcode index, options type, options table, inputs, outputs, intermediates) of each operator;
    Unusual when an index is out of range (the slow path then names it)."""
    t = np.asarray(tables, dtype=np.int64)
    vts = cols.vtables(t)
    field = {name: cols.fields(t, vts, slot) for name, slot in slots.items()}
    opcode = cols.scalars(field["opcode"], "<u4")
    if len(opcode) and int(opcode.max()) >= n_opcodes:
        raise Unusual()
    options_type = cols.scalars(field["options_type"], "<u1").tolist()
    options = cols.refs(field["options"]).tolist()
    lists = []
    ids = list(range(-1, n_tensors))  # one object per tensor id, shared by every operand list
    for name, optional in (("inputs", True), ("outputs", True), ("intermediates", False)):
        vectors = cols.int32_vectors(field[name], ids=ids)
        if len(t) and (int(vectors.highs.max()) >= n_tensors or int(vectors.lows.min()) < (-1 if optional else 0)):
            raise Unusual()
        lists.append(vectors.rows)
    return (opcode.tolist(), options_type, options, *lists)
