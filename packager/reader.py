"""bytes -> Model: reads a .tflite flatbuffer once, checks every index, and fails with ModelError.

The generated flatbuffers code does no bounds checking, so every structural failure it can raise
(struct/index/decode errors) is turned into a ModelError, and every vector length is checked
against the file size before it is iterated, so a corrupt length cannot make the reader hang.
"""

from __future__ import annotations

import math
import re
import struct
from pathlib import Path
from typing import Callable

import numpy as np

from packager.errors import ModelError
from packager.model import (ELEMENT_BITS, MAX_TENSOR_BYTES, Buffer, Model, Operator,
                            OperatorCode, SignatureDef, Subgraph, Tensor)
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
_CORRUPT = (IndexError, struct.error, ValueError, TypeError, UnicodeDecodeError, OverflowError,
            AttributeError, RecursionError, MemoryError)


def read_model(path: str | Path) -> Model:
    """Read a .tflite file. Raises ModelError for anything that is not a readable TFLite model."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except IsADirectoryError:
        raise ModelError(f"{p}: is a folder, not a .tflite file") from None
    except OSError as e:
        raise ModelError(f"{p}: cannot read ({e.strerror or e})") from None
    try:
        return parse_model(data)
    except ModelError as e:
        raise ModelError(f"{p.name}: {e}") from None


def parse_model(data: bytes) -> Model:
    data = bytes(data)
    if len(data) < 8:
        raise ModelError(f"not a TFLite model: the file is {len(data)} bytes, too short for a flatbuffer")
    ident = data[4:8]
    if ident != FILE_IDENTIFIER:
        shown = ident.decode("ascii", "replace") if ident.isascii() and ident.decode("ascii").isprintable() else ident.hex()
        raise ModelError(f"not a TFLite model: file identifier '{shown}', expected 'TFL3'")
    try:
        return _Parser(data).model()
    except ModelError:
        raise
    except _CORRUPT as e:
        raise ModelError(f"corrupt or truncated model: {plain_words(e, len(data))}") from None


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


class _Parser:
    def __init__(self, data: bytes):
        self.data = data
        root = struct.unpack_from("<I", data, 0)[0]
        if root + 4 > len(data):
            raise ModelError(f"corrupt or truncated model: the file ends at byte {len(data):,}; "
                             f"the model needs {root + 4:,} bytes")
        self.fb = FbModel.GetRootAs(data, 0)

    # -- safe access helpers -------------------------------------------------------------------
    def _count(self, n: int, what: str, min_elem_bytes: int = 4) -> int:
        if n < 0 or n * min_elem_bytes > len(self.data):
            raise ModelError(f"corrupt or truncated model: the list of {_words(what)} claims "
                             f"{n:,} entries, more than the {len(self.data):,}-byte file can hold")
        return n

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
        subgraphs = tuple(self._subgraph(i, sg, opcodes, len(buffers), len(fb_subgraphs))
                          for i, sg in enumerate(fb_subgraphs))
        metadata = []
        for m in self._table_vector(fb, "Metadata"):
            name, buf = self._str(m.Name()), m.Buffer()
            if buf >= len(buffers):
                raise ModelError(f"metadata '{name}' points to buffer {buf}, but the model has {len(buffers)}")
            metadata.append((name, buf))
        signatures = tuple(self._signature(s, subgraphs) for s in self._table_vector(fb, "SignatureDefs"))
        for t in (t for sg in subgraphs for t in sg.tensors):
            if t.buffer >= len(buffers):
                raise ModelError(f"tensor {t.index} '{t.name}' points to buffer {t.buffer}, "
                                 f"but the model has {len(buffers)}")
        subgraphs = tuple(self._with_constants(sg, buffers) for sg in subgraphs)
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
        return Buffer(index, 0, 0, external=False)

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

    def _tensor(self, index: int, t, sg_index: int) -> Tensor:
        type_code = t.Type()
        if type_code not in _TYPE_NAMES:
            raise ModelError(f"subgraph {sg_index} tensor {index}: unknown element type {type_code}")
        shape = self._ints(t, "Shape")
        name = self._str(t.Name())
        if any(d < 0 for d in shape):
            raise ModelError(f"subgraph {sg_index} tensor {index} '{name}': negative dimension in shape {list(shape)}")
        type_name = _TYPE_NAMES[type_code]
        bits = ELEMENT_BITS[type_name] or 8
        if math.prod(shape) * bits > MAX_TENSOR_BYTES * 8:
            raise ModelError(f"subgraph {sg_index} tensor {index} '{name}': shape {list(shape)} "
                             f"of {type_name} needs more than 2^63 bytes")
        signature = None if t.ShapeSignatureIsNone() else self._ints(t, "ShapeSignature")
        q = t.Quantization()
        quantized = q is not None and (not q.ScaleIsNone() or q.DetailsType() != 0)
        channels = (q.ScaleLength() if q is not None and q.ScaleLength() > 0
                    and q.ZeroPointLength() > 0 else 0)
        return Tensor(index=index, name=name, type=type_name, shape=shape,
                      shape_signature=signature, buffer=t.Buffer(), has_data=False,
                      quantized=quantized, is_variable=bool(t.IsVariable()),
                      sparse=t.Sparsity() is not None, quant_channels=channels)

    def _subgraph(self, index, sg, opcodes, n_buffers, n_subgraphs) -> Subgraph:
        tensors = tuple(self._tensor(i, t, index) for i, t in enumerate(self._table_vector(sg, "Tensors")))
        n = len(tensors)

        def check(ids: tuple[int, ...], what: str, optional: bool = False) -> tuple[int, ...]:
            for t in ids:
                if not (0 <= t < n or (optional and t == -1)):
                    raise ModelError(f"subgraph {index}: {what} refers to tensor {t}, "
                                     f"but the subgraph has {n} tensors")
            return ids

        ops = []
        for i, op in enumerate(self._table_vector(sg, "Operators")):
            oi = op.OpcodeIndex()
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
            ops.append(Operator(index=i, opcode=code,
                                inputs=check(self._ints(op, "Inputs"), where + " input", optional=True),
                                outputs=check(self._ints(op, "Outputs"), where + " output", optional=True),
                                intermediates=check(self._ints(op, "Intermediates"), where + " intermediate"),
                                options=options, subgraphs=refs))
        return Subgraph(index=index, name=self._str(sg.Name()), tensors=tensors,
                        inputs=check(self._ints(sg, "Inputs"), "inputs", optional=True),
                        outputs=check(self._ints(sg, "Outputs"), "outputs", optional=True),
                        operators=tuple(ops))

    def _options(self, op) -> dict[str, object]:
        kind = op.BuiltinOptionsType()
        table_name = _OPTION_TABLES.get(kind)
        if table_name is None:
            return {}
        table = op.BuiltinOptions()
        if table is None:
            return {}
        cls = _option_class(table_name)
        obj = cls()
        obj.Init(table.Bytes, table.Pos)
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
            raise ModelError(f"signature '{key}' points to subgraph {sg}, but the model has {len(subgraphs)}")
        n = len(subgraphs[sg].tensors)

        def tensor_map(name: str) -> dict[str, int]:
            out = {}
            for m in self._table_vector(s, name):
                if m.TensorIndex() >= n:
                    raise ModelError(f"signature '{key}' {name.lower()} refer to tensor {m.TensorIndex()}, "
                                     f"but subgraph {sg} has {n} tensors")
                out[self._str(m.Name())] = m.TensorIndex()
            return out

        return SignatureDef(key=key, subgraph=sg, inputs=tensor_map("Inputs"), outputs=tensor_map("Outputs"))

    @staticmethod
    def _with_constants(sg: Subgraph, buffers: tuple[Buffer, ...]) -> Subgraph:
        from dataclasses import replace
        tensors = tuple(replace(t, has_data=buffers[t.buffer].size > 0) if t.buffer else t for t in sg.tensors)
        return replace(sg, tensors=tensors)


_option_class_cache: dict[str, type] = {}


def _option_class(table_name: str) -> type:
    if table_name not in _option_class_cache:
        import importlib
        module = importlib.import_module(f"schemas.tflite.{table_name}")
        _option_class_cache[table_name] = getattr(module, table_name)
    return _option_class_cache[table_name]


_ACCESSOR_SUFFIXES = ("AsNumpy", "Length", "IsNone")


def _option_fields(cls: type) -> list[tuple[str, str]]:
    """(accessor, snake_case field) for each field the generated options class declares."""
    names = [n for n, v in vars(cls).items() if callable(v) and n[0].isupper() and n != "Init"
             and not n.startswith("GetRootAs") and not n.endswith("BufferHasIdentifier")
             and not n.endswith(_ACCESSOR_SUFFIXES)]
    return [(n, re.sub(r"(?<!^)(?=[A-Z])", "_", n).lower()) for n in names]
