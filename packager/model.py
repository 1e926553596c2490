"""The typed, immutable model the reader builds: subgraphs, tensors, operators, buffers, metadata.

Plain frozen dataclasses, no flatbuffers objects: every later stage works on these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Hashable, Mapping, TypeVar

_T = TypeVar("_T")

# Bits per element of each TensorType (official enum names). None: variable size (strings) or an
# opaque handle (resource, variant); such tensors are allocated dynamically by the runtimes.
ELEMENT_BITS: Mapping[str, int | None] = {
    "FLOAT32": 32, "FLOAT16": 16, "INT32": 32, "UINT8": 8, "INT64": 64, "STRING": None,
    "BOOL": 8, "INT16": 16, "COMPLEX64": 64, "INT8": 8, "FLOAT64": 64, "COMPLEX128": 128,
    "UINT64": 64, "RESOURCE": None, "VARIANT": None, "UINT32": 32, "UINT16": 16, "INT4": 4,
    "BFLOAT16": 16, "INT2": 2, "UINT4": 4,
}

MAX_TENSOR_BYTES = 2**63 - 1  # sizes must fit a signed 64-bit integer, as in the runtimes


@dataclass(frozen=True, slots=True)  # slots: a model of 100,000 operators holds as many of each
class Tensor:
    index: int
    name: str
    type: str  # TensorType name, e.g. "FLOAT32"
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...] | None  # -1 marks a resizable dimension
    buffer: int
    has_data: bool  # its buffer holds bytes: a constant
    quantized: bool
    is_variable: bool
    sparse: bool
    # Scale entries when the quantization has both scales and zero points (TFLite Micro copies the
    # zero points of such a tensor into its arena); 0 otherwise.
    quant_channels: int = 0
    # Axes the file stores as -1 (size unknown): `shape` holds 1 there and `shape_signature` -1,
    # so the size comes from --dim (dynamic/shapes.py), never from the placeholder.
    unknown_axes: tuple[int, ...] = ()

    @property
    def num_elements(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int | None:
        """Bytes the runtimes allocate for it; None for variable-size types (strings, handles)."""
        bits = ELEMENT_BITS[self.type]
        if bits is None:
            return None
        return -(-math.prod(self.shape) * bits // 8)  # num_elements, inlined: asked for every tensor

    @property
    def is_constant(self) -> bool:
        return self.has_data

    @property
    def is_dynamic_shape(self) -> bool:
        return self.shape_signature is not None and any(d < 0 for d in self.shape_signature)


@dataclass(frozen=True)
class OperatorCode:
    builtin_code: int  # effective code: max(builtin_code, deprecated_builtin_code)
    name: str  # builtin enum name, or the custom code for CUSTOM ops
    custom_code: str | None
    version: int

    @property
    def is_custom(self) -> bool:
        return self.custom_code is not None and self.name == self.custom_code


@dataclass(frozen=True, slots=True)
class Operator:
    index: int
    opcode: OperatorCode
    inputs: tuple[int, ...]  # -1 marks an omitted optional input
    outputs: tuple[int, ...]
    intermediates: tuple[int, ...]
    options: Mapping[str, object]  # decoded builtin options (the fields our schema declares)
    subgraphs: tuple[int, ...]  # subgraphs a control-flow op runs (IF, WHILE, CALL_ONCE, CALL)

    @property
    def name(self) -> str:
        return self.opcode.name


@dataclass(frozen=True)
class Subgraph:
    index: int
    name: str
    tensors: tuple[Tensor, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    operators: tuple[Operator, ...]


@dataclass(frozen=True)
class Buffer:
    index: int
    offset: int  # where its bytes start in the file (inside the flatbuffer or after it)
    size: int
    external: bool  # stored after the flatbuffer (offset/size fields), as in models over 2 GB
    # A data vector present but empty: TFLite reads the tensor as a read-only constant of 0 bytes
    # (converters write these for zero-element shape inputs).
    empty_data: bool = False


@dataclass(frozen=True)
class SignatureDef:
    key: str
    subgraph: int
    inputs: Mapping[str, int]
    outputs: Mapping[str, int]


@dataclass(frozen=True)
class Model:
    version: int
    description: str
    subgraphs: tuple[Subgraph, ...]
    buffers: tuple[Buffer, ...]
    metadata: tuple[tuple[str, int], ...]  # (name, buffer index)
    signature_defs: tuple[SignatureDef, ...]
    raw: bytes = field(repr=False)

    def buffer_bytes(self, index: int) -> bytes:
        b = self.buffers[index]
        return self.raw[b.offset:b.offset + b.size]

    def metadata_bytes(self, name: str) -> bytes | None:
        for entry, buf in self.metadata:
            if entry == name:
                return self.buffer_bytes(buf)
        return None

    @property
    def main(self) -> Subgraph:
        return self.subgraphs[0]


def derived(model: Model, key: Hashable, compute: Callable[[], _T]) -> _T:
    """What `compute` derives from the model, computed once per model and `key`: a command asks
    for the same analysis several times (planning, then checking the plan), and the model is
    immutable. Kept beside the model (not a field: equality and repr are unchanged); callers must
    not modify what they get."""
    cache = model.__dict__.setdefault("_derived", {})
    if key not in cache:
        cache[key] = compute()
    return cache[key]



def tensor_bytes(model: Model, subgraph: int) -> list[int | None]:
    """Tensor.nbytes of every tensor of a subgraph, in order, worked out once per model: the
    lifetimes, TFLite Micro's whole arena and the plan check each ask for all of them."""
    def compute() -> list[int | None]:
        bits_of, prod = ELEMENT_BITS, math.prod
        out: list[int | None] = []
        seen: dict[int, int] = {}  # one object per distinct size: the list lives as long as the model
        for t in model.subgraphs[subgraph].tensors:
            bits = bits_of[t.type]
            out.append(seen.setdefault(n := -(-prod(t.shape) * bits // 8), n) if bits is not None else None)
        return out
    return derived(model, ("tensor bytes", subgraph), compute)


def operators_named(model: Model, subgraph: int, name: str) -> list[Operator]:
    """The operators of a subgraph that run `name` (Operator.name), in order: the kernel rules
    look for a few op kinds (VAR_HANDLE, ASSIGN_VARIABLE) among every node of large models."""
    def compute() -> dict[str, list[Operator]]:
        out: dict[str, list[Operator]] = {}
        for op in model.subgraphs[subgraph].operators:
            out.setdefault(op.opcode.name, []).append(op)
        return out
    return derived(model, ("operators by name", subgraph), compute).get(name, [])
