"""`--json` output is the text of json.dumps(doc, indent=2, sort_keys=True) and a newline, which
users parse and compare: written by orjson, with json.dumps's escapes, numbers and key order
wherever the two libraries differ, and tables of entries written a few thousand at a time."""

from __future__ import annotations

import json
import random

import pytest

from packager.emit import json_text
from packager.emit.json_text import Rows, dumps, write_json

ODD_FLOATS = [0.0, -0.0, 1.0, 0.1, 12.34, 1e-4, 1e-05, 1.5e-07, 5e-324, 1e15, 1e16, 2.5e16, 1e22,
              9999999999999998.0, 1.7976931348623157e308, -1e-05, float("nan"), float("inf"), -float("inf")]
ODD_INTS = [0, -7, 2**63 - 1, -2**63, 2**64 - 1, 2**64, -2**63 - 1, 10**30]
ODD_STRINGS = ["", "x", "é\n\"/\\", "€ 😀", "\u2028", "\x00\x1f\x7f", "\ud800", "\x00rows\x00", "%s"]
DOCS = [
    {}, [], {"a": []}, {"b": {}}, [[1, 2], [3]], (1, (2,)), 0, "x", None, True, False,
    ODD_FLOATS, ODD_INTS, ODD_STRINGS, {s: s for s in ODD_STRINGS},
    {"z": None, "t": True, "f": False, "x": 1.5, "nested": {"deeper": [{"k": [1, {"m": "ü"}]}]}},
    {"rows": [{"a": 1, "b": [1, 2]}, {"a": 2, "b": []}, {"a": 3, "c": "x"}, 5]},
    {10: "ten", 9: "nine"}, {1.5: "float key"}, {True: 1}, {None: 0}, [1, True, 2, 1.0],
]


def expected(doc) -> str:
    return json.dumps(doc, indent=2, sort_keys=True)


@pytest.mark.parametrize("doc", DOCS, ids=range(len(DOCS)))
def test_the_text_of_json_dumps(doc):
    assert dumps(doc) == expected(doc)


def test_floats_written_as_python_writes_them():
    rng = random.Random(5)
    floats = [rng.uniform(-1, 1) * 10.0 ** rng.randrange(-300, 300) for _ in range(3000)]
    floats += [round(rng.uniform(0, 500), 2) for _ in range(1000)]  # overhead_pct's kind
    assert dumps(floats) == expected(floats)
    for f in floats[:300]:
        assert dumps({"f": f}) == expected({"f": f})


def test_what_json_dumps_refuses_is_refused():
    for doc in ({"a": object()}, [b"bytes"], {(1, 2): 0}, {"t": Rows({"a": [object()]})}):
        with pytest.raises(TypeError):
            dumps(doc)


def random_columns(rng: random.Random, n: int, keys, odd: bool) -> dict:
    """Columns of ints; with `odd`, now and then a value of another kind."""
    others = [True, None, "s\u00e9", 2.5, 1e-05, float("nan"), [1, 2], {"x": [3]}, 2**64]
    return {k: [rng.choice(others) if odd and rng.random() < 0.05 else rng.randrange(-5, 10**9)
                for _ in range(n)] for k in keys}


@pytest.mark.parametrize("per_piece", [1, 3, 8192])
def test_rows_are_written_as_lists_of_dicts(per_piece, monkeypatch):
    monkeypatch.setattr(json_text, "ROWS_PER_PIECE", per_piece)
    rng = random.Random(per_piece)
    for n in (0, 1, 2, 3, 7, 50):
        for keys in (("index",), ("size", "first_op", "last_op", "index", "offset"), ("b", "a", "ü", "7")):
            columns = random_columns(rng, n, keys, odd=n % 2 == 1)
            columns[keys[0]] = tuple(columns[keys[0]])  # tuples are columns too
            rows = Rows(columns)
            plain = [{k: columns[k][i] for k in columns} for i in range(n)]
            assert rows.dicts() == plain and len(rows) == n
            doc = {"t": rows, "l": [rows, {"in": rows}], "s": "\x00rows\x00" if n == 2 else "s"}
            same = {"t": plain, "l": [plain, {"in": plain}], "s": doc["s"]}
            assert dumps(doc) == expected(same)


def test_rows_with_keys_that_are_not_strings():
    rows = Rows({10: [1, 2], 9: [3, 4]})
    assert dumps([rows]) == expected([[{10: 1, 9: 3}, {10: 2, 9: 4}]])


def test_a_long_table_is_written_a_piece_at_a_time(monkeypatch):
    """What a plan of 100,000 tensors per strategy relies on: no piece holds the whole text."""
    monkeypatch.setattr(json_text, "ROWS_PER_PIECE", 100)
    columns = random_columns(random.Random(3), 2000, ("index", "offset"), odd=False)
    doc = {"arenas": [{"tensors": Rows(columns), "sizes": list(range(30))}], "source": "m.tflite"}
    pieces: list[bytes] = []
    write_json(doc, pieces.append)
    text = b"".join(pieces).decode("ascii")
    rows = [dict(zip(columns, r)) for r in zip(*columns.values())]
    assert text == expected({"arenas": [{"tensors": rows, "sizes": list(range(30))}], "source": "m.tflite"}) + "\n"
    assert len(pieces) >= 20 and max(map(len, pieces)) < len(text) / 10


def test_rows_check_their_columns():
    with pytest.raises(ValueError):
        Rows({"a": [1, 2], "b": [1]})
    assert Rows({}).dicts() == [] and dumps(Rows({})) == "[]"


def test_plain_documents_are_written_by_orjson(monkeypatch):
    """json.dumps, a hundred times slower on long tables, writes only what orjson would write otherwise."""
    def refused(value, default):
        raise AssertionError("json.dumps used")
    monkeypatch.setattr(json_text, "_json_text", refused)
    columns = random_columns(random.Random(1), 100, ("index", "size", "offset"), odd=False)
    assert dumps({"strategies": [{"tensors": Rows(columns), "overhead_pct": 12.5, "name": "nnc"}],
                  "source": "modèle.tflite", "records": 100, "skipped": [], "best": None})
