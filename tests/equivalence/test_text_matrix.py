"""Lines made a column at a time (emit/text_matrix.py) are the lines Python's formatting makes:
numbers as str() writes them, pieces left out where asked, and the C header's offsets table the
same, comment for comment, whatever the tensor names hold."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest

from packager.emit.c_text import comment_text
from packager.emit.text_matrix import choice, decimal, fixed, lines_text, only, strings
from packager.package import c_header


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("largest", [2**31 - 1, 2**32 - 1, 2**32, 10**18])  # 32-bit and 64-bit digits
def test_decimal_numbers_are_str_of_each(seed, largest):
    rng = random.Random(seed)
    values = [rng.choice([0, -1, 7, 10, -10, largest, -largest, 10**9, rng.randint(-10**6, 10**6)])
              for _ in range(200)]
    text = lines_text([decimal(np.array(values)), fixed("\n", len(values))])
    assert text == "".join(f"{v}\n" for v in values)


def test_pieces_left_out_where_asked():
    words, numbers = ["a", "", "long word", "b"], np.array([5, -3, 120, 0])
    shown = np.array([True, False, True, False])
    text = lines_text([strings(words), fixed("=", 4, shown), only(decimal(numbers), shown),
                       only(lambda: decimal(numbers), np.zeros(4, bool)), choice(["", "!", "?"], np.array([0, 1, 2, 1])),
                       fixed(";", 4)])
    assert text == "a=5;!;long word=120?;b!;"


def _reference_lines(model, rows):
    """The offsets table's lines as they were made one by one (f-strings, comment_text per note)."""
    at, out = 0, []
    for s, sg in enumerate(model.subgraphs):
        for t in sg.tensors:
            kind, f, l, size = int(rows.note_kind[at]), int(rows.first[at]), int(rows.last[at]), int(rows.size[at])
            a, p = int(rows.note_alias[at]), int(rows.note_pass[at])
            if kind == 1:
                status = f"alias of {a}, steps {f}..{l}, {size} B" if a != -1 else f"steps {f}..{l}, {size} B"
                if p > 0:
                    status = f"{status} (pass {p}: {rows.note_size_expr[at]} B)"
            elif kind == 2:
                status = rows.persistent_notes[at]
            else:
                status = "constant" if t.has_data else "not planned (dynamic or unused)"
            shape = "[" + ",".join(map(str, t.shape)) + "]"
            note = f"{at} sg{s}:{t.index} {t.name} {t.type}{shape} {status}"
            note = note + " (placed by the kept plan)" if rows.kept_only[at] else note
            out.append(f"    {int(rows.offset[at])}, /* {comment_text(note)} */")
            at += 1
    return out


@pytest.mark.parametrize("names", [["conv", "relu", "x"], ["a*/b", "/*c", "d??=", "é", "\x00", "t\nu", "ok", "?", "?"]])
def test_offsets_table_is_the_lines_made_one_by_one(names, monkeypatch):
    rng = random.Random(len(names))
    monkeypatch.setattr(c_header, "_BLOCK", 5)  # several blocks, one partial
    subgraphs = []
    for s in range(2):
        tensors = [SimpleNamespace(index=i, name=rng.choice(names), type=rng.choice(["FLOAT32", "INT8"]),
                                   shape=tuple(rng.randint(1, 9) for _ in range(rng.randint(0, 3))),
                                   has_data=rng.random() < 0.3) for i in range(13)]
        subgraphs.append(SimpleNamespace(tensors=tensors))
    model = SimpleNamespace(subgraphs=subgraphs)
    rows = c_header._Rows.empty(26)
    for g in range(26):
        kind = rng.choice([0, 1, 1, 1, 2])
        rows.note_kind[g] = kind
        rows.offset[g] = rng.choice([-1, 0, 64, 123456])
        rows.kept_only[g] = rng.random() < 0.2
        if kind == 1:
            rows.first[g], rows.last[g], rows.size[g] = 3, 3 + rng.randint(0, 9), rng.randint(1, 10**6)
            rows.note_alias[g] = rng.choice([-1, -1, rng.randint(0, 25)])
            rows.note_pass[g] = rng.choice([0, 0, 1, 2])
            if rows.note_pass[g] > 0:
                rows.note_size_expr[g] = rng.choice(["4*n", "n*/2", None, "é??"])
        elif kind == 2:
            rows.persistent_notes[g] = f"persistent, {g} B (kept out of the arena)"
    made = "\n".join(c_header._offset_blocks(model, rows)).split("\n")
    assert made == _reference_lines(model, rows)
