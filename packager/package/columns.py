"""An offset plan's tensor entries as columns: one numpy array per number, one list per text.

The writers, the read-back check and the check against the model compare or write whole
columns at once instead of one entry at a time: at 100,000 tensors, per-entry Python work was
most of what `package` did after planning. Built once per tuple of entries (the last one asked
for is kept), never modified.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from packager.package.sidecar import TensorEntry

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


_last: tuple[tuple[TensorEntry, ...], TensorColumns] | None = None


def tensor_columns(tensors: tuple[TensorEntry, ...]) -> TensorColumns:
    """The columns of these entries (the same object again for the same tuple)."""
    global _last
    if _last is not None and _last[0] is tensors:
        return _last[1]
    numbers = {f: np.fromiter(map(attrgetter(f), tensors), dtype=np.int64, count=len(tensors))
               for f in NUMBERS}
    aliases = list(map(attrgetter("alias_of"), tensors))
    columns = TensorColumns(
        count=len(tensors), numbers=numbers, alias_of=aliases,
        planned=np.fromiter(map(_is_none, aliases), dtype=bool, count=len(tensors)),
        kind=list(map(attrgetter("kind"), tensors)), name=list(map(attrgetter("name"), tensors)),
        type=list(map(attrgetter("type"), tensors)), shape=list(map(attrgetter("shape"), tensors)),
        size_expr=list(map(attrgetter("size_expr"), tensors)))
    _last = (tensors, columns)
    return columns


def _is_none(value: object) -> bool:
    return value is None
