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

import math
import struct
from typing import Callable

import numpy as np


class Unusual(Exception):
    """A vector this path does not read: the table-by-table path reads it instead."""


class Columns:
    """Little-endian numbers at many byte positions of one file at once."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.u8 = np.frombuffer(data, dtype=np.uint8)

    def gather(self, positions: np.ndarray, dtype: str) -> np.ndarray:
        width = np.dtype(dtype).itemsize
        if not len(positions):
            return np.zeros(0, dtype=np.int64)
        if int(positions.min()) < 0 or int(positions.max()) + width > len(self.u8):
            raise Unusual()
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

    def int32_vectors(self, at: np.ndarray) -> list[tuple[int, ...]]:
        """The int32 vector each offset field points to, () where absent."""
        vec = self.refs(at)
        counts = self.scalars(vec, "<u4")
        starts = vec + 4
        if len(vec) and int((starts + 4 * counts).max(initial=0)) > len(self.data):
            raise Unusual()
        total = int(counts.sum())
        firsts = np.cumsum(counts) - counts
        where = np.repeat(starts, counts) + 4 * (np.arange(total, dtype=np.int64) - np.repeat(firsts, counts))
        flat = self.gather(where, "<i4").tolist()
        ends = (firsts + counts).tolist()
        return [tuple(flat[a:b]) for a, b in zip(firsts.tolist(), ends)]

    def strings(self, at: np.ndarray) -> list[bytes | None]:
        s = self.refs(at)
        n = self.scalars(s, "<u4")
        if len(s) and int((s + 4 + n).max(initial=0)) > len(self.data):
            raise Unusual()
        data = self.data
        return [data[a + 4:a + 4 + k] if a else None for a, k in zip(s.tolist(), n.tolist())]


def plain_tensors(cols: Columns, tables: list[int], slots: dict[str, int], type_names: dict[int, str],
                  element_bits: dict, max_bytes: int, make: Callable, slow: Callable[[int, int], object]) -> list:
    """The tensors of one subgraph; `slow(i, table)` reads tensor i the table-by-table way."""
    t = np.asarray(tables, dtype=np.int64)
    vts = cols.vtables(t)
    field = {name: cols.fields(t, vts, slot) for name, slot in slots.items()}
    type_codes = cols.scalars(field["type"], "<i1").tolist()
    shapes = cols.int32_vectors(field["shape"])
    names = cols.strings(field["name"])
    buffers = cols.scalars(field["buffer"], "<u4").tolist()
    variable = cols.scalars(field["is_variable"], "<u1").tolist()
    unusual = ((field["signature"] != 0) | (field["quantization"] != 0) | (field["sparsity"] != 0)).tolist()
    out = []
    for i, (code, shape, name, buffer, var, odd) in enumerate(zip(type_codes, shapes, names, buffers,
                                                                    variable, unusual)):
        type_name = type_names.get(code)
        if odd or type_name is None or (shape and min(shape) < 0):
            out.append(slow(i, tables[i]))
            continue
        if math.prod(shape) * (element_bits[type_name] or 8) > max_bytes * 8:
            out.append(slow(i, tables[i]))  # it names the error
            continue
        out.append(make(index=i, name=name.decode("utf-8", "replace") if name else "", type=type_name,
                        shape=shape, shape_signature=None, buffer=buffer, has_data=False, quantized=False,
                        is_variable=bool(var), sparse=False, quant_channels=0, unknown_axes=()))
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
    for name, optional in (("inputs", True), ("outputs", True), ("intermediates", False)):
        vectors = cols.int32_vectors(field[name])
        flat = [i for v in vectors for i in v]
        if flat and (max(flat) >= n_tensors or min(flat) < (-1 if optional else 0)):
            raise Unusual()
        lists.append(vectors)
    return (opcode.tolist(), options_type, options, *lists)


