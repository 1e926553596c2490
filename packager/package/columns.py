"""An offset plan's tensor entries as columns: one numpy array per number, one list per text.

The writers, the read-back check and the check against the model compare or write whole
columns at once instead of one entry at a time: at 100,000 tensors, per-entry Python work was
most of what `package` did after planning. Built once per tuple of entries (the last one asked
for is kept), never modified.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

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

    def __getitem__(self, field: str) -> np.ndarray:
        return self.numbers[field]


_built: dict[int, tuple[weakref.ref, TensorColumns]] = {}  # id(section) -> (the section, its columns)


def tensor_columns(section: OffsetSection) -> TensorColumns:
    """The columns of an offset plan's entries, built once while the section lives (the check
    against the model and the read-back of both files ask for the same plan's)."""
    key = id(section)
    known = _built.get(key)
    if known is not None and known[0]() is section:
        return known[1]
    columns = _columns(section.tensors)
    _built[key] = (weakref.ref(section), columns)
    weakref.finalize(section, _built.pop, key, None)
    return columns


def _columns(tensors: tuple[TensorEntry, ...]) -> TensorColumns:
    numbers = {f: np.fromiter(map(attrgetter(f), tensors), dtype=np.int64, count=len(tensors))
               for f in NUMBERS}
    aliases = list(map(attrgetter("alias_of"), tensors))
    return TensorColumns(
        count=len(tensors), numbers=numbers, alias_of=aliases,
        planned=np.fromiter(map(_is_none, aliases), dtype=bool, count=len(tensors)),
        kind=list(map(attrgetter("kind"), tensors)), name=list(map(attrgetter("name"), tensors)),
        type=list(map(attrgetter("type"), tensors)), shape=list(map(attrgetter("shape"), tensors)),
        size_expr=list(map(attrgetter("size_expr"), tensors)))


def _is_none(value: object) -> bool:
    return value is None


def keep_columns(section: OffsetSection, values: dict[str, list]) -> None:
    """Keep, as the section's columns, the lists its entries were made from (a list per field
    of TensorEntry, never modified after; package/assemble.py), so that they are not gathered
    again from 100,000 entries. Nothing is kept when a number does not fit int64: tensor_columns
    then gathers them and fails as it always did."""
    aliases = values["alias_of"]
    try:
        numbers = {f: np.array(values[f], dtype=np.int64) for f in NUMBERS}
    except (OverflowError, TypeError, ValueError):
        return
    if any(column.shape != (len(aliases),) for column in numbers.values()):
        return
    columns = TensorColumns(
        count=len(aliases), numbers=numbers, alias_of=aliases,
        planned=np.fromiter(map(_is_none, aliases), dtype=bool, count=len(aliases)),
        kind=values["kind"], name=values["name"], type=values["type"], shape=values["shape"],
        size_expr=values["size_expr"])
    key = id(section)
    _built[key] = (weakref.ref(section), columns)
    weakref.finalize(section, _built.pop, key, None)
