"""Add (or replace) a named metadata buffer in a .tflite file while keeping every original byte.

Re-serialising through our schema subset would silently drop the fields the subset lacks, so the
file is patched instead. The new file is

    [prefix: new root Model table, new `buffers` and `metadata` vectors, the new Buffer and
     Metadata tables, the payload]  +  [the original file, byte for byte]

The new root copies the old root's fields: `version` by value, every other field as an offset to
the old object, now `len(prefix)` bytes further on. FlatBuffers offsets are unsigned and point
forward, which is why everything new goes in front. The prefix length is a multiple of 64, so
constant data keeps its alignment (the schema asks for 16). The old root table stays in the file,
unreferenced.

Refused, with a clear error: size-prefixed files, and buffers stored outside the flatbuffer
(`offset`/`size` fields count from the file start, so shifting the file would break them).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from packager.errors import ModelError

FILE_IDENTIFIER = b"TFL3"
PREFIX_ALIGNMENT = 64  # keeps every original byte at the same position modulo 64
PAYLOAD_ALIGNMENT = 16  # Buffer.data is (force_align: 16) in the TFLite schema

# Field ids of the TFLite schema tables we touch (their order in schema.fbs).
MODEL_VERSION, MODEL_BUFFERS, MODEL_METADATA = 0, 4, 6
MODEL_FIELD_COUNT = 8  # version ... signature_defs; a root with more is newer than we know
BUFFER_DATA, BUFFER_OFFSET, BUFFER_SIZE = 0, 1, 2
METADATA_NAME, METADATA_BUFFER = 0, 1


# -- reading ---------------------------------------------------------------------------------

def _u32(data: bytes, pos: int) -> int:
    return struct.unpack_from("<I", data, pos)[0]


def _table_fields(data: bytes, table: int) -> dict[int, int]:
    """field id -> absolute position of the field's value, for the fields present in the table."""
    vtable = table - struct.unpack_from("<i", data, table)[0]
    vt_size = struct.unpack_from("<H", data, vtable)[0]
    fields = {}
    for field_id in range((vt_size - 4) // 2):
        rel = struct.unpack_from("<H", data, vtable + 4 + 2 * field_id)[0]
        if rel:
            fields[field_id] = table + rel
    return fields


def _deref(data: bytes, pos: int) -> int:
    return pos + _u32(data, pos)


def _table_vector(data: bytes, field_pos: int) -> list[int]:
    """Absolute positions of the tables of a vector of tables."""
    vec = _deref(data, field_pos)
    n = _u32(data, vec)
    if vec + 4 + 4 * n > len(data):
        raise ModelError("corrupt model: a vector runs past the end of the file")
    return [_deref(data, vec + 4 + 4 * i) for i in range(n)]


def _string(data: bytes, field_pos: int) -> bytes:
    s = _deref(data, field_pos)
    n = _u32(data, s)
    return bytes(data[s + 4:s + 4 + n])


@dataclass(frozen=True)
class _Root:
    position: int
    fields: dict[int, int]
    buffers: list[int]  # Buffer table positions
    metadata: list[tuple[bytes, int, int]]  # (name, buffer index, Metadata table position)


def _read_root(data: bytes) -> _Root:
    if len(data) < 8:
        raise ModelError("not a TFLite model: too short")
    if data[4:8] != FILE_IDENTIFIER:
        if len(data) >= 12 and data[8:12] == FILE_IDENTIFIER:
            raise ModelError("size-prefixed .tflite files are not supported: the offline plan "
                             "cannot be added without re-serialising the model")
        raise ModelError("not a TFLite model: file identifier is not 'TFL3'")
    try:
        root = _u32(data, 0)
        fields = _table_fields(data, root)
        unknown = sorted(f for f in fields if f >= MODEL_FIELD_COUNT)
        if unknown:
            raise ModelError(f"the model's root table has fields {unknown} that this packager does "
                             "not know (a newer schema): it cannot be patched without losing them")
        if MODEL_BUFFERS not in fields:
            raise ModelError("the model has no buffers vector")
        buffers = _table_vector(data, fields[MODEL_BUFFERS])
        for index, b in enumerate(buffers):
            bf = _table_fields(data, b)
            offset = struct.unpack_from("<Q", data, bf[BUFFER_OFFSET])[0] if BUFFER_OFFSET in bf else 0
            if offset > 1:
                raise ModelError(f"buffer {index} is stored outside the flatbuffer (offset/size "
                                 "fields, as in models over 2 GB); adding a prefix would break it")
        metadata = []
        if MODEL_METADATA in fields:
            for m in _table_vector(data, fields[MODEL_METADATA]):
                mf = _table_fields(data, m)
                name = _string(data, mf[METADATA_NAME]) if METADATA_NAME in mf else b""
                buf = _u32(data, mf[METADATA_BUFFER]) if METADATA_BUFFER in mf else 0
                metadata.append((name, buf, m))
    except struct.error:
        raise ModelError("corrupt or truncated model: a table points past the end of the file") from None
    return _Root(root, fields, buffers, metadata)


# -- writing ---------------------------------------------------------------------------------

class _ForwardWriter:
    """Writes the prefix front to back. Offsets to objects written later are filled in at the
    end, as are offsets into the original file (whose start is the final prefix length)."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self._to_label: list[tuple[int, str]] = []
        self._to_old: list[tuple[int, int]] = []
        self._labels: dict[str, int] = {}

    def pad_to(self, multiple: int, shift: int = 0) -> None:
        """Pad until (position + shift) is a multiple of `multiple`."""
        while (len(self.buf) + shift) % multiple:
            self.buf.append(0)

    def mark(self, label: str) -> None:
        self._labels[label] = len(self.buf)

    def u32(self, value: int) -> None:
        self.buf += struct.pack("<I", value)

    def ref(self, label: str) -> None:
        self._to_label.append((len(self.buf), label))
        self.u32(0)

    def ref_old(self, old_position: int) -> None:
        self._to_old.append((len(self.buf), old_position))
        self.u32(0)

    def table(self, label: str, fields: list[tuple[str, object]]) -> None:
        """A table of 4-byte fields in id order: ('u32', value), ('ref', label), ('old', pos)
        or None for an absent field. Its vtable goes right before it."""
        self.pad_to(2)
        vtable = len(self.buf)
        n = len(fields)
        present = [f for f in fields if f is not None]
        slot = {}
        for k, f in enumerate(fields):
            if f is not None:
                slot[k] = 4 + 4 * len(slot)
        self.buf += struct.pack("<HH", 4 + 2 * n, 4 + 4 * len(present))
        for k in range(n):
            self.buf += struct.pack("<H", slot.get(k, 0))
        self.pad_to(4)
        self.mark(label)
        self.buf += struct.pack("<i", len(self.buf) - vtable)
        for f in present:
            kind, value = f
            {"u32": self.u32, "ref": self.ref, "old": self.ref_old}[kind](value)

    def finish(self) -> bytes:
        self.pad_to(PREFIX_ALIGNMENT)
        size = len(self.buf)
        for at, label in self._to_label:
            target = self._labels[label]
            assert target > at, "offsets must point forward"
            struct.pack_into("<I", self.buf, at, target - at)
        for at, old in self._to_old:
            struct.pack_into("<I", self.buf, at, size + old - at)
        return bytes(self.buf)


def set_metadata_buffer(data: bytes, name: str, payload: bytes) -> bytes:
    """The model with metadata entry `name` pointing to a new buffer holding `payload`. An existing
    entry of that name keeps its buffer index; that buffer now holds the payload."""
    data = bytes(data)
    root = _read_root(data)
    key = name.encode("utf-8")
    reused = sorted({buf for entry, buf, _ in root.metadata if entry == key})
    for buf in reused:
        if buf >= len(root.buffers):
            raise ModelError(f"metadata '{name}' points to buffer {buf}, but the model has "
                             f"{len(root.buffers)}")
    buffer_refs: list[tuple[str, object]] = [("ref", "payload_buffer") if i in reused else ("old", b)
                                             for i, b in enumerate(root.buffers)]
    metadata_refs: list[tuple[str, object]] = [("old", m) for _, _, m in root.metadata]
    if not reused:
        new_index = len(root.buffers)
        buffer_refs.append(("ref", "payload_buffer"))
        metadata_refs.append(("ref", "payload_metadata"))

    w = _ForwardWriter()
    w.ref("root")
    w.buf += FILE_IDENTIFIER
    model_fields: list[tuple[str, object] | None] = []
    for field_id in range(MODEL_FIELD_COUNT):
        pos = root.fields.get(field_id)
        if field_id == MODEL_VERSION:
            model_fields.append(None if pos is None else ("u32", _u32(data, pos)))
        elif field_id == MODEL_BUFFERS:
            model_fields.append(("ref", "buffers"))
        elif field_id == MODEL_METADATA:
            model_fields.append(("ref", "metadata"))
        else:
            model_fields.append(None if pos is None else ("old", _deref(data, pos)))
    w.table("root", model_fields)
    for label, refs in (("buffers", buffer_refs), ("metadata", metadata_refs)):
        w.pad_to(4)
        w.mark(label)
        w.u32(len(refs))
        for kind, value in refs:
            w.ref(value) if kind == "ref" else w.ref_old(value)  # type: ignore[arg-type]
    w.table("payload_buffer", [("ref", "payload_data")])
    if not reused:
        w.table("payload_metadata", [("ref", "payload_name"), ("u32", new_index)])
        w.pad_to(4)
        w.mark("payload_name")
        w.u32(len(key))
        w.buf += key + b"\0"
    w.pad_to(PAYLOAD_ALIGNMENT, shift=4)  # the bytes after the length start 16-aligned
    w.mark("payload_data")
    w.u32(len(payload))
    w.buf += payload
    return w.finish() + data


def metadata_buffer(data: bytes, name: str) -> bytes | None:
    """The bytes of the last metadata entry called `name` (the one TFLite Micro ends up using)."""
    root = _read_root(bytes(data))
    found = None
    for entry, buf, _ in root.metadata:
        if entry == name.encode("utf-8"):
            found = buf
    if found is None:
        return None
    fields = _table_fields(data, root.buffers[found])
    if BUFFER_DATA not in fields:
        return b""
    vec = _deref(data, fields[BUFFER_DATA])
    return bytes(data[vec + 4:vec + 4 + _u32(data, vec)])


def patched_payload(packed: bytes, original: bytes, name: str) -> bytes:
    """Check that `packed` is `original` with metadata `name` set, without reading the model again:
    the original bytes follow the prefix untouched, and the new root, buffers and metadata point
    to the original objects (shifted by the prefix) except for the one buffer and entry added.
    Returns the payload of `name`. Work grows with the buffers and metadata, not the graph."""
    prefix = len(packed) - len(original)
    if prefix <= 0 or prefix % PREFIX_ALIGNMENT or packed[prefix:] != original:
        raise ModelError("the original bytes do not follow the new prefix unchanged")
    old, new = _read_root(bytes(original)), _read_root(packed)
    for field_id in range(MODEL_FIELD_COUNT):
        if field_id in (MODEL_BUFFERS, MODEL_METADATA):
            continue
        if (field_id in old.fields) != (field_id in new.fields):
            raise ModelError(f"root field {field_id} is present in only one of the two models")
        if field_id not in old.fields:
            continue
        if field_id == MODEL_VERSION:
            same = _u32(original, old.fields[field_id]) == _u32(packed, new.fields[field_id])
        else:
            same = _deref(packed, new.fields[field_id]) == _deref(original, old.fields[field_id]) + prefix
        if not same:
            raise ModelError(f"root field {field_id} differs from the original's")
    key = name.encode("utf-8")
    replaced = {buf for entry, buf, _ in old.metadata if entry == key}
    kept = [(entry, buf, pos + prefix) for entry, buf, pos in old.metadata if entry != key]
    if [m for m in new.metadata if m[0] != key] != kept:
        raise ModelError("the metadata other than the plan differ from the original's")
    added = 0 if replaced else 1
    if len(new.buffers) != len(old.buffers) + added:
        raise ModelError(f"{len(new.buffers)} buffers where {len(old.buffers) + added} were expected")
    for i, pos in enumerate(old.buffers):
        if i not in replaced and new.buffers[i] != pos + prefix:
            raise ModelError(f"buffer {i} is not the original's")
    payload = metadata_buffer(packed, name)
    if payload is None:
        raise ModelError(f"the model has no {name} entry")
    return payload
