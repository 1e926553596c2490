"""Does a plan file just written read back as the plan it was written from?

Both forms are parsed in full from the written bytes (the JSON by the standard library's parser,
the FlatBuffer by this package's reader) and compared with the plan: the tensor entries, which
are nearly all of a large plan, column by column against the plan's columns (no entry objects
are built), the rest of the document as a parsed plan. Types count: 1 is not true.
"""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import chain
from operator import itemgetter

import numpy as np

from packager.errors import PlanError
from packager.gc_pause import without_collector_pauses
from packager.package import plan_flatbuffer, plan_json
from packager.package.columns import NUMBERS, TensorColumns, tensor_columns
from packager.package.sidecar import FORMAT_NAME, FORMAT_VERSION, ArenaSection, OffsetSection, PackagePlan

# A tensor entry's keys as the writer writes them (sorted; size_expr, with dynamic shapes only,
# comes after size), and an object or pass entry's.
_KEYS = ("alias_of", "first_op", "index", "kind", "last_op", "name", "offset", "pass", "shape", "size",
         "subgraph", "tensor", "type")
_KEY_SET, _KEY_SET_DYNAMIC = frozenset(_KEYS), frozenset((*_KEYS, "size_expr"))
_ROW = itemgetter(*_KEYS)
# the numbers among them, in columns.NUMBERS' order ("pass" is pass_)
_NUMBER_KEYS = ("index", "subgraph", "tensor", "offset", "size", "first_op", "last_op", "pass")
_SHAPE_AT = _KEYS.index("shape")
_PAIR_KEYS = {("index", "object"), ("index", "offset")}
_ABSENT = object()
_CHUNK = 8192  # entries compared at a time


def _compact(entry: dict):
    """json's object_hook: a tensor entry with exactly the writer's keys, in its order, becomes
    the tuple of its values (a pair entry: its second key, then its values) as soon as it is read, so that the check
    holds a third less than the parsed dicts (JSON arrays are lists: a tuple is only this)."""
    n = len(entry)
    if n == 13 and tuple(entry) == _KEYS:
        return tuple(entry.values())
    if n == 2:
        keys = tuple(entry)
        if keys in _PAIR_KEYS:
            return (keys[1], *entry.values())  # ("object" or "offset", index, value)
    return entry


def json_reads_back(data: bytes | str, plan: PackagePlan) -> bool:
    """True when the JSON text parses to exactly `plan` (types included: 1 is not true)."""
    try:
        doc = json.loads(data, object_hook=_compact)
        arenas = doc["arenas"]
        if not isinstance(arenas, list) or len(arenas) != len(plan.arenas):
            return False
        for a, section in zip(arenas, plan.arenas):
            if not (_entries_match(a["offsets"]["tensors"], section.offsets)
                    and _pairs_match(a["objects"]["tensors"], "object", section.objects.assignment)
                    and (("passes" in a) == (section.passes is not None))
                    and (section.passes is None or _pairs_match(a["passes"]["tensors"], "offset",
                                                                section.passes.offsets))):
                return False
            a["offsets"]["tensors"] = a["objects"]["tensors"] = []  # checked: dropped
            if section.passes is not None:
                a["passes"]["tensors"] = []
        rest = plan_json.from_dict(doc)
    except (ValueError, KeyError, TypeError, AttributeError, PlanError):
        return False
    return rest == _without_entries(plan)


def _rows(entries: list) -> tuple[list, list] | None:
    """(each entry's values in _KEYS' order, each one's size_expr or _ABSENT); None when an entry
    has other keys."""
    if set(map(type, entries)) == {tuple} and set(map(len, entries)) == {13}:
        return entries, [_ABSENT] * len(entries)  # the writer's static entries, compacted as read
    rows, exprs = [], []
    for e in entries:
        if type(e) is tuple and len(e) == 13:
            rows.append(e)
            exprs.append(_ABSENT)
        elif type(e) is dict and e.keys() in (_KEY_SET, _KEY_SET_DYNAMIC):
            rows.append(_ROW(e))
            exprs.append(e.get("size_expr", _ABSENT))
        else:
            return None
    return rows, exprs


def _entries_match(entries: object, offsets: OffsetSection) -> bool:
    """The file's tensor entries are the plan's, key for key and type for type."""
    if not isinstance(entries, list) or len(entries) != len(offsets.tensors):
        return False
    if not entries:
        return True
    found = _rows(entries)
    if found is None:
        return False
    rows, exprs = found
    # Equality alone would take true for 1 and 1.0 for 1: no entry may hold a bool or a float
    # (none of its fields is one), nor a shape anything but integers; then the rows must equal
    # the plan's, compared as whole lists.
    if not set(map(type, chain.from_iterable(rows))) <= {int, str, list, type(None)}:
        return False
    if not set(map(type, chain.from_iterable(map(itemgetter(_SHAPE_AT), rows)))) <= {int}:
        return False
    want = tensor_columns(offsets)
    for start in range(0, len(rows), _CHUNK):  # the plan's rows a chunk at a time: not all held
        if rows[start:start + _CHUNK] != _expected_rows(want, start, start + _CHUNK):
            return False
    return (exprs == [_ABSENT if e is None else e for e in want.size_expr]
            and _all_of(str, [e for e in exprs if e is not _ABSENT]))


def _expected_rows(want: TensorColumns, start: int, stop: int) -> list[tuple]:
    """The plan's entries start..stop as the parsed rows are: values in _KEYS' order, each
    shape a list."""
    numbers = {k: want[f][start:stop].tolist() for k, f in zip(_NUMBER_KEYS, NUMBERS)}
    columns = {"alias_of": want.alias_of[start:stop], "kind": want.kind[start:stop],
               "name": want.name[start:stop], "type": want.type[start:stop],
               "shape": list(map(list, want.shape[start:stop])), **numbers}
    return list(zip(*(columns[k] for k in _KEYS)))


def _pairs_match(pairs: object, second: str, want: tuple[tuple[int, int], ...]) -> bool:
    if not isinstance(pairs, list) or len(pairs) != len(want):
        return False
    if not pairs:
        return True
    if set(map(type, pairs)) == {tuple}:  # compacted as read: (key, index, value)
        keys, firsts, seconds = zip(*pairs)
        if set(keys) != {second}:
            return False
    else:
        found = [(e["index"], e[second]) if type(e) is dict and e.keys() == {"index", second} else
                 (e[1], e[2]) if type(e) is tuple and e[0] == second else None for e in pairs]
        if None in found:
            return False
        firsts, seconds = zip(*found)
    return _all_of(int, firsts, seconds) and list(zip(firsts, seconds)) == list(want)


def _all_of(kind: type, *columns) -> bool:
    """Every value of exactly this type (bool is not an int here)."""
    return all(set(map(type, c)) <= {kind} for c in columns)


def flatbuffer_reads_back(data: bytes, plan: PackagePlan) -> bool:
    """True when the FlatBuffer parses (as `load` parses it) to exactly `plan`."""
    try:
        rest, columns = plan_flatbuffer.loads_with_columns(data)
    except PlanError:
        return False
    if (rest.format, rest.format_version) != (FORMAT_NAME, FORMAT_VERSION):
        return False  # load refuses it
    without = replace(plan, arenas=tuple(replace(s, offsets=replace(s.offsets, tensors=())) for s in plan.arenas))
    if len(columns) != len(plan.arenas) or rest != without:
        return False
    return all(_columns_match(found, section.offsets) for found, section in zip(columns, plan.arenas))


def _columns_match(found: dict | None, offsets: OffsetSection) -> bool:
    if found is None:
        return not offsets.tensors
    want: TensorColumns = tensor_columns(offsets)
    numbers = found["numbers"]
    return (len(found["kind"]) == want.count
            and all(np.array_equal(numbers[f], want[f]) for f in NUMBERS)
            and found["alias_of"] == want.alias_of and found["kind"] == want.kind and found["name"] == want.name
            and found["type"] == want.type and found["shape"] == want.shape and found["size_expr"] == want.size_expr)


def _without_entries(plan: PackagePlan) -> PackagePlan:
    return replace(plan, arenas=tuple(_section_without_entries(s) for s in plan.arenas))


def _section_without_entries(section: ArenaSection) -> ArenaSection:
    return replace(section, offsets=replace(section.offsets, tensors=()),
                   objects=replace(section.objects, assignment=()),
                   passes=None if section.passes is None else replace(section.passes, offsets=()))


@without_collector_pauses
def reads_back(data: bytes | str, plan: PackagePlan) -> bool:
    """True when the plan file (either form; the JSON one also as its text) reads back as
    exactly `plan`."""
    if isinstance(data, str):
        return json_reads_back(data, plan)
    if data.lstrip()[:1] == b"{":
        return json_reads_back(data, plan)
    return flatbuffer_reads_back(data, plan)
