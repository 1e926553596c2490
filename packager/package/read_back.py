"""Does a plan file just written read back as the plan it was written from?

Both forms are parsed in full from the written bytes (the JSON by the standard library's parser,
the FlatBuffer by this package's reader) and compared with the plan: the tensor entries, which
are nearly all of a large plan, against the plan's columns (the JSON's one by one as the parser
reads them, so that no parsed copy is held; the FlatBuffer's column by column), the rest of the
document as a parsed plan. Types count: 1 is not true.
"""

from __future__ import annotations

import json
from itertools import chain
from dataclasses import replace
from operator import itemgetter
from typing import Iterable

import numpy as np

from packager.errors import PlanError
from packager.gc_pause import without_collector_pauses
from packager.package import plan_flatbuffer, plan_json
from packager.package.json_pieces import loads_in_pieces
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
# The types of a tensor entry's values in _KEYS' order (1 is not true, 1.0 is not 1): alias_of
# null, or the owner's index.
_ROW_TYPES = [type(None) if k == "alias_of" else list if k == "shape" else str if k in ("kind", "name", "type")
              else int for k in _KEYS]
_ALIAS_ROW_TYPES = [int if k == "alias_of" else t for k, t in zip(_KEYS, _ROW_TYPES)]
_SHAPE_AT = _KEYS.index("shape")
_CHUNK = 8192  # the plan's entries made at a time


class _Matched:
    """What an entry of the file that equals the plan's next one becomes as it is parsed: the
    entries are compared while json reads them, so none is held (a parsed copy of a large plan
    held more than the model itself). One marker per kind of entry."""
    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"<matched {self.kind} entry>"


class _Pairs:
    """The plan's ("index", `second`) pairs, arenas in order, and how many the file gave so far."""
    __slots__ = ("want", "at", "second", "marker")

    def __init__(self, want: list[tuple[int, int]], second: str) -> None:
        self.want, self.at, self.second, self.marker = want, 0, second, _Matched(second)


class _EntryChecker:
    """json's object_hook: each tensor entry (the writer's keys, in any order) is compared with
    the plan's next tensor entry, each ("index", "object") or ("index", "offset") pair with the
    plan's next pair of that kind, arenas in order, key for key and type for type (1 is not
    true); an entry that matches becomes a marker, any other object stays as parsed (and so
    fails the check of its list)."""

    def __init__(self, plan: PackagePlan) -> None:
        self.tensor = _Matched("tensor")
        self._sections = [tensor_columns(section.offsets) for section in plan.arenas]
        self._at_tensor = 0  # tensor entries the file gave so far, arenas in order
        self._chunk, self._chunk_first = [], 0  # rows of the plan's entries from _chunk_first on
        objects = _Pairs([p for s in plan.arenas for p in s.objects.assignment], "object")
        offsets = _Pairs([p for s in plan.arenas if s.passes is not None for p in s.passes.offsets], "offset")
        self.pairs = {"object": objects.marker, "offset": offsets.marker}
        self._pair_kinds = {("index", "object"): objects, ("object", "index"): objects,
                            ("index", "offset"): offsets, ("offset", "index"): offsets}
        # a tensor entry's keys in the order the file gives them -> how its values are taken in
        # _KEYS' order (_NOT_AN_ENTRY: not a tensor entry's keys), worked out once per order
        self._orders: dict[tuple[str, ...], object] = {_KEYS: _VALUES}

    def saved(self):
        """What puts the checker back where it is now: an entry parsed twice (the JSON read in
        pieces tries a value again once more of it is read) is compared with the same row."""
        objects, offsets = self._pair_kinds[("index", "object")], self._pair_kinds[("index", "offset")]
        at_tensor, at_object, at_offset = self._at_tensor, objects.at, offsets.at

        def restore() -> None:
            self._at_tensor, objects.at, offsets.at = at_tensor, at_object, at_offset
        return restore

    def _load_chunk(self, k: int) -> bool:
        """Make the chunk of rows that holds the plan's k-th tensor entry (arenas in order) the
        current one; False after the last entry."""
        first = 0
        for want in self._sections:
            if k - first < want.count:
                start = (k - first) - (k - first) % _CHUNK
                self._chunk = list(zip(_expected_rows(want, start, start + _CHUNK),
                                       want.size_expr[start:start + _CHUNK]))
                self._chunk_first = first + start
                return True
            first += want.count
        return False

    def __call__(self, entry: dict):
        n = len(entry)
        if n == 2:
            pairs = self._pair_kinds.get(tuple(entry))
            if pairs is not None and pairs.at < len(pairs.want):
                want = pairs.want[pairs.at]
                pairs.at += 1
                index, value = entry["index"], entry[pairs.second]
                if type(index) is int and type(value) is int and (index, value) == want:
                    return pairs.marker
            return entry
        if n == 13 or n == 14:
            keys = tuple(entry)
            order = self._orders.get(keys)
            if order is None:
                order = self._orders[keys] = _order_of(keys)
            if order is _VALUES:  # the writer's order: the values as they are
                row, expr = tuple(entry.values()), _ABSENT
            elif order is _NOT_AN_ENTRY:
                return entry
            else:
                row, expr = order(entry), entry.get("size_expr", _ABSENT)
            k = self._at_tensor
            i = k - self._chunk_first
            if not 0 <= i < len(self._chunk):
                if not self._load_chunk(k):
                    return entry
                i = k - self._chunk_first
            self._at_tensor = k + 1
            want, want_expr = self._chunk[i]
            if (row == want and [*map(type, row)] == (_ROW_TYPES if row[0] is None else _ALIAS_ROW_TYPES)
                    and [*map(type, row[_SHAPE_AT])].count(int) == len(row[_SHAPE_AT])
                    and (expr is _ABSENT if want_expr is None else (type(expr) is str and expr == want_expr))):
                return self.tensor
        return entry


_ABSENT, _VALUES, _NOT_AN_ENTRY = object(), object(), object()


def _order_of(keys: tuple[str, ...]):
    """How a tensor entry with these keys, in this order, gives its values in _KEYS' order:
    _VALUES (as they are), a getter, or _NOT_AN_ENTRY (not the keys of a tensor entry)."""
    if keys == _KEYS:
        return _VALUES
    if set(keys) == _KEY_SET or set(keys) == _KEY_SET_DYNAMIC:
        return _ROW
    return _NOT_AN_ENTRY


def json_reads_back(data: bytes, plan: PackagePlan) -> bool:
    """True when the JSON text parses to exactly `plan` (types included: 1 is not true)."""
    checker = _EntryChecker(plan)
    try:
        return _document_is(json.loads(data, object_hook=checker), checker, plan)
    except (ValueError, KeyError, TypeError, AttributeError, PlanError):
        return False


def json_pieces_read_back(chunks: Iterable[bytes], plan: PackagePlan) -> bool:
    """json_reads_back of the bytes `chunks` make, read a piece at a time (package/json_pieces.py):
    a file checked from disk this way is never held whole."""
    checker = _EntryChecker(plan)
    try:
        return _document_is(loads_in_pieces(chunks, object_hook=checker, undo=checker.saved), checker, plan)
    except (ValueError, KeyError, TypeError, AttributeError, PlanError):
        return False


def _document_is(doc: object, checker: _EntryChecker, plan: PackagePlan) -> bool:
    """The parsed document (its entries matched as they were parsed) is exactly `plan`."""
    arenas = doc["arenas"]
    if not isinstance(arenas, list) or len(arenas) != len(plan.arenas):
        return False
    for a, section in zip(arenas, plan.arenas):
        if not (_all_matched(a["offsets"]["tensors"], checker.tensor, len(section.offsets.tensors))
                and _all_matched(a["objects"]["tensors"], checker.pairs["object"],
                                 len(section.objects.assignment))
                and (("passes" in a) == (section.passes is not None))
                and (section.passes is None or _all_matched(a["passes"]["tensors"], checker.pairs["offset"],
                                                            len(section.passes.offsets)))):
            return False
        a["offsets"]["tensors"] = a["objects"]["tensors"] = []  # checked: dropped
        if section.passes is not None:
            a["passes"]["tensors"] = []
    rest = plan_json.from_dict(doc)
    return rest == _without_entries(plan)


def _all_matched(entries: object, marker: _Matched, count: int) -> bool:
    """The list holds exactly `count` entries, each one matched (so, in order, the plan's)."""
    return type(entries) is list and len(entries) == count and entries.count(marker) == count


def _expected_rows(want: TensorColumns, start: int, stop: int) -> list[tuple]:
    """The plan's entries start..stop as the parsed rows are: values in _KEYS' order, each
    shape a list."""
    numbers = {k: want[f][start:stop].tolist() for k, f in zip(_NUMBER_KEYS, NUMBERS)}
    columns = {"alias_of": want.alias_of[start:stop], "kind": want.kind[start:stop],
               "name": want.name[start:stop], "type": want.type[start:stop],
               "shape": list(map(list, want.shape[start:stop])), **numbers}
    return list(zip(*(columns[k] for k in _KEYS)))


def _all_of(kind: type, *columns) -> bool:
    """Every value of exactly this type (bool is not an int here)."""
    return all(set(map(type, c)) <= {kind} for c in columns)


def flatbuffer_reads_back(data: bytes, plan: PackagePlan) -> bool:
    """True when the FlatBuffer parses (as `load` parses it) to exactly `plan`."""
    try:
        rest, columns = plan_flatbuffer.loads_with_columns(data, raw=True)
    except PlanError:
        return False
    if (rest.format, rest.format_version) != (FORMAT_NAME, FORMAT_VERSION):
        return False  # load refuses it
    without = replace(plan, arenas=tuple(replace(s, offsets=replace(s.offsets, tensors=())) for s in plan.arenas))
    if len(columns) != len(plan.arenas) or rest != without:
        return False
    return all(_raw_columns_match(found, section.offsets) for found, section in zip(columns, plan.arenas))


def _raw_columns_match(found: dict | None, offsets: OffsetSection) -> bool:
    """The entries read as stored (plan_flatbuffer._raw_fields) are the plan's: numbers as
    arrays, each text column as its UTF-8 bytes and their lengths (equal bytes of valid UTF-8
    decode to equal text), shapes as ranks and dimensions one after another."""
    if found is None:
        return not offsets.tensors
    want: TensorColumns = tensor_columns(offsets)
    numbers = found["numbers"]
    if found["count"] != want.count or not all(np.array_equal(numbers[f], want[f]) for f in NUMBERS):
        return False
    # alias_of: absent (NO_ALIAS) exactly where the plan has none, the owner elsewhere
    aliases = numbers["alias_of"]
    if not np.array_equal(aliases == plan_flatbuffer.NO_ALIAS, want.planned):
        return False
    owners = [a for a in want.alias_of if a is not None]
    if not np.array_equal(aliases[~want.planned], np.fromiter(owners, np.int64, len(owners))):
        return False
    if not (np.array_equal(numbers["rank"], np.fromiter(map(len, want.shape), np.int64, want.count))
            and np.array_equal(found["dims"], np.fromiter(chain.from_iterable(want.shape), np.int64))):
        return False
    return (all(_texts_equal(found[k], getattr(want, k)) for k in ("kind", "name", "type"))
            and _texts_equal(found["size_expr"], want.size_expr, optional=True))


def _texts_equal(found: tuple, want: list, optional: bool = False) -> bool:
    """(present, byte lengths, bytes) read equal the texts `want` (None: absent, where
    `optional`; else an absent text reads as "")."""
    present, lengths, stored = found
    if optional:
        is_set = np.fromiter((x is not None for x in want), bool, len(want))
        if not np.array_equal(present, is_set):
            return False
        want = [x for x in want if x is not None]
        lengths = lengths[present]
    try:
        joined = "".join(want)  # TypeError for anything not text
        if joined.isascii():  # a character a byte: lengths as they are
            return (np.array_equal(lengths, np.fromiter(map(len, want), np.int64, len(want)))
                    and stored == joined.encode("ascii"))
        encoded = [x.encode("utf-8") for x in want]
    except (TypeError, UnicodeEncodeError):
        return False
    return (np.array_equal(lengths, np.fromiter(map(len, encoded), np.int64, len(encoded)))
            and stored == b"".join(encoded))


def _without_entries(plan: PackagePlan) -> PackagePlan:
    return replace(plan, arenas=tuple(_section_without_entries(s) for s in plan.arenas))


def _section_without_entries(section: ArenaSection) -> ArenaSection:
    return replace(section, offsets=replace(section.offsets, tensors=()),
                   objects=replace(section.objects, assignment=()),
                   passes=None if section.passes is None else replace(section.passes, offsets=()))


@without_collector_pauses
def reads_back(data: bytes, plan: PackagePlan) -> bool:
    """True when the plan file (either form) reads back as exactly `plan`."""
    if data.lstrip()[:1] == b"{":
        return json_reads_back(data, plan)
    return flatbuffer_reads_back(data, plan)
