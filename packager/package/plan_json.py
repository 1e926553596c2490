"""The packaged plan as JSON (schemas/plan.schema.json), and back.

Written by the standard library (keys sorted, on one line, a final newline: the same plan always
gives the same bytes). Each list of entries is stored as columns, one list per field, as the
plan holds them. The dynamic-shape fields (symbols, each arena's multi-pass plan, the tensors'
size expressions) are written only for a model with dynamic shapes. `package` adds "files": the
other files its run wrote, each with its sha256 and size, so that a later run into the same
folder can tell them from the user's (packager/package/owned_files.py). Version 1 files (an object
per entry) are still read.
"""

from __future__ import annotations

import json
from typing import Any, Iterable


from packager.errors import PlanError
from packager.package.columns import NO_ALIAS, NUMBERS, TensorColumns, TensorEntry
from packager.package.sidecar import (ArenaSection, ObjectSection, OffsetSection, PackagePlan,
                                      PassSection, PersistentEntry, Region, RuntimeArena, SourceModel,
                                      SymbolEntry, WrittenFile)

_RUNTIME_ARENA_FIELDS = ("runtime", "target", "arena_bytes", "head_bytes", "tail_bytes",
                         "setup_bytes", "exact", "modelled", "rule", "reason", "bound")
_REGION_FIELDS = ("part", "section", "capacity", "bytes", "bound", "reason")
# TensorColumns' numbers by their JSON keys ("pass_" is "pass")
_NUMBER_KEYS = {f: "pass" if f == "pass_" else f for f in NUMBERS}


# -- writing ---------------------------------------------------------------------------------

def dumps(plan: PackagePlan, files: Iterable[WrittenFile] = ()) -> bytes:
    """`files`: the other files of the run, recorded under "files" (by name) when given."""
    doc, files = to_dict(plan), tuple(files)
    if files:
        doc["files"] = [{"name": f.name, "sha256": f.sha256, "bytes": f.bytes}
                        for f in sorted(files, key=lambda f: f.name)]
    return (json.dumps(doc, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def to_dict(plan: PackagePlan) -> dict[str, Any]:
    """The plan as a JSON document of plain lists, dicts and scalars."""
    doc = {
        "format": plan.format,
        "format_version": plan.format_version,
        "generator": plan.generator,
        "source": {"file": plan.source.file, "sha256": plan.source.sha256, "bytes": plan.source.bytes,
                   "subgraph_tensor_counts": list(plan.source.subgraph_tensor_counts)},
        "semantics": plan.semantics,
        "alignment": plan.alignment,
        "arenas": [_arena(a) for a in plan.arenas],
    }
    if plan.symbols:
        doc["symbols"] = [{"name": s.name, "source": s.source, "data_dependent": s.data_dependent,
                           "pass": s.pass_, "min": s.min, "max": s.max} for s in plan.symbols]
    if plan.runtime_arena is not None:
        doc["runtime_arena"] = {k: getattr(plan.runtime_arena, k) for k in _RUNTIME_ARENA_FIELDS}
        if plan.runtime_arena.head_plan:  # written only when the head is not this plan
            doc["runtime_arena"]["head_plan"] = plan.runtime_arena.head_plan
        if plan.runtime_arena.not_run:  # written only when no build of the target ran the model
            doc["runtime_arena"]["not_run"] = plan.runtime_arena.not_run
    if plan.regions:  # written only with --regions
        doc["regions"] = [{k: getattr(r, k) for k in _REGION_FIELDS} for r in plan.regions]
    return doc


def _arena(a: ArenaSection) -> dict[str, Any]:
    doc = {
        "subgraph": a.subgraph,
        "inline": a.inline,
        "steps": a.steps,
        "offsets": {"strategy": a.offsets.strategy, "arena_bytes": a.offsets.arena_bytes,
                    "lower_bound": a.offsets.lower_bound, "tensors": _tensor_columns(a.offsets.tensors),
                    "optimal": a.offsets.optimal},
        "objects": {"strategy": a.objects.strategy, "total_bytes": a.objects.total_bytes,
                    "lower_bound": a.objects.lower_bound, "optimal": a.objects.optimal,
                    "object_sizes": list(a.objects.object_sizes),
                    "tensors": _pair_columns(a.objects.assignment, "object")},
        "persistent": [{"index": p.index, "subgraph": p.subgraph, "tensor": p.tensor, "name": p.name,
                        "size": p.size} for p in a.persistent],
        "persistent_bytes": a.persistent_bytes,
    }
    if a.passes is not None:
        doc["passes"] = {"arena_bytes": a.passes.arena_bytes,
                         "tensors": _pair_columns(a.passes.offsets, "offset")}
    return doc


def _tensor_columns(c: TensorColumns) -> dict[str, list]:
    doc = {key: c[f].tolist() for f, key in _NUMBER_KEYS.items()}
    doc["alias_of"] = [None if a == NO_ALIAS else a for a in doc["alias_of"]]
    doc.update(kind=list(c.kind), name=list(c.name), type=list(c.type), shape=list(map(list, c.shape)))
    if c.size_expr.count(None) != c.count:  # dynamic shapes only
        doc["size_expr"] = list(c.size_expr)
    return doc


def _pair_columns(pairs: tuple[tuple[int, int], ...], second: str) -> dict[str, list[int]]:
    return {"index": [i for i, _ in pairs], second: [v for _, v in pairs]}


# -- reading ---------------------------------------------------------------------------------

def loads(data: bytes) -> PackagePlan:
    """Parse a JSON plan; PlanError (naming the missing or mistyped field) on anything else."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise PlanError(f"not a JSON plan file ({e})") from None
    try:
        return from_dict(doc)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as e:
        raise PlanError(f"malformed JSON plan: {type(e).__name__} {e}") from None


def from_dict(doc: dict[str, Any]) -> PackagePlan:
    src = doc["source"]
    version = _int(doc["format_version"])
    return PackagePlan(
        format=_str(doc["format"]), format_version=version,
        generator=_str(doc["generator"]),
        source=SourceModel(_str(src["file"]), _str(src["sha256"]), _int(src["bytes"]),
                           tuple(_int(n) for n in src["subgraph_tensor_counts"])),
        semantics=_str(doc["semantics"]), alignment=_int(doc["alignment"]),
        arenas=tuple(_arena_from(a, version) for a in doc["arenas"]),
        symbols=tuple(SymbolEntry(_str(s["name"]), _str(s["source"]), _bool(s["data_dependent"]),
                                  _int(s["pass"]), _int(s["min"]), _int(s["max"]))
                      for s in doc.get("symbols", ())),
        runtime_arena=None if "runtime_arena" not in doc else _runtime_arena_from(doc["runtime_arena"]),
        regions=tuple(Region(_str(r["part"]), _str(r["section"]), _int(r["capacity"]), _int(r["bytes"]),
                             _str(r["bound"]), _str(r["reason"])) for r in _of_type(dict, doc.get("regions", []))))


def written_files(doc: dict[str, Any]) -> tuple[WrittenFile, ...]:
    """The record of the other files the plan's run wrote ("files"); () in a plan without one."""
    return tuple(WrittenFile(_str(f["name"]), _str(f["sha256"]), _int(f["bytes"]))
                 for f in _of_type(dict, doc.get("files", [])))


def _runtime_arena_from(r: dict[str, Any]) -> RuntimeArena:
    return RuntimeArena(_str(r["runtime"]), _str(r["target"]), _int(r["arena_bytes"]),
                        _int(r["head_bytes"]), _int(r["tail_bytes"]), _int(r["setup_bytes"]),
                        _bool(r["exact"]), _bool(r["modelled"]), _str(r["rule"]), _str(r["reason"]),
                        _str(r.get("head_plan", "")),
                        # a plan written before standings were recorded: exact as it said, else unknown
                        _str(r.get("bound", "exact" if r["exact"] is True else "unknown")),
                        _str(r.get("not_run", "")))


def _arena_from(a: dict[str, Any], version: int) -> ArenaSection:
    off, obj = a["offsets"], a["objects"]
    tensors, pairs = (_tensors_v1, _pairs_v1) if version == 1 else (_tensors_from, _pairs_from)
    return ArenaSection(
        subgraph=_int(a["subgraph"]), inline=_bool(a["inline"]), steps=_int(a["steps"]),
        offsets=OffsetSection(_str(off["strategy"]), _int(off["arena_bytes"]), _int(off["lower_bound"]),
                              tensors(off["tensors"]), _bool(off.get("optimal", False))),
        objects=ObjectSection(_str(obj["strategy"]), _int(obj["total_bytes"]), _int(obj["lower_bound"]),
                              tuple(_int(s) for s in obj["object_sizes"]),
                              pairs(obj["tensors"], "object"), _bool(obj.get("optimal", False))),
        persistent=tuple(PersistentEntry(_int(p["index"]), _int(p["subgraph"]), _int(p["tensor"]),
                                         _str(p["name"]), _int(p["size"])) for p in a["persistent"]),
        persistent_bytes=_int(a["persistent_bytes"]),
        passes=None if "passes" not in a else PassSection(
            _int(a["passes"]["arena_bytes"]), pairs(a["passes"]["tensors"], "offset")))


def _tensors_from(columns: dict[str, Any]) -> TensorColumns:
    """Version 2: a list per field, each value of its field's type (1 is not true)."""
    if type(columns) is not dict:
        raise TypeError(f"expected the tensors' columns, got {type(columns).__name__}")
    numbers = {f: _ints(columns[key], none_is=NO_ALIAS if f == "alias_of" else None)
               for f, key in _NUMBER_KEYS.items()}
    shapes = _of_type(list, columns["shape"])
    for shape in shapes:
        _ints(shape)
    count = len(shapes)
    exprs = columns.get("size_expr", [None] * count)
    _of_type(str, [e for e in _of_type(object, exprs) if e is not None])
    return TensorColumns(kind=_of_type(str, columns["kind"]), name=_of_type(str, columns["name"]),
                         type=_of_type(str, columns["type"]), shape=shapes, size_expr=exprs, **numbers)


def _pairs_from(columns: dict[str, Any], second: str) -> tuple[tuple[int, int], ...]:
    if type(columns) is not dict or columns.keys() != {"index", second}:
        raise KeyError(f"expected the columns index and {second}")
    index, values = _ints(columns["index"]), _ints(columns[second])
    if len(index) != len(values):
        raise ValueError(f"index and {second} differ in length")
    return tuple(zip(index, values))


def _ints(values: Any, none_is: int | None = None) -> list[int]:
    """A list of integers (bool is not one); None stands for `none_is` where it is given."""
    kinds = set(map(type, _of_type(object, values)))
    if none_is is not None and type(None) in kinds:
        kinds.discard(type(None))
        values = [none_is if v is None else v for v in values]
    if not kinds <= {int}:
        raise TypeError(f"expected integers, got {sorted(k.__name__ for k in kinds - {int})}")
    return values


def _of_type(kind: type, values: Any) -> list:
    if type(values) is not list:
        raise TypeError(f"expected a list, got {type(values).__name__}")
    if kind is not object and not set(map(type, values)) <= {kind}:
        raise TypeError(f"expected a list of {kind.__name__}")
    return values


def _tensors_v1(entries: list[dict[str, Any]]) -> TensorColumns:
    """Version 1: an object per entry."""
    return TensorColumns.of_entries(_tensor_v1(t) for t in _of_type(dict, entries))


def _tensor_v1(t: dict[str, Any]) -> TensorEntry:
    alias = t["alias_of"]
    return TensorEntry(_int(t["index"]), _int(t["subgraph"]), _int(t["tensor"]), _str(t["kind"]),
                       _str(t["name"]), _str(t["type"]), tuple(_int(d) for d in t["shape"]),
                       _int(t["offset"]), _int(t["size"]), _int(t["first_op"]), _int(t["last_op"]),
                       None if alias is None else _int(alias), _int(t["pass"]),
                       None if "size_expr" not in t else _str(t["size_expr"]))


def _pairs_v1(entries: list[dict[str, Any]], second: str) -> tuple[tuple[int, int], ...]:
    return tuple((_int(t["index"]), _int(t[second])) for t in _of_type(dict, entries))


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
