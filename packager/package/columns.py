"""An offset plan's tensor entries as columns: one numpy array per number, one list per text.

The writers, the read-back check and the check against the model compare or write whole
columns at once instead of one entry at a time: at 100,000 tensors, per-entry Python work was
most of what `package` did after planning. Built once per tuple of entries (the last one asked
for is kept), never modified.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from operator import attrgetter, is_, is_not

import weakref

import numpy as np

from packager.package.sidecar import OffsetSection, TensorEntry

NUMBERS = ("index", "subgraph", "tensor", "offset", "size", "first_op", "last_op", "pass_")


@dataclass(frozen=True, eq=False)
class TensorColumns:
    count: int
    numbers: dict[str, np.ndarray]  # NUMBERS -> int64 arrays
    alias_of: list[int | None]
    planned: np.ndarray  # bool: alias_of is None
    kind: list[str]
    name: list[str]
    type: list[str]
    shape: list[tuple[int, ...]]
    size_expr: list[str | None]
    # worked out when first asked for (the FlatBuffer's writer and its read-back ask for the same)
    _derived: dict = field(default_factory=dict, repr=False)

    def __getitem__(self, field: str) -> np.ndarray:
        return self.numbers[field]

    def utf8(self, field: str) -> Utf8Texts:
        """"kind", "name", "type" or "size_expr" as UTF-8 (TypeError for a value not text)."""
        key = ("utf8", field)
        if key not in self._derived:
            self._derived[key] = utf8_texts(getattr(self, field))
        return self._derived[key]

    def alias_numbers(self) -> np.ndarray:
        """alias_of as int64, -1 where None (OverflowError for a value beyond int64)."""
        if "alias" not in self._derived:
            numbers = np.full(self.count, -1, np.int64)
            owners = np.fromiter(filter(partial(is_not, None), self.alias_of), np.int64,
                                 self.count - int(self.planned.sum()))
            numbers[~self.planned] = owners
            self._derived["alias"] = numbers
        return self._derived["alias"]

    def ranks(self) -> np.ndarray:
        """Each shape's number of dimensions."""
        if "ranks" not in self._derived:
            self._derived["ranks"] = np.fromiter(map(len, self.shape), np.int64, self.count)
        return self._derived["ranks"]

    def dims(self) -> np.ndarray:
        """Every shape's dimensions, one after another (OverflowError beyond int64)."""
        if "dims" not in self._derived:
            self._derived["dims"] = np.fromiter(chain.from_iterable(self.shape), np.int64,
                                                int(self.ranks().sum()))
        return self._derived["dims"]


@dataclass(frozen=True, eq=False)
class Utf8Texts:
    """A text column as the FlatBuffer stores it: each text's UTF-8 bytes, one after another,
    and their lengths (-1 where a text is absent: None)."""
    lengths: np.ndarray
    data: bytes
    texts: list[str | None]

    def encoded(self, i: int) -> bytes | None:
        text = self.texts[i]
        return None if text is None else text.encode("utf-8")


def utf8_texts(texts: list[str | None]) -> Utf8Texts:
    """The column's UTF-8 form: all its text encoded at once where it is ASCII (a character a
    byte), each text on its own only where it is not."""
    n, absent = len(texts), texts.count(None)
    present = texts if not absent else [x for x in texts if x is not None]
    joined = "".join(present)  # TypeError for anything not text
    if joined.isascii():
        data, sizes = joined.encode("ascii"), map(len, present)
    else:
        encoded = [x.encode("utf-8") for x in present]
        data, sizes = b"".join(encoded), map(len, encoded)
    if not absent:
        return Utf8Texts(np.fromiter(sizes, np.int64, n), data, texts)
    lengths = np.full(n, -1, np.int64)
    lengths[np.fromiter(map(partial(is_not, None), texts), bool, n)] = np.fromiter(sizes, np.int64, n - absent)
    return Utf8Texts(lengths, data, texts)


_built: dict[int, tuple[weakref.ref, TensorColumns]] = {}  # id(section) -> (the section, its columns)


def tensor_columns(section: OffsetSection) -> TensorColumns:
    """The columns of an offset plan's entries, built once while the section lives (the check
    against the model and the read-back of both files ask for the same plan's)."""
    key = id(section)
    known = _built.get(key)
    if known is not None and known[0]() is section:
        return known[1]
    return _kept(section, _columns(section.tensors))


def keep_columns(section: OffsetSection, values: dict[str, list]) -> None:
    """Keep, as the section's columns, the lists its entries were made from (a list per field
    of TensorEntry, never modified after; package/assemble.py), so that they are not gathered
    again from 100,000 entries. Nothing is kept when a number does not fit int64: tensor_columns
    then gathers them and fails as it always did."""
    try:
        numbers = {f: np.array(values[f], dtype=np.int64) for f in NUMBERS}
    except (OverflowError, TypeError, ValueError):
        return
    if any(column.shape != (len(values["alias_of"]),) for column in numbers.values()):
        return
    _kept(section, _made(numbers, values))


def _columns(tensors: tuple[TensorEntry, ...]) -> TensorColumns:
    """The columns gathered from the entries."""
    numbers = {f: np.fromiter(map(attrgetter(f), tensors), dtype=np.int64, count=len(tensors))
               for f in NUMBERS}
    return _made(numbers, {f: list(map(attrgetter(f), tensors)) for f in _LISTS})


# TensorEntry's fields the columns hold as lists
_LISTS = ("alias_of", "kind", "name", "type", "shape", "size_expr")


def _made(numbers: dict[str, np.ndarray], values: dict[str, list]) -> TensorColumns:
    """The columns from their numbers (int64 arrays) and the lists of the other fields."""
    aliases = values["alias_of"]
    return TensorColumns(
        count=len(aliases), numbers=numbers, alias_of=aliases,
        planned=np.fromiter(map(partial(is_, None), aliases), dtype=bool, count=len(aliases)),
        kind=values["kind"], name=values["name"], type=values["type"], shape=values["shape"],
        size_expr=values["size_expr"])


def _kept(section: OffsetSection, columns: TensorColumns) -> TensorColumns:
    """`columns`, kept as the section's while it lives."""
    key = id(section)
    _built[key] = (weakref.ref(section), columns)
    weakref.finalize(section, _built.pop, key, None)
    return columns
