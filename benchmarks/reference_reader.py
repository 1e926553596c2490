"""A plain struct-based reader of what `package` needs from a .tflite file: each tensor's type,
shape, name and buffer, each operator's code and its input and output tensors. No checks, no
typed model, no options: the floor a reader in Python can reach, timed beside the real reader by
the scale benchmark (the issue's target: the real one within twice this).

Vtable slots are the generated code's (schemas/tflite), as the real reader takes them.
"""

from __future__ import annotations

import struct
from pathlib import Path

from packager.reader import _SLOT, _slot  # the generated accessors' own slots

_U16, _I32, _U32 = struct.Struct("<H").unpack_from, struct.Struct("<i").unpack_from, struct.Struct("<I").unpack_from
_I8 = struct.Struct("<b").unpack_from

_T_TYPE, _T_BUFFER, _T_NAME = _slot("Tensor", "Type"), _slot("Tensor", "Buffer"), _slot("Tensor", "Name")
_T_SHAPE = _SLOT["Tensor.Shape"]
_OP_CODE, _OP_INPUTS, _OP_OUTPUTS = _slot("Operator", "OpcodeIndex"), _SLOT["Operator.Inputs"], _SLOT["Operator.Outputs"]
_SG_TENSORS, _SG_OPERATORS = _slot("SubGraph", "Tensors"), _slot("SubGraph", "Operators")
_M_SUBGRAPHS = _slot("Model", "Subgraphs")


def read_reference(path: str | Path) -> list[tuple[list[tuple], list[tuple]]]:
    """Per subgraph: tensors as (type code, shape, name, buffer), operators as (opcode index,
    inputs, outputs)."""
    data = Path(path).read_bytes()

    def field(table: int, slot: int) -> int:
        vt = table - _I32(data, table)[0]
        if slot >= _U16(data, vt)[0]:
            return 0
        rel = _U16(data, vt + slot)[0]
        return table + rel if rel else 0

    def ref(table: int, slot: int) -> int:
        at = field(table, slot)
        return at + _U32(data, at)[0] if at else 0

    def tables(table: int, slot: int) -> list[int]:
        vec = ref(table, slot)
        if not vec:
            return []
        n = _U32(data, vec)[0]
        return [vec + 4 + 4 * k + o for k, o in enumerate(struct.unpack_from(f"<{n}I", data, vec + 4))]

    def int32s(table: int, slot: int) -> tuple[int, ...]:
        vec = ref(table, slot)
        return struct.unpack_from(f"<{_U32(data, vec)[0]}i", data, vec + 4) if vec else ()

    def scalar(table: int, slot: int, unpack) -> int:
        at = field(table, slot)
        return unpack(data, at)[0] if at else 0

    def name(table: int) -> bytes:
        at = ref(table, _T_NAME)
        return data[at + 4:at + 4 + _U32(data, at)[0]] if at else b""

    root = _U32(data, 0)[0]
    out = []
    for sg in tables(root, _M_SUBGRAPHS):
        tensors = [(scalar(t, _T_TYPE, _I8), int32s(t, _T_SHAPE), name(t), scalar(t, _T_BUFFER, _U32))
                   for t in tables(sg, _SG_TENSORS)]
        ops = [(scalar(op, _OP_CODE, _U32), int32s(op, _OP_INPUTS), int32s(op, _OP_OUTPUTS))
               for op in tables(sg, _SG_OPERATORS)]
        out.append((tensors, ops))
    return out
