"""Does a plan file just written read back as the plan it was written from?

The JSON form is checked without a full parsed copy of the plan: while the text is parsed, each
tensor entry becomes a plain tuple at once (its dict is dropped), and the entries are compared
with the plan column by column; the rest of the document, small, is compared as a parsed plan.
At 100,000 tensors this keeps the check from holding a second plan's worth of per-tensor dicts
and objects beside the plan. The FlatBuffer form is compact and is parsed as `load` parses it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import chain

from packager.errors import PlanError
from packager.package import plan_json
from packager.package.load import parse_plan
from packager.package.sidecar import ArenaSection, PackagePlan, TensorEntry

# A tensor entry's keys in the order of the row it becomes (size_expr only for dynamic shapes).
_ROW_KEYS = ("index", "subgraph", "tensor", "kind", "name", "type", "shape", "offset", "size", "first_op",
             "last_op", "alias_of", "pass")
_ROW_FIELDS = ("index", "subgraph", "tensor", "kind", "name", "type", "shape", "offset", "size", "first_op",
               "last_op", "alias_of", "pass_")
_INTS = ("index", "subgraph", "tensor", "offset", "size", "first_op", "last_op", "pass_")
_STRS = ("kind", "name", "type")
_KEYS, _KEYS_DYNAMIC = frozenset(_ROW_KEYS), frozenset((*_ROW_KEYS, "size_expr"))
_NO_EXPR = object()


class _Row(tuple):
    """A tensor entry of the file as a tuple: _ROW_KEYS' values, then size_expr or _NO_EXPR."""


class _Pair(tuple):
    """An ("index", "object" or "offset") entry as a tuple: (key, index, value)."""


def _compact(entry: dict):
    """json's object_hook: a tensor entry or a pair entry becomes a tuple as soon as it is read."""
    keys = entry.keys()
    if keys == _KEYS or keys == _KEYS_DYNAMIC:
        return _Row((*(entry[k] for k in _ROW_KEYS), entry.get("size_expr", _NO_EXPR)))
    if len(entry) == 2 and "index" in entry and ("object" in entry or "offset" in entry):
        second = "object" if "object" in entry else "offset"
        return _Pair((second, entry["index"], entry[second]))
    return entry


def json_reads_back(data: bytes, plan: PackagePlan) -> bool:
    """True when the JSON text parses to exactly `plan` (types included: 1 is not true)."""
    try:
        doc = json.loads(data, object_hook=_compact)
        arenas = doc["arenas"]
        if not isinstance(arenas, list) or len(arenas) != len(plan.arenas):
            return False
        for a, section in zip(arenas, plan.arenas):
            if not (_rows_match(a["offsets"]["tensors"], section.offsets.tensors)
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
    return rest == replace(plan, arenas=tuple(_without_entries(s) for s in plan.arenas))


def _without_entries(section: ArenaSection) -> ArenaSection:
    return replace(section, offsets=replace(section.offsets, tensors=()),
                   objects=replace(section.objects, assignment=()),
                   passes=None if section.passes is None else replace(section.passes, offsets=()))


def _rows_match(rows: object, tensors: tuple[TensorEntry, ...]) -> bool:
    if not isinstance(rows, list) or len(rows) != len(tensors) or not _all_of(_Row, rows):
        return False
    if not rows:
        return True
    columns = dict(zip((*_ROW_FIELDS, "size_expr"), zip(*rows)))
    for field in _INTS:
        if not (_all_of(int, columns[field]) and list(columns[field]) == [getattr(t, field) for t in tensors]):
            return False
    for field in _STRS:
        if not (_all_of(str, columns[field]) and list(columns[field]) == [getattr(t, field) for t in tensors]):
            return False
    shapes = columns["shape"]
    if not (_all_of(list, shapes) and _all_of(int, list(chain.from_iterable(shapes)))
            and list(map(tuple, shapes)) == [t.shape for t in tensors]):
        return False
    aliases = columns["alias_of"]
    if not (set(map(type, aliases)) <= {int, type(None)} and list(aliases) == [t.alias_of for t in tensors]):
        return False
    exprs = [None if e is _NO_EXPR else e for e in columns["size_expr"]]
    return (_all_of(str, [e for e in exprs if e is not None])
            and exprs == [t.size_expr for t in tensors])


def _pairs_match(pairs: object, second: str, want: tuple[tuple[int, int], ...]) -> bool:
    if not isinstance(pairs, list) or len(pairs) != len(want) or not _all_of(_Pair, pairs):
        return False
    if not pairs:
        return True
    keys, firsts, seconds = zip(*pairs)
    return (set(keys) == {second} and _all_of(int, firsts, seconds)
            and list(zip(firsts, seconds)) == list(want))


def _all_of(kind: type, *columns) -> bool:
    """Every value of exactly this type (bool is not an int here)."""
    return all(set(map(type, c)) <= {kind} for c in columns)


def reads_back(data: bytes, plan: PackagePlan) -> bool:
    """True when the plan file (either form) reads back as exactly `plan`."""
    if data.lstrip()[:1] == b"{":
        return json_reads_back(data, plan)
    try:
        return parse_plan(data) == plan
    except PlanError:
        return False
