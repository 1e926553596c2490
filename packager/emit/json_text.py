"""JSON text exactly as `json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)` writes it,
several times faster: the standard library's C encoder is not used when `indent` is set, and its
pure-Python one costs seconds on a plan with 100,000 tensors. Lists of objects that share one set
of keys and hold scalars (a plan's tensor entries) are written from one template per key set."""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any

from packager.emit.json_stream import scalar_text

_INDENT = "  "


def dumps_indented(doc: Any) -> str:
    """The text of `doc` (dicts, lists, tuples, str, int, bool, None, float)."""
    out: list[str] = []
    _value(doc, 0, out)
    return "".join(out)


def dumps_indented_text(doc: Any, end: str = "") -> str:
    """dumps_indented(doc) + end, the pieces dropped as soon as they are joined."""
    out: list[str] = []
    _value(doc, 0, out)
    out.append(end)
    text = "".join(out)
    del out
    return text


def dumps_indented_bytes(doc: Any, end: str = "") -> bytes:
    """The UTF-8 bytes of dumps_indented(doc) + end, holding at most two copies of the text (a
    plan of 100,000 tensors is tens of megabytes of it)."""
    out: list[str] = []
    _value(doc, 0, out)
    out.append(end)
    text = "".join(out)
    del out
    return text.encode("utf-8")


def _scalar(v: Any) -> str | None:
    """The text of a scalar, None for a container (the standard library's rules, NaN and
    Infinity included)."""
    return scalar_text(v, encode_basestring)


class Written:
    """A value whose JSON text a caller has already written for the level it sits at (a long list
    written column by column); dumps_indented puts the text in as it is."""

    __slots__ = ("render",)

    def __init__(self, render) -> None:
        self.render = render  # level -> the text, in pieces

    def __eq__(self, other: object) -> bool:  # never equal to a decoded document: compare texts
        return NotImplemented


def _value(v: Any, level: int, out: list[str]) -> None:
    if type(v) is Written:
        out.extend(v.render(level))
        return
    text = _scalar(v)
    if text is not None:
        out.append(text)
    elif isinstance(v, dict):
        _object(v, level, out)
    elif isinstance(v, (list, tuple)):
        _array(v, level, out)
    else:
        raise TypeError(f"Object of type {type(v).__name__} is not JSON serializable")


def _object(d: dict, level: int, out: list[str]) -> None:
    if not d:
        out.append("{}")
        return
    inner = "\n" + _INDENT * (level + 1)
    out.append("{")
    first = True
    for key in sorted(d):
        out.append(inner if first else "," + inner)
        first = False
        out.append(encode_basestring(key) + ": ")
        _value(d[key], level + 1, out)
    out.append("\n" + _INDENT * level + "}")


def _array(items: list | tuple, level: int, out: list[str]) -> None:
    if not items:
        out.append("[]")
        return
    inner = "\n" + _INDENT * (level + 1)
    if len(items) > 1 and _flat_records(items):
        _records(items, level + 1, out)
        return
    out.append("[")
    first = True
    for item in items:
        out.append(inner if first else "," + inner)
        first = False
        _value(item, level + 1, out)
    out.append("\n" + _INDENT * level + "]")


def _flat_records(items: list | tuple) -> bool:
    """Every item a non-empty dict with the first one's keys (checked in full below)."""
    first = items[0]
    return isinstance(first, dict) and bool(first) and isinstance(items[-1], dict)


def _records(items: list | tuple, level: int, out: list[str]) -> None:
    """A list of objects written with one template per key set, each value filled in by type.
    Falls back to the general writer for an item whose values are not all scalars or lists of
    scalars."""
    pad = "\n" + _INDENT * level
    out.append("[")
    templates: dict[tuple[str, ...], list[str]] = {}
    first = True
    for item in items:
        out.append(pad if first else "," + pad)
        first = False
        if not isinstance(item, dict) or not item:
            _value(item, level, out)
            continue
        keys = tuple(sorted(item))
        heads = templates.get(keys)
        if heads is None:
            inner = "\n" + _INDENT * (level + 1)
            heads = [("{" if i == 0 else ",") + inner + encode_basestring(k) + ": "
                     for i, k in enumerate(keys)]
            templates[keys] = heads
        parts = []
        for head, key in zip(heads, keys):
            v = item[key]
            text = _scalar(v)
            if text is None:
                chunk: list[str] = []
                _value(v, level + 1, chunk)
                text = "".join(chunk)
            parts.append(head + text)
        out.append("".join(parts) + pad + "}")
    out.append("\n" + _INDENT * (level - 1) + "]")
