"""Does a plan file just written read back as the plan it was written from?

Both forms are parsed in full from the written bytes (the JSON by the standard library's parser,
the FlatBuffer by this package's reader) and compared with the plan: the tensor entries, which
are nearly all of a large plan, against the plan's columns (the JSON's a run of a few thousand
entries at a time as the parser reads them, so that no parsed copy is held; the FlatBuffer's
column by column), the rest of the
document as a parsed plan. Types count: 1 is not true.
"""

from __future__ import annotations

import json
from itertools import chain
from dataclasses import replace
from operator import itemgetter, methodcaller
from typing import Iterable

import numpy as np

from packager.errors import PlanError
from packager.package import plan_flatbuffer, plan_json
from packager.package.json_pieces import arrays_replaced, loads_in_pieces
from packager.package.columns import NUMBERS, TensorColumns, Utf8Texts, tensor_columns
from packager.package.sidecar import FORMAT_NAME, FORMAT_VERSION, ArenaSection, OffsetSection, PackagePlan

# A tensor entry's keys (size_expr, with dynamic shapes only, besides), the numbers among them
# (in columns.NUMBERS' order: "pass" is pass_), and an object or pass entry's.
_KEYS = ("alias_of", "first_op", "index", "kind", "last_op", "name", "offset", "pass", "shape", "size",
         "subgraph", "tensor", "type")
_NUMBER_KEYS = ("index", "subgraph", "tensor", "offset", "size", "first_op", "last_op", "pass")
_TEXT_KEYS = ("kind", "name", "type")
_ROW = itemgetter(*_KEYS)
_SIZE_EXPR = methodcaller("get", "size_expr")
_INT, _INT_OR_NONE, _LIST = {int}, {int, type(None)}, {list}


class _Matched:
    """What entries of the file that equal the plan's next ones become as they are parsed: the
    entries are compared a run at a time while json reads them, so none is held (a parsed copy
    of a large plan held more than the model itself). One marker per kind of entry."""
    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"<matched {self.kind} entry>"


class _Pairs:
    """The plan's ("index", `second`) pairs, arenas in order, and how many the file gave so far."""
    __slots__ = ("want", "at", "second", "marker", "values")

    def __init__(self, want: list[tuple[int, int]], second: str) -> None:
        self.want, self.at, self.second, self.marker = want, 0, second, _Matched(second)
        self.values = itemgetter("index", second)


class _EntryChecker:
    """json_pieces' `runs`: each run of tensor entries (the writer's keys, in any order) is
    compared with the plan's next tensor entries, each run of ("index", "object") or ("index",
    "offset") pairs with the plan's next pairs of that kind, arenas in order, a whole column at
    a time: key for key and type for type (1 is not true, 1.0 is not 1). A run that matches
    becomes markers; any other run stays as parsed (and so fails the check of its list). A run
    is of the kind its first element's keys say: a list of a plan holds one kind of entry."""

    def __init__(self, plan: PackagePlan) -> None:
        self.tensor = _Matched("tensor")
        self._sections = [tensor_columns(section.offsets) for section in plan.arenas]
        self._at_tensor = 0  # tensor entries the file gave so far, arenas in order
        objects = _Pairs([p for s in plan.arenas for p in s.objects.assignment], "object")
        offsets = _Pairs([p for s in plan.arenas if s.passes is not None for p in s.passes.offsets], "offset")
        self.pairs = {"object": objects.marker, "offset": offsets.marker}
        self._pair_kinds = {("index", "object"): objects, ("object", "index"): objects,
                            ("index", "offset"): offsets, ("offset", "index"): offsets}

    def __call__(self, run: list) -> list:
        first = run[0] if run else None
        if type(first) is not dict:
            return run
        n = len(first)
        if n == 2:
            pairs = self._pair_kinds.get(tuple(first))
            return run if pairs is None else self._pairs_run(run, pairs)
        if n == 13 or n == 14:
            return self._tensor_run(run)
        return run

    def _pairs_run(self, run: list, pairs: _Pairs) -> list:
        k, at = len(run), pairs.at
        want = pairs.want[at:at + k]
        pairs.at = at + k
        try:
            found = list(map(pairs.values, run))  # KeyError, TypeError: not such a pair
        except (KeyError, TypeError):
            return run
        if (found == want and len(want) == k and set(map(len, run)) == {2}
                and set(map(type, chain.from_iterable(found))) == _INT):
            return [pairs.marker] * k
        return run

    def _tensor_run(self, run: list) -> list:
        k, at = len(run), self._at_tensor
        self._at_tensor = at + k
        for want in self._sections:  # the section of the plan these entries should be
            if at < want.count:
                break
            at -= want.count
        else:
            return run
        stop = at + k
        if stop > want.count:  # more entries than the plan's list has
            return run
        try:
            rows = list(map(_ROW, run))  # KeyError, TypeError: not a tensor entry
            lengths = list(map(len, run))
        except (KeyError, TypeError):
            return run
        # the keys: exactly _KEYS, and size_expr (text) exactly where the plan has one
        exprs = want.size_expr[at:stop]
        if exprs.count(None) == k:
            if lengths.count(13) != k:
                return run
        elif (lengths != [13 if e is None else 14 for e in exprs]
              or list(map(_SIZE_EXPR, run)) != exprs):
            return run
        found = dict(zip(_KEYS, zip(*rows)))  # a tuple per key
        numbers = [found[key] for key in _NUMBER_KEYS]
        shapes, aliases = found["shape"], found["alias_of"]
        if (all(got == tuple(want[f][at:stop].tolist()) for got, f in zip(numbers, NUMBERS))
                and all(found[key] == tuple(getattr(want, key)[at:stop]) for key in _TEXT_KEYS)  # equal: text
                and aliases == tuple(want.alias_of[at:stop])
                # equal and int, so not bool or float (counted: quicker than a set of types)
                and list(map(type, chain.from_iterable(numbers))).count(int) == len(numbers) * k
                and set(map(type, aliases)) <= _INT_OR_NONE
                and set(map(type, shapes)) == _LIST
                and tuple(map(tuple, shapes)) == tuple(want.shape[at:stop])
                and set(map(type, chain.from_iterable(shapes))) <= _INT):
            return [self.tensor] * k
        return run


def json_reads_back(data: bytes, plan: PackagePlan) -> bool:
    """True when the JSON text parses to exactly `plan` (types included: 1 is not true)."""
    checker = _EntryChecker(plan)
    try:
        return _document_is(arrays_replaced(json.loads(data), checker), checker, plan)
    except (ValueError, KeyError, TypeError, AttributeError, PlanError):
        return False


def json_pieces_read_back(chunks: Iterable[bytes], plan: PackagePlan) -> bool:
    """json_reads_back of the bytes `chunks` make, read a piece at a time (package/json_pieces.py):
    a file checked from disk this way is never held whole."""
    checker = _EntryChecker(plan)
    try:
        return _document_is(loads_in_pieces(chunks, runs=checker), checker, plan)
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
    try:  # the plan's own columns as the writer took them (TypeError: a text that is not one)
        aliases, ranks, dims = want.alias_numbers(), want.ranks(), want.dims()
        texts = {k: want.utf8(k) for k in ("kind", "name", "type", "size_expr")}
    except (OverflowError, TypeError, UnicodeEncodeError):
        return False
    # alias_of: absent (NO_ALIAS) exactly where the plan has none, the owner elsewhere
    if not (np.array_equal(numbers["alias_of"] == plan_flatbuffer.NO_ALIAS, want.planned)
            and np.array_equal(numbers["alias_of"][~want.planned], aliases[~want.planned])):
        return False
    if not (np.array_equal(numbers["rank"], ranks) and np.array_equal(found["dims"], dims)):
        return False
    return (all(_texts_equal(found[k], texts[k]) for k in ("kind", "name", "type"))
            and _texts_equal(found["size_expr"], texts["size_expr"], optional=True))


def _texts_equal(found: tuple, want: Utf8Texts, optional: bool = False) -> bool:
    """(present, byte lengths, bytes) read equal the texts `want` (an absent one: where
    `optional`, absent in the plan too; else read as "", and no plan text is absent)."""
    present, lengths, stored = found
    if optional:
        is_set = want.lengths >= 0
        return (np.array_equal(present, is_set) and np.array_equal(lengths[present], want.lengths[is_set])
                and stored == want.data)
    return np.array_equal(lengths, want.lengths) and stored == want.data


def _without_entries(plan: PackagePlan) -> PackagePlan:
    return replace(plan, arenas=tuple(_section_without_entries(s) for s in plan.arenas))


def _section_without_entries(section: ArenaSection) -> ArenaSection:
    return replace(section, offsets=replace(section.offsets, tensors=()),
                   objects=replace(section.objects, assignment=()),
                   passes=None if section.passes is None else replace(section.passes, offsets=()))


def reads_back(data: bytes, plan: PackagePlan) -> bool:
    """True when the plan file (either form) reads back as exactly `plan`."""
    if data.lstrip()[:1] == b"{":
        return json_reads_back(data, plan)
    return flatbuffer_reads_back(data, plan)
