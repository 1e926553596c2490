"""The packaged plan as JSON (schemas/plan.schema.json), and back.

Keys sorted, two-space indent, a final newline: the same plan always gives the same bytes. The
dynamic-shape fields (symbols, each arena's multi-pass plan, each tensor's size expression) are
written only for a model with dynamic shapes, so a static model's file has none of them.
"""

from __future__ import annotations

import json
import re
from itertools import chain
from typing import Any, Iterator

from json.encoder import encode_basestring

from packager.emit.json_text import Written, dumps_indented_bytes, dumps_indented_text

_INDENT = "  "
from packager.errors import PlanError
from packager.package.columns import NUMBERS, tensor_columns
from packager.package.sidecar import (ArenaSection, ObjectSection, OffsetSection, PackagePlan,
                                   PassSection, PersistentEntry, RuntimeArena, SourceModel, SymbolEntry,
                                   TensorEntry)

_RUNTIME_ARENA_FIELDS = ("runtime", "target", "arena_bytes", "head_bytes", "tail_bytes",
                         "setup_bytes", "exact", "modelled", "rule", "reason")


def to_dict(plan: PackagePlan, fast: bool = False, tensors_as=None) -> dict[str, Any]:
    """The plan as a JSON document; `fast`: each offset plan's tensor list as text already written
    (json_text.Written), for dumps only; `tensors_as`: what stands for each tensor list instead."""
    doc = {
        "format": plan.format,
        "format_version": plan.format_version,
        "generator": plan.generator,
        "source": {"file": plan.source.file, "sha256": plan.source.sha256, "bytes": plan.source.bytes,
                   "subgraph_tensor_counts": list(plan.source.subgraph_tensor_counts)},
        "semantics": plan.semantics,
        "alignment": plan.alignment,
        "arenas": [_arena(a, fast, tensors_as) for a in plan.arenas],
    }
    if plan.symbols:
        doc["symbols"] = [{"name": s.name, "source": s.source, "data_dependent": s.data_dependent,
                           "pass": s.pass_, "min": s.min, "max": s.max} for s in plan.symbols]
    if plan.runtime_arena is not None:
        doc["runtime_arena"] = {k: getattr(plan.runtime_arena, k) for k in _RUNTIME_ARENA_FIELDS}
        if plan.runtime_arena.head_plan:  # written only when the head is not this plan
            doc["runtime_arena"]["head_plan"] = plan.runtime_arena.head_plan
    return doc


def _arena(a: ArenaSection, fast: bool = False, tensors_as=None) -> dict[str, Any]:
    doc = {
        "subgraph": a.subgraph,
        "inline": a.inline,
        "steps": a.steps,
        "offsets": {"strategy": a.offsets.strategy, "arena_bytes": a.offsets.arena_bytes,
                    "lower_bound": a.offsets.lower_bound,
                    "tensors": (tensors_as or _tensors_written)(a.offsets) if fast else
                    [_tensor(t) for t in a.offsets.tensors],
                    "optimal": a.offsets.optimal},
        "objects": {"strategy": a.objects.strategy, "total_bytes": a.objects.total_bytes,
                    "lower_bound": a.objects.lower_bound, "optimal": a.objects.optimal,
                    "object_sizes": list(a.objects.object_sizes),
                    "tensors": _pairs_written(a.objects.assignment, "object") if fast else
                    [{"index": i, "object": k} for i, k in a.objects.assignment]},
        "persistent": [{"index": p.index, "subgraph": p.subgraph, "tensor": p.tensor, "name": p.name,
                        "size": p.size} for p in a.persistent],
        "persistent_bytes": a.persistent_bytes,
    }
    if a.passes is not None:
        doc["passes"] = {"arena_bytes": a.passes.arena_bytes,
                         "tensors": _pairs_written(a.passes.offsets, "offset") if fast else
                         [{"index": i, "offset": o} for i, o in a.passes.offsets]}
    return doc


def _tensor(t: TensorEntry) -> dict[str, Any]:
    doc = {"index": t.index, "subgraph": t.subgraph, "tensor": t.tensor, "kind": t.kind,
           "name": t.name, "type": t.type, "shape": list(t.shape), "offset": t.offset,
           "size": t.size, "first_op": t.first_op, "last_op": t.last_op, "alias_of": t.alias_of,
           "pass": t.pass_}
    if t.size_expr is not None:
        doc["size_expr"] = t.size_expr
    return doc


def _tensors_written(section: OffsetSection) -> Written:
    """The offset plan's tensor entries' text at a level, as dumps_indented would write the list
    of their dicts (keys sorted), from one format per entry: the general writer costs a second
    at 100,000."""
    return Written(lambda level: list(_tensor_chunks(section, level)))


_ENTRIES_PER_CHUNK = 4096  # entries joined into one piece: pieces of a few megabytes, not one per entry


def _tensor_chunks(section: OffsetSection, level: int) -> Iterator[str]:
    """The text of _tensors_written at `level`, a chunk of entries at a time: each entry one
    f-string over the chunk's columns (package/columns.py, built once for the plan check and
    the read-back too), each shape's text made once."""
    tensors = section.tensors
    if not tensors:
        yield "[]"
        return
    pad, key, dim = ("\n" + _INDENT * (level + k) for k in (1, 2, 3))
    h0, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12 = (
        ("{" if i == 0 else ",") + key + f'"{k}": ' for i, k in enumerate(_TENSOR_KEYS))
    end = pad + "}"
    columns = tensor_columns(section)
    shapes = _ShapeTexts(dim, key + "]")
    text_of = encode_basestring
    for start in range(0, len(tensors), _ENTRIES_PER_CHUNK):
        stop = start + _ENTRIES_PER_CHUNK
        numbers = {f: columns[f][start:stop].tolist() for f in NUMBERS}
        exprs = columns.size_expr[start:stop]
        expr = ([""] * len(exprs) if exprs.count(None) == len(exprs) else
                ["" if e is None else "," + key + '"size_expr": ' + text_of(e) for e in exprs])
        entries = zip(["null" if a is None else str(a) for a in columns.alias_of[start:stop]],
                      numbers["first_op"], numbers["index"], map(text_of, columns.kind[start:stop]),
                      numbers["last_op"], map(text_of, columns.name[start:stop]), numbers["offset"],
                      numbers["pass_"], map(shapes.__getitem__, columns.shape[start:stop]), numbers["size"],
                      expr, numbers["subgraph"], numbers["tensor"], map(text_of, columns.type[start:stop]))
        # size_expr, where an entry has one, after size: its text with its key, else ""
        yield ("[" if start == 0 else ",") + pad + ("," + pad).join([
            f"{h0}{a}{h1}{f}{h2}{i}{h3}{k}{h4}{l}{h5}{n}{h6}{o}{h7}{p}{h8}{sh}{h9}{sz}{e}{h10}{sg}{h11}{t}{h12}{ty}{end}"
            for a, f, i, k, l, n, o, p, sh, sz, e, sg, t, ty in entries])
    yield "\n" + _INDENT * level + "]"


class _ShapeTexts(dict):
    """A shape's text in a tensor entry, worked out once per shape (a model has few)."""

    def __init__(self, dim: str, end: str) -> None:
        super().__init__()
        self._dim, self._end = dim, end

    def __missing__(self, shape: tuple[int, ...]) -> str:
        text = self[shape] = ("[" + self._dim + ("," + self._dim).join(map(str, shape)) + self._end
                              if shape else "[]")
        return text


def _pairs_written(pairs: tuple[tuple[int, int], ...], second: str) -> Written | list[dict[str, int]]:
    """The ("index", `second`) entries' text at a level, as dumps_indented would write the list of
    their dicts ("index" sorts first), from one format per entry; the list of dicts itself when a
    value is not a plain integer (the general writer's rules then apply)."""
    if not pairs or set(map(type, chain.from_iterable(pairs))) != {int}:
        return [{"index": i, second: v} for i, v in pairs]

    def render(level: int) -> list[str]:
        pad, key = ("\n" + _INDENT * (level + k) for k in (1, 2))
        first, then, end = "{" + key + '"index": ', "," + key + f'"{second}": ', pad + "}"
        body = ("," + pad).join([f"{first}{i}{then}{v}{end}" for i, v in pairs])
        return ["[" + pad, body, "\n" + _INDENT * level + "]"]
    return Written(render)


# the keys of a tensor entry in sorted order, but for size_expr (written after size when present)
_TENSOR_KEYS = ("alias_of", "first_op", "index", "kind", "last_op", "name", "offset", "pass", "shape",
                "size", "subgraph", "tensor", "type")


def dumps(plan: PackagePlan) -> bytes:
    """The text of json.dumps(indent=2, sort_keys=True, ensure_ascii=False), written faster, as
    UTF-8 bytes (`package` writes the same bytes a piece at a time: encoded_pieces)."""
    return dumps_indented_bytes(to_dict(plan, fast=True), end="\n")


_SLOT = re.compile("\x00([0-9]+)\x00")  # a NUL is never raw in JSON text: strings escape it


def text_pieces(plan: PackagePlan) -> Iterator[str]:
    """The pieces of dumps(plan)'s text in order, each tensor list a chunk of entries at a
    time: the document is written with a slot for each tensor list, which is then filled in."""
    lists: list[tuple[int, OffsetSection]] = []

    def slot(section: OffsetSection) -> Written:
        def render(level: int) -> list[str]:
            lists.append((level, section))
            return [f"\x00{len(lists) - 1}\x00"]
        return Written(render)

    skeleton = _SLOT.split(dumps_indented_text(to_dict(plan, fast=True, tensors_as=slot), end="\n"))
    for k, part in enumerate(skeleton):
        if k % 2 == 0:
            if part:
                yield part
        else:
            level, section = lists[int(part)]
            yield from _tensor_chunks(section, level)


def encoded_pieces(plan: PackagePlan) -> Iterator[bytes]:
    """dumps(plan)'s bytes, a piece at a time (never the whole text)."""
    for piece in text_pieces(plan):
        yield piece.encode("utf-8")


def loads(data: bytes) -> PackagePlan:
    """Parse a JSON plan; PlanError (naming the missing or mistyped field) on anything else."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise PlanError(f"not a JSON plan file ({e})") from None
    try:
        return from_dict(doc)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise PlanError(f"malformed JSON plan: {type(e).__name__} {e}") from None


def from_dict(doc: dict[str, Any]) -> PackagePlan:
    src = doc["source"]
    return PackagePlan(
        format=_str(doc["format"]), format_version=_int(doc["format_version"]),
        generator=_str(doc["generator"]),
        source=SourceModel(_str(src["file"]), _str(src["sha256"]), _int(src["bytes"]),
                           tuple(_int(n) for n in src["subgraph_tensor_counts"])),
        semantics=_str(doc["semantics"]), alignment=_int(doc["alignment"]),
        arenas=tuple(_arena_from(a) for a in doc["arenas"]),
        symbols=tuple(SymbolEntry(_str(s["name"]), _str(s["source"]), _bool(s["data_dependent"]),
                                  _int(s["pass"]), _int(s["min"]), _int(s["max"]))
                      for s in doc.get("symbols", ())),
        runtime_arena=None if "runtime_arena" not in doc else _runtime_arena_from(doc["runtime_arena"]))


def _runtime_arena_from(r: dict[str, Any]) -> RuntimeArena:
    return RuntimeArena(_str(r["runtime"]), _str(r["target"]), _int(r["arena_bytes"]),
                        _int(r["head_bytes"]), _int(r["tail_bytes"]), _int(r["setup_bytes"]),
                        _bool(r["exact"]), _bool(r["modelled"]), _str(r["rule"]), _str(r["reason"]),
                        _str(r.get("head_plan", "")))


def _arena_from(a: dict[str, Any]) -> ArenaSection:
    off, obj = a["offsets"], a["objects"]
    return ArenaSection(
        subgraph=_int(a["subgraph"]), inline=_bool(a["inline"]), steps=_int(a["steps"]),
        offsets=OffsetSection(_str(off["strategy"]), _int(off["arena_bytes"]), _int(off["lower_bound"]),
                              _tensors_from(off["tensors"]),
                              _bool(off.get("optimal", False))),
        objects=ObjectSection(_str(obj["strategy"]), _int(obj["total_bytes"]), _int(obj["lower_bound"]),
                              tuple(_int(s) for s in obj["object_sizes"]),
                              _pairs_from(obj["tensors"], "object"),
                              _bool(obj.get("optimal", False))),
        persistent=tuple(PersistentEntry(_int(p["index"]), _int(p["subgraph"]), _int(p["tensor"]),
                                         _str(p["name"]), _int(p["size"])) for p in a["persistent"]),
        persistent_bytes=_int(a["persistent_bytes"]),
        passes=None if "passes" not in a else PassSection(
            _int(a["passes"]["arena_bytes"]),
            _pairs_from(a["passes"]["tensors"], "offset")))


_INT_FIELDS = ("index", "subgraph", "tensor", "offset", "size", "first_op", "last_op", "pass")
_STR_FIELDS = ("kind", "name", "type")
_ABSENT = object()


def _tensors_from(entries: list[dict[str, Any]]) -> tuple[TensorEntry, ...]:
    """The tensor entries read field by field over the whole list (per-entry checks cost a second
    at 100,000 tensors); anything unexpected is read again entry by entry, for its error."""
    try:
        ints = {k: [t[k] for t in entries] for k in _INT_FIELDS}
        strs = {k: [t[k] for t in entries] for k in _STR_FIELDS}
        shapes, aliases = [t["shape"] for t in entries], [t["alias_of"] for t in entries]
        exprs = [t.get("size_expr", _ABSENT) for t in entries]
    except (KeyError, TypeError, AttributeError):
        return tuple(_tensor_from(t) for t in entries)
    plain = (_all_of(int, *ints.values()) and _all_of(str, *strs.values()) and _all_of(list, shapes)
             and _all_of(int, list(chain.from_iterable(shapes))) and _all_of(int, [a for a in aliases if a is not None])
             and _all_of(str, [e for e in exprs if e is not _ABSENT]))
    if not plain:
        return tuple(_tensor_from(t) for t in entries)
    return tuple(map(TensorEntry, ints["index"], ints["subgraph"], ints["tensor"], strs["kind"], strs["name"],
                     strs["type"], map(tuple, shapes), ints["offset"], ints["size"], ints["first_op"],
                     ints["last_op"], aliases, ints["pass"], (None if e is _ABSENT else e for e in exprs)))


def _all_of(kind: type, *columns: list) -> bool:
    """Every value of every column of exactly this type (bool is not an int here)."""
    return all(set(map(type, c)) <= {kind} for c in columns)


def _pairs_from(entries: list[dict[str, Any]], second: str) -> tuple[tuple[int, int], ...]:
    """(index, `second`) of each entry, both integers; read column by column, like the tensors."""
    try:
        firsts, seconds = [t["index"] for t in entries], [t[second] for t in entries]
    except (KeyError, TypeError, AttributeError):
        firsts = seconds = None
    if firsts is None or not _all_of(int, firsts, seconds):
        return tuple((_int(t["index"]), _int(t[second])) for t in entries)
    return tuple(zip(firsts, seconds))


def _tensor_from(t: dict[str, Any]) -> TensorEntry:
    alias = t["alias_of"]
    return TensorEntry(_int(t["index"]), _int(t["subgraph"]), _int(t["tensor"]), _str(t["kind"]),
                       _str(t["name"]), _str(t["type"]), tuple(_int(d) for d in t["shape"]),
                       _int(t["offset"]), _int(t["size"]), _int(t["first_op"]), _int(t["last_op"]),
                       None if alias is None else _int(alias), _int(t["pass"]),
                       None if "size_expr" not in t else _str(t["size_expr"]))


def _int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"expected an integer, got {v!r}")
    return v


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise TypeError(f"expected a string, got {v!r}")
    return v


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise TypeError(f"expected true or false, got {v!r}")
    return v
