"""A flatbuffers.Builder that writes the very same bytes with less work per field.

The library's Builder checks every number's range and goes through five calls per scalar field;
a plan of 100,000 tensors has 1.4 million fields, which took most of `package`'s time at that
size. The methods the plan writer uses are redone here on the same state (head, minalign, vtable
cache, nesting), in the same order, so the output is byte-identical (tests compare both)."""

from __future__ import annotations

import struct

import flatbuffers

_PACK_U8, _PACK_U16 = struct.Struct("<B").pack_into, struct.Struct("<H").pack_into
_PACK_I32, _PACK_U32 = struct.Struct("<i").pack_into, struct.Struct("<I").pack_into
_PACK_I64 = struct.Struct("<q").pack_into


class LeanBuilder(flatbuffers.Builder):
    def Prep(self, size: int, additionalBytes: int) -> None:
        if size > self.minalign:
            self.minalign = size
        head = self.head
        buf_len = len(self.Bytes)
        align = (-(buf_len - head + additionalBytes)) & (size - 1)
        needed = align + size + additionalBytes
        while head < needed:
            old = buf_len
            self.GrowByteBuffer()
            buf_len = len(self.Bytes)
            head += buf_len - old
        if align:
            self.Bytes[head - align:head] = bytes(align)
            head -= align
        self.head = head

    def _scalar(self, pack, width: int, x: int) -> None:
        self.Prep(width, 0)
        self.head -= width
        pack(self.Bytes, self.head, x)

    def PrependInt32(self, x: int) -> None:
        self._scalar(_PACK_I32, 4, x)

    def PrependInt64(self, x: int) -> None:
        self._scalar(_PACK_I64, 8, x)

    def PrependVOffsetT(self, x: int) -> None:
        self._scalar(_PACK_U16, 2, x)

    def PrependInt32Slot(self, o: int, x: int, d: int) -> None:
        if x != d or (self.forceDefaults and d is not None):
            self._scalar(_PACK_I32, 4, x)
            self.current_vtable[o] = len(self.Bytes) - self.head

    def PrependInt64Slot(self, o: int, x: int, d: int) -> None:
        if x != d or (self.forceDefaults and d is not None):
            self._scalar(_PACK_I64, 8, x)
            self.current_vtable[o] = len(self.Bytes) - self.head

    def PrependBoolSlot(self, o: int, x: bool, d: bool) -> None:
        if x != d or (self.forceDefaults and d is not None):
            self._scalar(_PACK_U8, 1, bool(x))
            self.current_vtable[o] = len(self.Bytes) - self.head

    def PrependUOffsetTRelative(self, off: int) -> None:
        self.Prep(4, 0)
        here = len(self.Bytes) - self.head
        if not off <= here:
            raise flatbuffers.builder.OffsetArithmeticError("flatbuffers: Offset arithmetic error.")
        self.head -= 4
        _PACK_U32(self.Bytes, self.head, here - off + 4)

    def PrependUOffsetTRelativeSlot(self, o: int, x: int, d: int) -> None:
        if x != d or self.forceDefaults:
            self.PrependUOffsetTRelative(x)
            self.current_vtable[o] = len(self.Bytes) - self.head

    def PrependSOffsetTRelative(self, off: int) -> None:
        self.Prep(4, 0)
        here = len(self.Bytes) - self.head
        if not off <= here:
            raise flatbuffers.builder.OffsetArithmeticError("flatbuffers: Offset arithmetic error.")
        self.head -= 4
        _PACK_I32(self.Bytes, self.head, here - off + 4)

    def CreateString(self, s, encoding: str = "utf-8", errors: str = "strict") -> int:
        self.assertNotNested()
        x = s.encode(encoding, errors) if isinstance(s, str) else bytes(s)
        n = len(x)
        self.Prep(4, n + 1)
        head = self.head - 1 - n
        self.Bytes[head:head + n + 1] = x + b"\x00"
        head -= 4
        _PACK_U32(self.Bytes, head, n)
        self.head = head
        return len(self.Bytes) - head

    def WriteVtable(self) -> int:
        self.PrependSOffsetTRelative(0)
        object_offset = len(self.Bytes) - self.head
        vtable = self.current_vtable
        # The library's key: field offsets from the last present field back, then the size.
        last = len(vtable)
        while last and vtable[last - 1] == 0:
            last -= 1
        fields = [object_offset - e if e else 0 for e in vtable[:last]]
        object_size = object_offset - self.objectEnd
        key = (*reversed(fields), object_size)
        existing = self.vtables.get(key)
        if existing is None:
            for off in reversed(fields):
                self.PrependVOffsetT(off)
            self.PrependVOffsetT(object_size)
            self.PrependVOffsetT((last + 2) * 2)
            here = len(self.Bytes) - self.head
            _PACK_I32(self.Bytes, len(self.Bytes) - object_offset, here - object_offset)
            self.vtables[key] = here
        else:
            self.head = len(self.Bytes) - object_offset
            _PACK_I32(self.Bytes, self.head, existing - object_offset)
        self.current_vtable = None
        return object_offset
