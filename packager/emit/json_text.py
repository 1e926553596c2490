"""The `--json` output: the text of `json.dumps(doc, indent=2, sort_keys=True)` and a newline,
written by orjson.

Why orjson: the standard library writes an indented document with its pure-Python encoder. For
`plan --json` at 100,000 operators (22 strategies of 100,000 entries: 400 MB of text), json.dumps
of the plain document takes 16 s of CPU and 3 GB more memory; written here, 1.4 s and no more
memory than the plan already holds (most of it making the entries' dicts orjson reads).

Why in pieces: a long list of entries with the same keys (one strategy's tensors) is a `Rows`,
held as columns until it is written; then it is made into dicts and written a few thousand
entries at a time. So neither the whole text (400 MB) nor every entry as a dict is held at once.

Where orjson's text would not be json.dumps's, json.dumps writes that piece instead: floats that
Python writes in exponent form or not as numbers (orjson writes 0.00001 for 1e-05, null for NaN),
ints beyond 64 bits, keys that are not strings, strings with lone surrogates, values of other
types. Characters beyond ASCII, which orjson writes as they are, are escaped as json.dumps
escapes them (its default, ensure_ascii=True)."""

from __future__ import annotations

import json
import re
from itertools import islice, repeat
from json.encoder import encode_basestring_ascii
from typing import Any, Callable, Iterator, Mapping, Sequence

import orjson

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
_MARK = "\x00rows\x00"  # stands for a Rows in the text of the rest of the document
_MARK_TEXT = b'"\\u0000rows\\u0000"'  # its text, in orjson's and in json.dumps's
_NOT_ASCII = re.compile(rb"[\x7f-\xff]+")  # runs of whole UTF-8 characters (and DEL)
# Entries made into dicts and written at a time: few enough to stay in the processor's caches
# (at 100,000 a table, making and writing them takes a third longer).
ROWS_PER_PIECE = 8192
# Values orjson writes as json.dumps does (an int beyond 64 bits makes orjson fail: then json.dumps).
_SCALARS = {str, int, bool, type(None)}


class Rows:
    """A JSON list of objects with the same keys, held as equally long columns (key -> values)
    until it is written."""

    __slots__ = ("columns",)

    def __init__(self, columns: Mapping[str, Sequence]) -> None:
        if len({len(values) for values in columns.values()}) > 1:
            raise ValueError("Rows columns differ in length")
        self.columns = dict(columns)

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()), ()))

    def dicts(self) -> list[dict]:
        """The entries as the document states them: a dict per row."""
        keys = list(self.columns)
        return list(map(dict, map(zip, repeat(keys), zip(*self.columns.values()))))


def write_json(doc: Any, write: Callable[[bytes], Any]) -> None:
    """The text of `doc` (dicts, lists, tuples, Rows, str, int, float, bool, None) and a newline,
    as UTF-8 bytes passed to `write` a piece at a time: the document around its Rows, and each
    Rows."""
    tables: list[Rows] = []

    def mark(value):
        if isinstance(value, Rows):
            tables.append(value)
            return _MARK
        raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")

    around = _text(doc, mark).split(_MARK_TEXT)
    if len(around) != len(tables) + 1:  # a string of the document holds the mark itself
        tables.clear()
        around = [_json_text(doc, Rows.dicts)]
    for before, table in zip(around, tables):
        write(before)
        line = before[before.rfind(b"\n") + 1:]
        indent = len(line) - len(line.lstrip(b" "))  # a nested value's lines take its line's indent
        pad = b"\n" + b" " * indent
        for piece in _table_pieces(table):
            write(piece.replace(b"\n", pad))
    write(around[-1] + b"\n")


def dumps(doc: Any) -> str:
    """The whole text, without the newline (for small documents and tests)."""
    pieces: list[bytes] = []
    write_json(doc, pieces.append)
    return b"".join(pieces)[:-1].decode("ascii")


def _table_pieces(table: Rows) -> Iterator[bytes]:
    """The text of a Rows, ROWS_PER_PIECE entries at a time: each piece is the text of a list of
    them, its brackets left out. Its values are checked by column, not dict by dict."""
    if not len(table):
        yield b"[]"
        return
    plain = all(type(k) is str for k in table.columns) and all(
        set(map(type, values)) <= _SCALARS for values in table.columns.values())
    text = _orjson_text if plain else _json_text
    keys = list(table.columns)
    rows = zip(*table.columns.values())
    opening = b"["
    while entries := list(map(dict, map(zip, repeat(keys), islice(rows, ROWS_PER_PIECE)))):
        yield opening + text(entries, None)[1:-2]  # '\n  {...},\n  {...}' without '[' and '\n]'
        opening = b","
    yield b"\n]"


def _text(value: Any, default: Callable) -> bytes:
    """The text of `value` (Rows are left to `default`): orjson's where it is json.dumps's."""
    return (_orjson_text if _orjson_writes_as_json(value) else _json_text)(value, default)


def _orjson_text(value: Any, default: Callable | None) -> bytes:
    try:
        text = orjson.dumps(value, default=default, option=_OPTIONS)
    except TypeError:  # an int beyond 64 bits, a lone surrogate
        return _json_text(value, default)
    return text if text.isascii() and b"\x7f" not in text else _NOT_ASCII.sub(_escaped, text)


def _json_text(value: Any, default: Callable | None) -> bytes:
    return json.dumps(value, indent=2, sort_keys=True, default=default).encode("ascii")


def _escaped(run: re.Match) -> bytes:
    """Characters beyond ASCII (only ever inside strings) as json.dumps writes them: \\uXXXX."""
    return encode_basestring_ascii(run.group().decode("utf-8"))[1:-1].encode("ascii")


def _orjson_writes_as_json(v: Any) -> bool:
    """Whether orjson's text of `v` can be json.dumps's (a Rows is checked when written)."""
    t = type(v)
    if t in _SCALARS or t is Rows:
        return True
    if t is float:  # here Python's repr has no exponent, and orjson writes the same digits
        return v == 0.0 or 1e-4 <= abs(v) < 1e16
    if t is dict:
        return all(type(k) is str for k in v) and all(map(_orjson_writes_as_json, v.values()))
    if t is list or t is tuple:
        return set(map(type, v)) <= _SCALARS or all(map(_orjson_writes_as_json, v))
    return False
