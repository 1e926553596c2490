"""Many instances of a frozen, slotted dataclass made a field at a time.

Such a class's __init__ sets its fields one Python-level call each: making the 100,000 tensors
and operators of a large model (or the entries of its plan) that way was most of the time spent
making them. Here the objects are allocated at once and each field's slot is set over all of them
in one pass (its descriptor, called from C): the same objects, equal and hashing alike.
"""

from __future__ import annotations

from collections import deque
from dataclasses import fields
from itertools import repeat
from typing import Iterable, TypeVar

_T = TypeVar("_T")


def made_field_by_field(cls: type[_T], count: int, columns: Iterable[Iterable]) -> list[_T]:
    """`count` instances of `cls`, `columns` each of its fields' values in the order the class
    declares them (every field given, defaults included: a slot never set would be missing)."""
    if hasattr(cls, "__post_init__"):  # it would be skipped: its checks must run
        raise TypeError(f"{cls.__name__} has a __post_init__ (checks after __init__): make it with its constructor")
    names = [f.name for f in fields(cls)]
    columns = list(columns)
    if len(columns) != len(names):
        raise TypeError(f"{cls.__name__} has {len(names)} fields, {len(columns)} columns given")
    made = list(map(cls.__new__, repeat(cls, count)))
    for name, column in zip(names, columns):
        deque(map(getattr(cls, name).__set__, made, column), maxlen=0)
    return made
