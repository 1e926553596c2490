"""bytes -> Model: reads a .tflite flatbuffer once, checks every index, and fails with ModelError.

The generated flatbuffers code does no bounds checking, so every structural failure it can raise
(struct/index/decode errors) is turned into a ModelError, and every vector length is checked
against the file size before it is iterated, so a corrupt length cannot make the reader hang.
"""

from __future__ import annotations

import math
import os
import re
import stat
import struct
from dataclasses import fields, replace
from itertools import repeat
from operator import attrgetter
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

import numpy as np

from packager.errors import ModelError, shown as _shown
from packager.model import (ELEMENT_BITS, MAX_TENSOR_BYTES, Buffer, Model, Operator,
                            OperatorCode, SignatureDef, Subgraph, Tensor)
from packager.reader_operands import check_operands
from packager.reader_columns import Columns, TypeTables, Unusual, operator_fields, plain_tensors
from schemas.tflite import BuiltinOperator, BuiltinOptions, TensorType
from schemas.tflite.Model import Model as FbModel

FILE_IDENTIFIER = b"TFL3"
SUPPORTED_SCHEMA_VERSION = 3
PLACEHOLDER_FOR_GREATER_OP_CODES = 127

_BUILTIN_NAMES = {v: k for k, v in vars(BuiltinOperator.BuiltinOperator).items()
                  if not k.startswith("_")}
_TYPE_NAMES = {v: k for k, v in vars(TensorType.TensorType).items() if not k.startswith("_")}
_OPTION_TABLES = {v: k for k, v in vars(BuiltinOptions.BuiltinOptions).items()
                  if not k.startswith("_") and v != 0}
# Options fields that name subgraphs, by op: what control flow runs.
_SUBGRAPH_FIELDS = {
    "IF": ("then_subgraph_index", "else_subgraph_index"),
    "WHILE": ("cond_subgraph_index", "body_subgraph_index"),
    "CALL_ONCE": ("init_subgraph_index",),
    "CALL": ("subgraph",),
}


def _int32_slots(*fields: str) -> dict[str, int]:
    """'Table.Field' -> the field's vtable slot, taken from the generated accessor's source, which
    must read an int32 vector (so the fast path reads what the generated code would)."""
    import importlib
    import inspect
    out = {}
    for name in fields:
        table, field = name.split(".")
        cls = getattr(importlib.import_module(f"schemas.tflite.{table}"), table)
        source = inspect.getsource(getattr(cls, field + "AsNumpy"))
        match = re.search(r"Offset\((\d+)\)", source)
        if match is None or "Int32Flags" not in source:
            raise RuntimeError(f"schemas.tflite.{name}AsNumpy: not an int32 vector with a slot")
        out[name] = int(match.group(1))
    return out


_SLOT = _int32_slots("Tensor.Shape", "Tensor.ShapeSignature", "Operator.Inputs", "Operator.Outputs",
                     "Operator.Intermediates", "SubGraph.Inputs", "SubGraph.Outputs")
_CORRUPT = (IndexError, struct.error, ValueError, TypeError, UnicodeDecodeError, OverflowError,
            AttributeError, RecursionError, MemoryError)


# FlatBuffers' largest buffer (its offsets are signed 32-bit): no model file is read past it.
LARGEST_FLATBUFFER = (1 << 31) - 1


def read_model(path: str | Path) -> Model:
    """Read a .tflite file. Raises ModelError for anything that is not a readable TFLite model."""
    p = Path(path)
    data = _model_bytes(p)
    try:
        return parse_model(data)
    except ModelError as e:
        raise ModelError(f"{p.name}: {e}") from None


def _model_bytes(p: Path) -> bytes:
    """The file's bytes, read only from a regular file (a device or a pipe may never end), and
    no more than a flatbuffer can be; a file whose identifier is wrong is not read past it
    (parse_model then says why)."""
    try:
        kind = os.stat(p).st_mode
        if stat.S_ISDIR(kind):
            raise ModelError(f"{p}: is a folder, not a .tflite file")
        if not stat.S_ISREG(kind):
            raise ModelError(f"{p}: not a regular file (a device, pipe or socket), so not a .tflite file")
        with open(p, "rb") as f:
            head = f.read(8)
            if len(head) == 8 and head[4:8] != FILE_IDENTIFIER:
                return head
            size = os.fstat(f.fileno()).st_size
            if size > LARGEST_FLATBUFFER:
                raise ModelError(f"{p}: {size:,} bytes, larger than a flatbuffer can be (2 GiB); "
                                 f"tflpack reads models up to that size")
            f.seek(0)
            return f.read(size)  # what the file held when it was opened, however it grows meanwhile
    except OSError as e:
        raise ModelError(f"{p}: cannot read ({e.strerror or e})") from None


def _check_identifier(data: bytes) -> None:
    if len(data) < 8:
        raise ModelError(f"not a TFLite model: the file is {len(data)} bytes, too short for a flatbuffer")
    ident = data[4:8]
    if ident != FILE_IDENTIFIER:
        shown = ident.decode("ascii", "replace") if ident.isascii() and ident.decode("ascii").isprintable() else ident.hex()
        raise ModelError(f"not a TFLite model: file identifier '{shown}', expected 'TFL3'")


def parse_model(data: bytes) -> Model:
    data = bytes(data)
    _check_identifier(data)
    try:
        return _Parser(data).model()
    except ModelError:
        raise
    except _CORRUPT as e:
        raise ModelError(f"corrupt or truncated model: {plain_words(e, len(data))}") from None


def with_tensors_reread(model: Model, data: bytes, subgraph: int, indices: Iterable[int]) -> Model:
    """The model whose bytes are now `data`, where only the tables of the given tensors of one
    subgraph changed (numbers written in place: every position is the same): those tensors are
    read again, everything else is kept. What parse_model(data) gives, without reading the whole
    model a second time."""
    data = bytes(data)
    if len(data) != len(model.raw):
        raise ValueError("with_tensors_reread: the bytes must only change in place")
    try:
        parser = _Parser(data)
        parser.buffers = model.buffers
        tables = parser.tables.tables(parser.fb.Subgraphs(subgraph)._tab.Pos, _SG_TENSORS, "tensors")
        tensors = list(model.subgraphs[subgraph].tensors)
        for i in sorted(set(indices)):
            tensors[i] = parser._tensor(i, tables[i], subgraph)
    except ModelError:
        raise
    except _CORRUPT as e:
        raise ModelError(f"corrupt or truncated model: {plain_words(e, len(data))}") from None
    subgraphs = list(model.subgraphs)
    subgraphs[subgraph] = replace(subgraphs[subgraph], tensors=tuple(tensors))
    return replace(model, subgraphs=tuple(subgraphs), raw=data)


_NEEDS = re.compile(r"at least (\d+) bytes")
_BAD_NUMBER = re.compile(r"bad number (-?\d+)")


def _words(camel: str) -> str:
    """'OperatorCodes' -> 'operator codes'."""
    return re.sub(r"(?<!^)(?=[A-Z])", " ", camel).lower()


def plain_words(error: BaseException, file_size: int) -> str:
    """What a low-level failure inside the flatbuffer means for the user, without Python internals:
    the generated accessors fail with struct, numpy or range errors when an offset or a length
    points outside the file."""
    text = str(error)
    needs = _NEEDS.search(text)
    if isinstance(error, struct.error) and needs:
        return f"the file ends at byte {file_size:,}; the model needs {int(needs.group(1)):,} bytes"
    bad = _BAD_NUMBER.search(text)
    if isinstance(error, TypeError) and bad:
        return (f"a reference leads to byte {int(bad.group(1)):,}, "
                f"outside the {file_size:,}-byte file")
    if isinstance(error, ValueError) and "smaller than requested" in text:
        return f"a list of values runs past the end of the file (byte {file_size:,})"
    if isinstance(error, UnicodeDecodeError):
        return "a name is not valid UTF-8 text"
    if isinstance(error, RecursionError):
        return "its tables refer to each other in a loop"
    if isinstance(error, MemoryError):
        return "a length in the file is too large to be real"
    if isinstance(error, OverflowError):
        return "a number in the file is out of range"
    return "an offset or a length points outside the file"


_U8, _I8, _U16 = struct.Struct("<B").unpack_from, struct.Struct("<b").unpack_from, struct.Struct("<H").unpack_from
_I32, _U32 = struct.Struct("<i").unpack_from, struct.Struct("<I").unpack_from


class _Tables:
    """Tables read straight from the bytes: the generated accessors cost several function calls
    and checks per field, which is most of the reading time of a model with 100,000 operators.
    Slots are the generated code's own (see _slot)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def field(self, table: int, slot: int) -> int:
        """Absolute position of a field's value, 0 when absent."""
        data = self.data
        vtable = table - _I32(data, table)[0]
        if not 0 <= vtable <= len(data) - 4:
            raise ModelError(f"corrupt or truncated model: a table description at byte {vtable:,} "
                             f"lies outside the {len(data):,}-byte file")
        if slot >= _U16(data, vtable)[0]:
            return 0
        rel = _U16(data, vtable + slot)[0]
        return table + rel if rel else 0

    def ref(self, table: int, slot: int) -> int:
        """The position an offset field points to, 0 when absent."""
        at = self.field(table, slot)
        return at + _U32(self.data, at)[0] if at else 0

    def u8(self, table: int, slot: int) -> int:
        at = self.field(table, slot)
        return _U8(self.data, at)[0] if at else 0

    def i8(self, table: int, slot: int) -> int:
        at = self.field(table, slot)
        return _I8(self.data, at)[0] if at else 0

    def u32(self, table: int, slot: int) -> int:
        at = self.field(table, slot)
        return _U32(self.data, at)[0] if at else 0

    def length(self, table: int, slot: int) -> int:
        """The number of entries of a vector field, 0 when absent."""
        at = self.ref(table, slot)
        return _U32(self.data, at)[0] if at else 0

    def tables(self, table: int, slot: int, what: str) -> list[int]:
        """Positions of the tables of a vector field (empty when absent)."""
        return self.table_positions(table, slot, what).tolist()

    def table_positions(self, table: int, slot: int, what: str) -> np.ndarray:
        """tables() as a numpy array, for the column-by-column path."""
        vec = self.ref(table, slot)
        if not vec:
            return np.zeros(0, dtype=np.int64)
        data = self.data
        n = _U32(data, vec)[0]
        if vec + 4 + 4 * n > len(data):
            raise ModelError(f"corrupt or truncated model: the list of {what} claims {n:,} entries, "
                             f"more than the {len(data):,}-byte file can hold")
        starts = np.frombuffer(data, dtype="<u4", count=n, offset=vec + 4).astype(np.int64)
        return vec + 4 + 4 * np.arange(n, dtype=np.int64) + starts

    def string(self, table: int, slot: int) -> bytes | None:
        at = self.ref(table, slot)
        if not at:
            return None
        n = _U32(self.data, at)[0]
        return self.data[at + 4:at + 4 + n]


def _slot(table: str, accessor: str) -> int:
    """The vtable slot the generated accessor `table.accessor` reads."""
    import importlib
    import inspect
    cls = getattr(importlib.import_module(f"schemas.tflite.{table}"), table)
    match = re.search(r"Offset\((\d+)\)", inspect.getsource(getattr(cls, accessor)))
    if match is None:
        raise RuntimeError(f"schemas.tflite.{table}.{accessor}: no vtable slot found")
    return int(match.group(1))


_T_TYPE, _T_BUFFER, _T_NAME = _slot("Tensor", "Type"), _slot("Tensor", "Buffer"), _slot("Tensor", "Name")
_T_QUANT, _T_VARIABLE = _slot("Tensor", "Quantization"), _slot("Tensor", "IsVariable")
_T_SPARSITY = _slot("Tensor", "Sparsity")
_Q_SCALE, _Q_DETAILS_TYPE = _slot("QuantizationParameters", "ScaleIsNone"), _slot("QuantizationParameters", "DetailsType")
_Q_ZERO_POINT = _slot("QuantizationParameters", "ZeroPointIsNone")
_OP_CODE, _OP_OPTIONS_TYPE = _slot("Operator", "OpcodeIndex"), _slot("Operator", "BuiltinOptionsType")
_OP_OPTIONS = _slot("Operator", "BuiltinOptions")
_OP_CUSTOM_OPTIONS = _slot("Operator", "CustomOptionsIsNone")
_SG_TENSORS, _SG_OPERATORS = _slot("SubGraph", "Tensors"), _slot("SubGraph", "Operators")
_TENSOR_SLOTS = {"type": _T_TYPE, "shape": _SLOT["Tensor.Shape"], "name": _T_NAME, "buffer": _T_BUFFER,
                 "is_variable": _T_VARIABLE, "signature": _SLOT["Tensor.ShapeSignature"],
                 "quantization": _T_QUANT, "sparsity": _T_SPARSITY}
_TYPES = TypeTables.of(_TYPE_NAMES, ELEMENT_BITS)
_OPERATOR_SLOTS = {"opcode": _OP_CODE, "options_type": _OP_OPTIONS_TYPE, "options": _OP_OPTIONS,
                   "inputs": _SLOT["Operator.Inputs"], "outputs": _SLOT["Operator.Outputs"],
                   "intermediates": _SLOT["Operator.Intermediates"]}


# The column-by-column path passes these fields by position (reader_columns.plain_tensors,
# _Parser._plain_operators): a change of order in model.py must show here, not as a wrong model.
_POSITIONAL = {Tensor: ("index", "name", "type", "shape", "shape_signature", "buffer", "has_data",
                        "quantized", "is_variable", "sparse", "quant_channels", "unknown_axes"),
               Operator: ("index", "opcode", "inputs", "outputs", "intermediates", "options", "subgraphs")}
for _cls, _names in _POSITIONAL.items():
    if tuple(f.name for f in fields(_cls)) != _names:
        raise RuntimeError(f"model.{_cls.__name__}: fields are not in the order the reader passes them")


class _Parser:
    def __init__(self, data: bytes):
        self.data = data
        self.tables = _Tables(data)
        root = struct.unpack_from("<I", data, 0)[0]
        if root + 4 > len(data):
            raise ModelError(f"corrupt or truncated model: the file ends at byte {len(data):,}; "
                             f"the model needs {root + 4:,} bytes")
        self.fb = FbModel.GetRootAs(data, 0)
        self.columns = Columns(data)

    # -- safe access helpers -------------------------------------------------------------------
    def _count(self, n: int, what: str, min_elem_bytes: int = 4) -> int:
        if n < 0 or n * min_elem_bytes > len(self.data):
            raise ModelError(f"corrupt or truncated model: the list of {_words(what)} claims "
                             f"{n:,} entries, more than the {len(self.data):,}-byte file can hold")
        return n

    def _int32s(self, table: int, slot: int) -> tuple[int, ...]:
        """An int32 vector field read straight from the bytes (the generated AsNumpy accessor
        plus tolist costs several times more, and this runs for every tensor and operator)."""
        at = self.tables.ref(table, slot)
        if not at:
            return ()
        vec = at + 4
        n = _U32(self.data, at)[0]
        if vec + 4 * n > len(self.data):
            raise ModelError(f"corrupt or truncated model: the file ends at byte {len(self.data):,}; "
                             f"the model needs {vec + 4 * n:,} bytes")
        return struct.unpack_from(f"<{n}i", self.data, vec)

    def _ints(self, obj, field: str) -> tuple[int, ...]:
        if getattr(obj, field + "IsNone")():
            return ()
        arr = getattr(obj, field + "AsNumpy")()
        return tuple(int(x) for x in np.asarray(arr).tolist()) if not isinstance(arr, int) else ()

    def _str(self, raw: bytes | None) -> str:
        return raw.decode("utf-8", "replace") if raw else ""

    def _table_vector(self, parent, name: str) -> list:
        n = self._count(getattr(parent, name + "Length")(), name)
        getter: Callable = getattr(parent, name)
        return [getter(i) for i in range(n)]

    # -- the model ------------------------------------------------------------------------------
    def model(self) -> Model:
        fb = self.fb
        version = fb.Version()
        if version != SUPPORTED_SCHEMA_VERSION:
            raise ModelError(f"unsupported TFLite schema version {version} (this tool reads version 3)")
        buffers = tuple(self._buffer(i, b) for i, b in enumerate(self._table_vector(fb, "Buffers")))
        opcodes = tuple(self._opcode(i, c) for i, c in enumerate(self._table_vector(fb, "OperatorCodes")))
        fb_subgraphs = self._table_vector(fb, "Subgraphs")
        if not fb_subgraphs:
            raise ModelError("the model has no subgraph")
        self.buffers = buffers
        subgraphs = tuple(self._subgraph(i, sg, opcodes, len(buffers), len(fb_subgraphs))
                          for i, sg in enumerate(fb_subgraphs))
        metadata = []
        for m in self._table_vector(fb, "Metadata"):
            name, buf = self._str(m.Name()), m.Buffer()
            if buf >= len(buffers):
                raise ModelError(f"metadata '{_shown(name)}' points to buffer {buf}, but the model has {len(buffers)}")
            metadata.append((name, buf))
        signatures = tuple(self._signature(s, subgraphs) for s in self._table_vector(fb, "SignatureDefs"))
        buffer_of = attrgetter("buffer")  # the largest first, over each subgraph's column: one
        # pass in C; the tensor named is the first out of range, as the loop below finds it
        over = any(max(map(buffer_of, sg.tensors), default=-1) >= len(buffers) for sg in subgraphs)
        for t in (t for sg in subgraphs for t in sg.tensors) if over else ():
            if t.buffer >= len(buffers):
                raise ModelError(f"tensor {t.index} '{_shown(t.name)}' points to buffer {t.buffer}, "
                                 f"but the model has {len(buffers)}")
        for sg in subgraphs:
            check_operands(sg)
        return Model(version=version, description=self._str(fb.Description()), subgraphs=subgraphs,
                     buffers=buffers, metadata=tuple(metadata), signature_defs=signatures,
                     raw=self.data)

    def _buffer(self, index: int, b) -> Buffer:
        size = b.DataLength()
        if size:
            start = b._tab.Vector(b._tab.Offset(4))
            if start + size > len(self.data):
                raise ModelError(f"corrupt or truncated model: the file ends at byte {len(self.data):,}; "
                                 f"buffer {index} needs {start + size:,} bytes")
            return Buffer(index, start, size, external=False)
        off, ext_size = b.Offset(), b.Size()
        if off > 1 and ext_size:  # the schema: offsets are only valid when > 1
            if off + ext_size > len(self.data):
                raise ModelError(f"buffer {index} (stored outside the flatbuffer at {off}, "
                                 f"{ext_size} bytes) runs past the end of the file")
            return Buffer(index, off, ext_size, external=True)
        return Buffer(index, 0, 0, external=False, empty_data=not b.DataIsNone())

    def _opcode(self, index: int, c) -> OperatorCode:
        # Old writers only set the byte-sized deprecated field; new ones set both, and codes past
        # 127 live only in builtin_code. The effective code is the larger of the two.
        code = max(int(c.BuiltinCode()), int(c.DeprecatedBuiltinCode()))
        if code not in _BUILTIN_NAMES:
            raise ModelError(f"operator code {index}: unknown builtin operator {code} "
                             f"(newer than this tool's schema?)")
        custom = self._str(c.CustomCode()) if c.CustomCode() is not None else None
        name = _BUILTIN_NAMES[code]
        if name == "CUSTOM":
            name = custom or "CUSTOM"
        return OperatorCode(code, name, custom if _BUILTIN_NAMES[code] == "CUSTOM" else None, c.Version())

    def _tensor(self, index: int, t: int, sg_index: int) -> Tensor:
        tables = self.tables
        type_code = tables.i8(t, _T_TYPE)
        if type_code not in _TYPE_NAMES:
            raise ModelError(f"subgraph {sg_index} tensor {index}: unknown element type {type_code}")
        shape = self._int32s(t, _SLOT["Tensor.Shape"])
        name = self._str(tables.string(t, _T_NAME))
        unknown: tuple[int, ...] = ()
        if any(d < 0 for d in shape):
            shape, unknown = _unknown_axes(shape, f"subgraph {sg_index} tensor {index} '{_shown(name)}'")
        type_name = _TYPE_NAMES[type_code]
        bits = ELEMENT_BITS[type_name] or 8
        if math.prod(shape) * bits > MAX_TENSOR_BYTES * 8:
            raise ModelError(f"subgraph {sg_index} tensor {index} '{_shown(name)}': shape {_shape_text(shape)} "
                             f"of {type_name} needs more than 2^63 bytes")
        signature = (None if not tables.field(t, _SLOT["Tensor.ShapeSignature"])
                     else self._int32s(t, _SLOT["Tensor.ShapeSignature"]))
        if unknown:  # a stored -1 is a resizable dimension whatever the signature says
            signature = tuple(-1 if k in unknown else d for k, d in enumerate(signature or shape))
        q = tables.ref(t, _T_QUANT)
        quantized = bool(q) and (bool(tables.field(q, _Q_SCALE)) or tables.u8(q, _Q_DETAILS_TYPE) != 0)
        scales = tables.length(q, _Q_SCALE) if q else 0
        channels = scales if scales and tables.length(q, _Q_ZERO_POINT) else 0
        buffer = tables.u32(t, _T_BUFFER)
        return Tensor(index=index, name=name, type=type_name, shape=shape,
                      shape_signature=signature, buffer=buffer, has_data=self._has_data(buffer),
                      quantized=quantized, is_variable=bool(tables.u8(t, _T_VARIABLE)),
                      sparse=bool(tables.field(t, _T_SPARSITY)), quant_channels=channels,
                      unknown_axes=unknown)

    def _has_data(self, buffer: int) -> bool:
        """A constant: its buffer holds bytes (buffer 0 is the empty sentinel; a buffer out of
        range is named by model() once every subgraph is read, as it always was)."""
        return 0 < buffer < len(self.buffers) and self.buffers[buffer].size > 0

    def _subgraph(self, index, sg, opcodes, n_buffers, n_subgraphs) -> Subgraph:
        pos = sg._tab.Pos
        tensor_tables = self.tables.table_positions(pos, _SG_TENSORS, "tensors")
        try:
            sizes = np.array([b.size for b in self.buffers], dtype=np.int64)
            tensors = tuple(plain_tensors(self.columns, tensor_tables, _TENSOR_SLOTS, _TYPES, MAX_TENSOR_BYTES,
                                          sizes, Tensor, lambda i, t: self._tensor(i, t, index)))
        except Unusual:
            tensors = tuple(self._tensor(i, t, index) for i, t in enumerate(tensor_tables.tolist()))
        n = len(tensors)

        def check(ids: tuple[int, ...], what: str, optional: bool = False) -> tuple[int, ...]:
            for t in ids:
                if not (0 <= t < n or (optional and t == -1)):
                    raise ModelError(f"subgraph {index}: {what} refers to tensor {t}, "
                                     f"but the subgraph has {n} tensors")
            return ids

        op_tables = self.tables.table_positions(pos, _SG_OPERATORS, "operators")
        ops = self._plain_operators(op_tables, opcodes, n)
        slow_ops: list[Operator] = []
        for i, op in enumerate(op_tables.tolist() if ops is None else ()):
            oi = self.tables.u32(op, _OP_CODE)
            if oi >= len(opcodes):
                raise ModelError(f"subgraph {index} operator {i}: operator code {oi} does not exist "
                                 f"(the model has {len(opcodes)})")
            code = opcodes[oi]
            where = f"operator {i} ({code.name})"
            options = self._options(op)
            refs = tuple(int(options[f]) for f in _SUBGRAPH_FIELDS.get(_BUILTIN_NAMES[code.builtin_code], ())
                         if f in options)
            for r in refs:
                if not 0 <= r < n_subgraphs:
                    raise ModelError(f"subgraph {index} {where} runs subgraph {r}, "
                                     f"but the model has {n_subgraphs}")
            slow_ops.append(Operator(index=i, opcode=code,
                                inputs=check(self._int32s(op, _SLOT["Operator.Inputs"]), where + " input", optional=True),
                                outputs=check(self._int32s(op, _SLOT["Operator.Outputs"]), where + " output", optional=True),
                                intermediates=check(self._int32s(op, _SLOT["Operator.Intermediates"]), where + " intermediate"),
                                options=options, subgraphs=refs))
        ops = slow_ops if ops is None else ops
        self._check_options(index, ops, op_tables)
        return Subgraph(index=index, name=self._str(sg.Name()), tensors=tensors,
                        inputs=check(self._int32s(pos, _SLOT["SubGraph.Inputs"]), "inputs", optional=True),
                        outputs=check(self._int32s(pos, _SLOT["SubGraph.Outputs"]), "outputs", optional=True),
                        operators=tuple(ops))

    def _check_options(self, index: int, ops: list[Operator], op_tables: np.ndarray) -> None:
        """Every operator's options and custom options readable, checked now: options are decoded
        only when a command reads them, and a table that cannot be read must fail every command
        alike, not only the one that happens to read it. All-scalar tables (most) are
        bounds-checked a column at a time; the others, and any the columns doubt, are decoded."""
        kinds, tables, custom = self._option_columns(op_tables)
        size = len(self.data)
        at = np.flatnonzero(custom)  # custom options: a byte vector inside the file
        if len(at):
            fits = custom[at] <= size - 4
            ends = np.full(len(at), size + 1, dtype=np.int64)
            ends[fits] = custom[at][fits] + 4 + self.columns.gather(custom[at][fits], "<u4")
            bad = at[ends > size]
            if len(bad):
                i = int(bad[0])
                raise ModelError(f"corrupt or truncated model: the custom options of subgraph {index} "
                                 f"operator {i} ({_shown(ops[i].name)}) run past the end of the file "
                                 f"(byte {size:,})")
        for kind in np.unique(kinds[tables != 0]).tolist():
            table_name = _OPTION_TABLES.get(kind)
            if table_name is None:
                continue  # an options type this reader does not know: read as none, by anyone
            which = np.flatnonzero((kinds == kind) & (tables != 0))
            layout = _scalar_layout(_option_class(table_name))
            doubtful = which if layout is None else which[~_scalars_inside(self.columns, tables[which], layout)]
            for i in doubtful.tolist():
                try:
                    self.decode_options(table_name, int(tables[i]))
                except ModelError:
                    raise
                except _CORRUPT as e:
                    raise ModelError(f"corrupt or truncated model: the {table_name} of subgraph {index} "
                                     f"operator {i} ({_shown(ops[i].name)}): "
                                     f"{plain_words(e, size)}") from None

    def _option_columns(self, op_tables: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per operator: its options type, its options table, its custom options vector (0: none)."""
        cols = self.columns
        try:
            vts = cols.vtables(op_tables)
            return (cols.scalars(cols.fields(op_tables, vts, _OP_OPTIONS_TYPE), "<u1"),
                    cols.refs(cols.fields(op_tables, vts, _OP_OPTIONS)),
                    cols.refs(cols.fields(op_tables, vts, _OP_CUSTOM_OPTIONS)))
        except Unusual:  # the operators were read one by one: so are these
            tables = op_tables.tolist()
            return (np.array([self.tables.u8(t, _OP_OPTIONS_TYPE) for t in tables], dtype=np.int64),
                    np.array([self.tables.ref(t, _OP_OPTIONS) for t in tables], dtype=np.int64),
                    np.array([self.tables.ref(t, _OP_CUSTOM_OPTIONS) for t in tables], dtype=np.int64))

    def _plain_operators(self, tables: list[int], opcodes: tuple[OperatorCode, ...],
                         n_tensors: int) -> list[Operator] | None:
        """The operators read column by column (reader_columns.py); None when any is unusual, or
        runs a subgraph: the table-by-table loop then reads them all."""
        try:
            codes, kinds, options, inputs, outputs, intermediates = operator_fields(
                self.columns, tables, _OPERATOR_SLOTS, n_tensors, len(opcodes))
        except Unusual:
            return None
        if any(opcodes[c].name in _SUBGRAPH_FIELDS for c in set(codes)):
            return None
        lazy, tables_of = _LazyOptions, _OPTION_TABLES
        n = len(codes)
        return list(map(Operator, range(n), map(opcodes.__getitem__, codes), inputs, outputs, intermediates,
                        [lazy(self, tables_of[kind], table) if table and kind in tables_of else {}
                         for kind, table in zip(kinds, options)], repeat((), n)))

    def _options(self, op: int) -> Mapping[str, object]:
        kind = self.tables.u8(op, _OP_OPTIONS_TYPE)
        table_name = _OPTION_TABLES.get(kind)
        if table_name is None:
            return {}
        table = self.tables.ref(op, _OP_OPTIONS)
        if not table:
            return {}
        return _LazyOptions(self, table_name, table)

    def decode_options(self, table_name: str, table: int) -> dict[str, object]:
        cls = _option_class(table_name)
        layout = _scalar_layout(cls)
        if layout is not None:
            decoded = _scalars(self.data, table, layout)
            if decoded is not None:
                return decoded
        return self.decode_options_generated(table_name, table)

    def decode_options_generated(self, table_name: str, table: int) -> dict[str, object]:
        """decode_options through the generated accessors, field by field."""
        cls = _option_class(table_name)
        obj = cls()
        obj.Init(self.data, table)
        out: dict[str, object] = {}
        for method, field in _option_fields(cls):
            if hasattr(cls, method + "AsNumpy"):
                out[field] = self._ints(obj, method)
            else:
                value = getattr(obj, method)()
                out[field] = self._str(value) if isinstance(value, bytes) else value
        return out

    def _signature(self, s, subgraphs) -> SignatureDef:
        key, sg = self._str(s.SignatureKey()), s.SubgraphIndex()
        if sg >= len(subgraphs):
            raise ModelError(f"signature '{_shown(key)}' points to subgraph {sg}, but the model has {len(subgraphs)}")
        n = len(subgraphs[sg].tensors)

        def tensor_map(name: str) -> dict[str, int]:
            out = {}
            for m in self._table_vector(s, name):
                if m.TensorIndex() >= n:
                    raise ModelError(f"signature '{_shown(key)}' {name.lower()} refer to tensor {m.TensorIndex()}, "
                                     f"but subgraph {sg} has {n} tensors")
                out[self._str(m.Name())] = m.TensorIndex()
            return out

        return SignatureDef(key=key, subgraph=sg, inputs=tensor_map("Inputs"), outputs=tensor_map("Outputs"))


def _shape_text(shape) -> str:
    """A shape as an error message quotes it: a corrupt file's thousands of dimensions cut short."""
    shape = list(shape)
    return str(shape) if len(shape) <= 8 else f"[{', '.join(map(str, shape[:8]))}, ...] ({len(shape):,} dimensions)"


def _unknown_axes(shape: tuple[int, ...], where: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A stored -1 means the size is unknown (some writers store it so); other negative sizes are
    damage. Returns the shape with 1 in the unknown axes, and those axes."""
    if any(d < -1 for d in shape):
        raise ModelError(f"{where}: negative dimension in shape {_shape_text(shape)} (only -1, unknown, "
                         f"has a meaning)")
    return tuple(1 if d == -1 else d for d in shape), tuple(k for k, d in enumerate(shape) if d == -1)


class _LazyOptions(Mapping):
    """An operator's builtin options, decoded on first use: most commands look at few of them,
    and decoding them all is a third of reading a large model. A corrupt options table then
    fails with ModelError where it is first read."""

    __slots__ = ("_parser", "_table_name", "_table", "_decoded")

    def __init__(self, parser: "_Parser", table_name: str, table: int) -> None:
        self._parser, self._table_name, self._table = parser, table_name, table
        self._decoded: dict[str, object] | None = None

    def _dict(self) -> dict[str, object]:
        if self._decoded is None:
            parser = self._parser
            try:
                self._decoded = parser.decode_options(self._table_name, self._table)
            except ModelError:
                raise
            except _CORRUPT as e:
                raise ModelError(f"corrupt or truncated model: the {self._table_name} of an operator: "
                                 f"{plain_words(e, len(parser.data))}") from None
            self._parser = None  # decoded once: the bytes are no longer needed here
        return self._decoded

    def __getitem__(self, key: str) -> object:
        return self._dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())

    def __repr__(self) -> str:
        return repr(self._dict())


_option_class_cache: dict[str, type] = {}


def _option_class(table_name: str) -> type:
    if table_name not in _option_class_cache:
        import importlib
        module = importlib.import_module(f"schemas.tflite.{table_name}")
        _option_class_cache[table_name] = getattr(module, table_name)
    return _option_class_cache[table_name]


_ACCESSOR_SUFFIXES = ("AsNumpy", "Length", "IsNone")
_option_fields_cache: dict[type, list[tuple[str, str]]] = {}


def _option_fields(cls: type) -> list[tuple[str, str]]:
    """(accessor, snake_case field) for each field the generated options class declares (worked
    out once per class: every operator's options are decoded through it)."""
    known = _option_fields_cache.get(cls)
    if known is None:
        names = [n for n, v in vars(cls).items() if callable(v) and n[0].isupper() and n != "Init"
                 and not n.startswith("GetRootAs") and not n.endswith("BufferHasIdentifier")
                 and not n.endswith(_ACCESSOR_SUFFIXES)]
        known = _option_fields_cache[cls] = [(n, re.sub(r"(?<!^)(?=[A-Z])", "_", n).lower()) for n in names]
    return known


# A generated scalar accessor, exactly: its vtable slot, whether it returns bool(...), the number
# type it reads and its default. Options classes whose every field reads so are decoded straight
# from the bytes (the generated accessors cost two table lookups and several calls per field,
# which was most of `inspect` on a model of 100,000 operators); any other goes through them.
_SCALAR_ACCESSOR = re.compile(
    r"def (\w+)\(self\):\s*o = flatbuffers\.number_types\.UOffsetTFlags\.py_type\(self\._tab\.Offset\((\d+)\)\)"
    r"\s*if o != 0:\s*return (bool\()?self\._tab\.Get\(flatbuffers\.number_types\.(\w+)Flags, "
    r"o \+ self\._tab\.Pos\)\)?\s*return ([^\n]+?)\s*$")
_SCALAR_FORMATS = {"Int8": "<b", "Uint8": "<B", "Bool": "<?", "Int16": "<h", "Uint16": "<H",
                   "Int32": "<i", "Uint32": "<I", "Int64": "<q", "Uint64": "<Q",
                   "Float32": "<f", "Float64": "<d"}
_layout_cache: dict[type, tuple | None] = {}


def _scalar_layout(cls: type) -> tuple | None:
    """((field, slot, unpack, width, as bool, default), ...) of an options class whose fields are
    all scalars; None when any field is something else."""
    if cls in _layout_cache:
        return _layout_cache[cls]
    import ast
    import inspect
    layout: list | None = []
    for method, field in _option_fields(cls):
        match = _SCALAR_ACCESSOR.search(inspect.getsource(getattr(cls, method)))
        if match is None or match.group(1) != method or match.group(4) not in _SCALAR_FORMATS:
            layout = None
            break
        try:
            default = ast.literal_eval(match.group(5))
        except (ValueError, SyntaxError):
            layout = None
            break
        unpack = struct.Struct(_SCALAR_FORMATS[match.group(4)])
        layout.append((field, int(match.group(2)), unpack.unpack_from, unpack.size,
                       match.group(3) is not None, default))
    _layout_cache[cls] = None if layout is None else tuple(layout)
    return _layout_cache[cls]


def _scalars_inside(cols: Columns, tables: np.ndarray, layout: tuple) -> np.ndarray:
    """Per table, whether _scalars reads every field of it inside the file (False: doubtful)."""
    size = len(cols.data)
    ok = (tables >= 0) & (tables <= size - 4)
    vt = np.zeros_like(tables)
    vt[ok] = tables[ok] - cols.gather(tables[ok], "<i4") if ok.any() else 0
    ok &= (vt >= 0) & (vt <= size - 2)
    vt_size = np.zeros_like(tables)
    vt_size[ok] = cols.gather(vt[ok], "<u2") if ok.any() else 0
    for _, slot, _, width, _, _ in layout:
        has = ok & (slot < vt_size)
        ok &= ~has | (vt + slot <= size - 2)
        has &= ok
        rel = np.zeros_like(tables)
        rel[has] = cols.gather(vt[has] + slot, "<u2") if has.any() else 0
        ok &= (rel == 0) | (tables + rel <= size - width)
    return ok


def _scalars(data: bytes, table: int, layout: tuple) -> dict[str, object] | None:
    """The fields of an all-scalar options table, read as the generated accessors read them;
    None when any read would leave the file (the generated accessors then fail as they do)."""
    size = len(data)
    if not 0 <= table <= size - 4:
        return None
    vtable = table - _I32(data, table)[0]
    if not 0 <= vtable <= size - 2:
        return None
    vtable_size = _U16(data, vtable)[0]
    out: dict[str, object] = {}
    for field, slot, unpack, width, as_bool, default in layout:
        rel = 0
        if slot < vtable_size:
            if vtable + slot > size - 2:
                return None
            rel = _U16(data, vtable + slot)[0]
        if not rel:
            out[field] = default
            continue
        if table + rel > size - width:
            return None
        value = unpack(data, table + rel)[0]
        out[field] = bool(value) if as_bool else value
    return out
