"""The streamed JSON writer gives the very text of json.dumps(doc, indent=2, sort_keys=True), which
`--json` output has always been: every scalar, key and nesting rule, and long tables of rows held
as columns, cut into pieces anywhere."""

from __future__ import annotations

import io
import json
import random

import pytest

from packager.emit import json_stream
from packager.emit.json_stream import Rows, dumps, write_json

DOCS = [
    {}, [], {"a": []}, {"b": {}}, [[1, 2], [3]], (1, (2,)), 0, -7, "x", None, True, 1.5,
    {"z": None, "t": True, "f": False, "x": 1.5, "s": "é\n\"/", "big": 10**30, "neg": -3},
    {"nan": float("nan"), "inf": float("inf"), "-inf": -float("inf"), "tiny": 1e-300, "e": 2.5e16},
    {"rows": [{"a": 1, "b": [1, 2]}, {"a": 2, "b": []}, {"a": 3, "c": "x"}, 5, {"k": [{"m": 2}, {"m": 3}]}]},
    [{"k": 1}], {"\u2028": "\x00\x1f", "n": -7, "ü": "€ 😀"},
    {3: "int key", 1: "one"}, {1.5: "float key"}, {True: 1}, {None: 0},
    [1, True, 2], [0, False], [1, 1.0], {"%s": "%d", "a%": ["%", "%%"]},
]


@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize("doc", DOCS)
def test_the_text_of_json_dumps(doc, ensure_ascii):
    assert dumps(doc, ensure_ascii) == json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=ensure_ascii)


def test_what_json_dumps_refuses_is_refused():
    for doc in ({"a": object()}, [b"bytes"], {(1, 2): 0}, Rows({"a": [object()]})):
        with pytest.raises(TypeError):
            dumps(doc)


def random_rows(rng: random.Random, n: int, keys, odd: bool) -> dict:
    """Columns of ints; with `odd`, now and then a value of another kind (a bool, a string, a list)."""
    others = [True, False, None, "s%s\u00e9", 2.5, [1, 2], {"x": [3]}, 10**20]
    return {k: [rng.choice(others) if odd and rng.random() < 0.05 else rng.randrange(-5, 10**9)
                for _ in range(n)] for k in keys}


@pytest.mark.parametrize("per_piece", [1, 3, 4096])
def test_rows_read_as_lists_of_dicts(per_piece, monkeypatch):
    monkeypatch.setattr(json_stream, "ROWS_PER_PIECE", per_piece)
    rng = random.Random(per_piece)
    for n in (0, 1, 2, 3, 7, 50):
        for keys in (("index",), ("size", "first_op", "last_op", "index", "offset"), ("b%", "a", "ü", 7)):
            odd = n % 2 == 1
            columns = random_rows(rng, n, keys, odd)
            if keys[-1] == 7:
                columns = {str(k): v for k, v in columns.items()}
            columns[next(iter(columns))] = tuple(columns[next(iter(columns))])  # tuples are columns too
            rows = Rows(columns)
            plain = [{k: columns[k][i] for k in columns} for i in range(n)]
            assert rows == plain and len(rows) == n and list(rows) == plain
            doc, same = {"t": rows, "l": [rows, {"in": rows}]}, {"t": plain, "l": [plain, {"in": plain}]}
            for ensure_ascii in (True, False):
                assert dumps(doc, ensure_ascii) == json.dumps(same, indent=2, sort_keys=True,
                                                              ensure_ascii=ensure_ascii)


@pytest.mark.parametrize("per_piece", [2, 4096])
def test_shared_columns_are_written_the_same_in_every_rows(per_piece, monkeypatch):
    """Columns held by several Rows (a plan's index, size, first_op, last_op) are rendered once."""
    monkeypatch.setattr(json_stream, "ROWS_PER_PIECE", per_piece)
    rng = random.Random(7)
    common = random_rows(rng, 11, ("index", "size"), odd=True)
    tables = [Rows({**common, "offset": [rng.randrange(10**6) for _ in range(11)]}, shared=common)
              for _ in range(3)]
    tables.append(Rows({**common, "object": [None] * 11}, shared=("index",)))
    nested = {"a": tables, "b": [{"tensors": t} for t in tables]}
    assert dumps(nested) == json.dumps({"a": [list(t) for t in tables],
                                        "b": [{"tensors": list(t)} for t in tables]}, indent=2, sort_keys=True)


def test_written_in_pieces_that_add_up_to_the_text(monkeypatch):
    monkeypatch.setattr(json_stream, "ROWS_PER_PIECE", 5)
    monkeypatch.setattr(json_stream, "FLUSH_AT", 100)
    rows = Rows(random_rows(random.Random(3), 200, ("index", "offset"), odd=False))
    doc = {"arenas": [{"tensors": rows, "sizes": list(range(300))}], "source": "m.tflite"}
    pieces: list[str] = []
    write_json(doc, pieces.append)
    assert len(pieces) > 10  # written as it goes, not at the end
    assert "".join(pieces) == json.dumps({"arenas": [{"tensors": list(rows), "sizes": list(range(300))}],
                                          "source": "m.tflite"}, indent=2, sort_keys=True) + "\n"
    out = io.StringIO()
    write_json([], out.write, end="")
    assert out.getvalue() == "[]"


def test_rows_check_their_columns():
    with pytest.raises(ValueError):
        Rows({})
    with pytest.raises(ValueError):
        Rows({"a": [1, 2], "b": [1]})
    rows = Rows({"a": [1, 2, 3], "b": "xyz"})
    assert rows[-1] == {"a": 3, "b": "z"} and rows[1:] == [{"a": 2, "b": "y"}, {"a": 3, "b": "z"}]
    with pytest.raises(IndexError):
        rows[3]
