"""JSON written piece by piece, exactly the text of `json.dumps(doc, indent=2, sort_keys=True)`
(or of `ensure_ascii=False`), so that a document with millions of entries is never held whole:
neither its text nor its entries as Python objects. A long list of objects that share one set of
keys is a `Rows`, held as columns and written a slice of rows at a time from one template.

The standard library writes an indented document with its pure-Python encoder, which for a plan
of 100,000 tensors per strategy means seconds of work and gigabytes of intermediate objects."""

from __future__ import annotations

from collections.abc import Sequence
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any, Callable, Iterable, Iterator, Mapping

_INDENT = "  "
ROWS_PER_PIECE = 4096  # a few hundred kilobytes of text per piece: cheap to join, small to hold
FLUSH_AT = 1 << 20  # characters gathered before one write


class Rows(Sequence):
    """A JSON list of objects with the same keys, held as equally long columns (key -> values).
    As a Python sequence, each row reads as a dict."""

    __slots__ = ("columns", "shared", "_length")

    def __init__(self, columns: Mapping[Any, Sequence], shared: Iterable = ()) -> None:
        """`shared` names columns that other Rows of the same document hold too (the very same
        objects, unchanged while written): their texts are made once and kept until the end."""
        if not columns:
            raise ValueError("Rows needs at least one column")
        lengths = {len(values) for values in columns.values()}
        if len(lengths) != 1:
            raise ValueError(f"Rows columns differ in length: {sorted(lengths)}")
        self.columns = dict(columns)
        self.shared = frozenset(shared)
        self._length = lengths.pop()

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._length))]
        if not -self._length <= i < self._length:
            raise IndexError("Rows index out of range")
        return {key: values[i] for key, values in self.columns.items()}

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Rows, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # a list, not a value


def dumps(doc: Any, ensure_ascii: bool = True) -> str:
    """The whole text at once (for small documents and tests)."""
    return "".join(iter_json(doc, ensure_ascii))


def write_json(doc: Any, write: Callable[[str], Any], ensure_ascii: bool = True, end: str = "\n") -> None:
    """The text of `doc` followed by `end`, passed to `write` in pieces of about FLUSH_AT characters."""
    gathered: list[str] = []
    size = 0
    for piece in iter_json(doc, ensure_ascii):
        gathered.append(piece)
        size += len(piece)
        if size >= FLUSH_AT:
            write("".join(gathered))
            gathered.clear()
            size = 0
    gathered.append(end)
    write("".join(gathered))


def iter_json(doc: Any, ensure_ascii: bool = True) -> Iterator[str]:
    """The text of `doc` (dicts, lists, tuples, Rows, str, int, float, bool, None) in pieces."""
    return _Encoder(encode_basestring_ascii if ensure_ascii else encode_basestring).pieces(doc, 0)


def scalar_text(v: Any, encode: Callable[[str], str]) -> str | None:
    """The text of a scalar, in the order of the standard library's checks; None for the rest."""
    if isinstance(v, str):
        return encode(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return int.__repr__(v)
    if isinstance(v, float):
        return _float(v)
    return None


def _float(v: float) -> str:
    if v != v:
        return "NaN"
    if v == float("inf"):
        return "Infinity"
    if v == -float("inf"):
        return "-Infinity"
    return float.__repr__(v)


def _key(k: Any, encode: Callable[[str], str]) -> str:
    """A dict key as the standard library turns it into a string."""
    if isinstance(k, str):
        return encode(k)
    if isinstance(k, float):
        return encode(_float(k))
    if k is True:
        return '"true"'
    if k is False:
        return '"false"'
    if k is None:
        return '"null"'
    if isinstance(k, int):
        return encode(int.__repr__(k))
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def _int_texts(values: Sequence) -> Iterator[str] | None:
    """The texts of values that are all plain ints (not bools), else None."""
    if set(map(type, values)) == {int}:
        return map(int.__repr__, values)
    return None


class _Encoder:
    """One document's writing: the string encoder, and the texts of the shared columns of Rows
    (rendered once however many Rows hold them; they live as long as the document)."""

    def __init__(self, encode: Callable[[str], str]) -> None:
        self.encode = encode
        self.shared: dict[tuple[int, int, int], list[str]] = {}

    def pieces(self, v: Any, level: int) -> Iterator[str]:
        text = scalar_text(v, self.encode)
        if text is not None:
            yield text
        elif isinstance(v, (list, tuple)):
            yield from self.array(v, level)
        elif isinstance(v, dict):
            yield from self.object(v, level)
        elif isinstance(v, Rows):
            yield from self.rows(v, level)
        else:
            raise TypeError(f"Object of type {v.__class__.__name__} is not JSON serializable")

    def object(self, d: dict, level: int) -> Iterator[str]:
        if not d:
            yield "{}"
            return
        inner = "\n" + _INDENT * (level + 1)
        first = True
        for key, value in sorted(d.items()):
            yield ("{" if first else ",") + inner + _key(key, self.encode) + ": "
            first = False
            yield from self.pieces(value, level + 1)
        yield "\n" + _INDENT * level + "}"

    def array(self, items: list | tuple, level: int) -> Iterator[str]:
        if not items:
            yield "[]"
            return
        inner = "\n" + _INDENT * (level + 1)
        texts = _int_texts(items)
        if texts is not None:  # a long list of sizes: one join
            yield "[" + inner + ("," + inner).join(texts) + "\n" + _INDENT * level + "]"
            return
        first = True
        for item in items:
            yield ("[" if first else ",") + inner
            first = False
            yield from self.pieces(item, level + 1)
        yield "\n" + _INDENT * level + "]"

    def column_texts(self, values: Sequence, start: int, level: int, shared: bool) -> list[str]:
        if shared:
            key = (id(values), start, level)
            texts = self.shared.get(key)
            if texts is None:
                texts = self.shared[key] = self.column_texts(values, start, level, False)
            return texts
        part = values[start:start + ROWS_PER_PIECE]
        texts = _int_texts(part)
        if texts is not None:
            return list(texts)
        return ["".join(self.pieces(v, level)) for v in part]

    def rows(self, rows: Rows, level: int) -> Iterator[str]:
        """Each row from one template holding the keys in sorted order; values filled in by slices."""
        if not len(rows):
            yield "[]"
            return
        pad = "\n" + _INDENT * (level + 1)
        inner = "\n" + _INDENT * (level + 2)
        keys = sorted(rows.columns)
        template = ("{" + ",".join(inner + _key(k, self.encode).replace("%", "%%") + ": %s" for k in keys)
                    + pad + "}")
        columns = [(rows.columns[k], k in rows.shared) for k in keys]
        for start in range(0, len(rows), ROWS_PER_PIECE):
            texts = [self.column_texts(values, start, level + 2, shared) for values, shared in columns]
            yield ("[" if start == 0 else ",") + pad + ("," + pad).join(map(template.__mod__, zip(*texts)))
        yield "\n" + _INDENT * level + "]"
