"""An offset plan's tensor entries, stored as columns: an int64 array per number, a tuple per text.

The writers, the read-back and the check against the model take whole columns at once; readable
code takes one entry at a time (`TensorEntry`, made from the columns as it is asked for).
Made once, from lists or arrays, bounds checked then (a number beyond int64 is an OverflowError),
never modified after.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Iterable, Iterator, Sequence

import numpy as np

_ENTRIES_AT_A_TIME = 4096
NO_ALIAS = -1  # alias_of of a planned entry: it has its own buffer
NUMBERS = ("index", "subgraph", "tensor", "offset", "size", "first_op", "last_op", "alias_of", "pass_")
TEXTS = ("kind", "name", "type")


@dataclass(frozen=True, slots=True)
class TensorEntry:
    """One entry of an offset plan, as readable code takes it."""
    index: int  # id in the arena's numbering
    subgraph: int
    tensor: int  # index inside its subgraph; -1 for a scratch buffer
    kind: str  # "tensor" or "scratch"
    name: str
    type: str
    shape: tuple[int, ...]
    offset: int
    size: int  # planned bytes (rounded as the runtime rounds)
    first_op: int
    last_op: int
    alias_of: int | None  # the planned tensor whose buffer this one uses
    pass_: int = 0  # planning pass (dynamic shapes); 0: sizes known from the file
    size_expr: str | None = None  # bytes over the symbols (dynamic shapes only); `size` is its largest value


ENTRY_FIELDS = tuple(f.name for f in fields(TensorEntry))


@dataclass(frozen=True, eq=False)
class TensorColumns:
    """The entries in order, a column per field of TensorEntry; alias_of is NO_ALIAS where an
    entry has none. `columns["offset"]` is a column, `columns[3]` the fourth entry."""
    index: np.ndarray
    subgraph: np.ndarray
    tensor: np.ndarray
    kind: tuple[str, ...]
    name: tuple[str, ...]
    type: tuple[str, ...]
    shape: tuple[tuple[int, ...], ...]
    offset: np.ndarray
    size: np.ndarray
    first_op: np.ndarray
    last_op: np.ndarray
    alias_of: np.ndarray
    pass_: np.ndarray
    size_expr: tuple[str | None, ...]

    def __post_init__(self) -> None:
        n = len(self.kind)
        for field in NUMBERS:
            column = np.array(getattr(self, field), dtype=np.int64)  # OverflowError beyond int64
            column.flags.writeable = False
            object.__setattr__(self, field, column)
        for field in (*TEXTS, "size_expr"):
            object.__setattr__(self, field, tuple(getattr(self, field)))
        object.__setattr__(self, "shape", tuple(map(tuple, self.shape)))
        lengths = {len(getattr(self, f)) for f in (*NUMBERS, *TEXTS, "shape", "size_expr")}
        if lengths != {n} or any(getattr(self, f).ndim != 1 for f in NUMBERS):
            raise ValueError(f"tensor columns of different lengths: {sorted(lengths)}")

    @classmethod
    def of_entries(cls, entries: Iterable[TensorEntry]) -> TensorColumns:
        rows = list(entries)
        columns = {f: [getattr(e, f) for e in rows] for f in ENTRY_FIELDS}
        columns["alias_of"] = [NO_ALIAS if a is None else a for a in columns["alias_of"]]
        return cls(**columns)

    @classmethod
    def empty(cls) -> TensorColumns:
        return cls(**{f: () for f in ENTRY_FIELDS})

    @property
    def count(self) -> int:
        return len(self.kind)

    @property
    def planned(self) -> np.ndarray:
        """True where the entry has its own buffer (it is not an alias)."""
        return self.alias_of == NO_ALIAS

    def __len__(self) -> int:
        return len(self.kind)

    def __getitem__(self, key: str | int):
        if isinstance(key, str):
            return getattr(self, key)
        return self.entries([range(self.count)[key]])[0]  # IndexError beyond the entries

    def __iter__(self) -> Iterator[TensorEntry]:
        for start in range(0, self.count, _ENTRIES_AT_A_TIME):  # never all of them made at once
            yield from self.entries(range(start, min(start + _ENTRIES_AT_A_TIME, self.count)))

    def entries(self, at: Sequence[int] | None = None) -> list[TensorEntry]:
        """The entries (those at the positions `at`, else all) as TensorEntry."""
        if isinstance(at, range) and at.step == 1:
            pick, numbers = (lambda c: c[at.start:at.stop]), {f: getattr(self, f)[at.start:at.stop].tolist()
                                                              for f in NUMBERS}
        else:
            pick = (lambda c: c) if at is None else (lambda c: [c[i] for i in at])
            numbers = {f: pick(getattr(self, f).tolist()) for f in NUMBERS}
        aliases = [None if a == NO_ALIAS else a for a in numbers["alias_of"]]
        rows = zip(numbers["index"], numbers["subgraph"], numbers["tensor"], pick(self.kind), pick(self.name),
                   pick(self.type), pick(self.shape), numbers["offset"], numbers["size"], numbers["first_op"],
                   numbers["last_op"], aliases, numbers["pass_"], pick(self.size_expr))
        return [TensorEntry(*row) for row in rows]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TensorColumns):
            return NotImplemented
        return (all(np.array_equal(getattr(self, f), getattr(other, f)) for f in NUMBERS)
                and all(getattr(self, f) == getattr(other, f) for f in (*TEXTS, "shape", "size_expr")))

    __hash__ = None  # columns, not a value to key on

    def __repr__(self) -> str:
        return f"TensorColumns({self.count} entries)"


@dataclass(frozen=True, eq=False)
class Utf8Texts:
    """A text column as the FlatBuffer stores it: each text's UTF-8 bytes, one after another,
    and their lengths (-1 where a text is absent: None)."""
    lengths: np.ndarray
    data: bytes
    texts: Sequence[str | None]

    def encoded(self, i: int) -> bytes | None:
        text = self.texts[i]
        return None if text is None else text.encode("utf-8")


def utf8_texts(texts: Sequence[str | None]) -> Utf8Texts:
    """The column's UTF-8 form: all its text encoded at once where it is ASCII (a character a
    byte), each text on its own only where it is not."""
    n = len(texts)
    present = [x for x in texts if x is not None]
    joined = "".join(present)  # TypeError for anything not text
    if joined.isascii():
        data, sizes = joined.encode("ascii"), map(len, present)
    else:
        encoded = [x.encode("utf-8") for x in present]
        data, sizes = b"".join(encoded), map(len, encoded)
    lengths = np.full(n, -1, np.int64)
    lengths[np.array([x is not None for x in texts], dtype=bool)] = np.fromiter(sizes, np.int64, len(present))
    return Utf8Texts(lengths, data, texts)
