"""Small helpers for writing C that compiles cleanly as C99 and C++ under -Wall -Wextra -Wpedantic."""

from __future__ import annotations

import re
from typing import Iterable, Sequence

import numpy as np

from packager.emit.text_matrix import decimal, fixed, lines_text

_C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern float
for goto if inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while bool true false class namespace new delete this template typename
private public protected operator virtual friend using""".split())


def identifier(text: str, fallback: str = "model") -> str:
    """A C identifier made from `text`: other characters become '_', never a leading digit."""
    name = re.sub(r"[^0-9A-Za-z_]+", "_", text).strip("_") or fallback
    if name[0].isdigit() or name in _C_KEYWORDS:
        name = f"{fallback}_{name}"
    return name


def is_identifier(text: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text)) and text not in _C_KEYWORDS


def comment_text(text: str) -> str:
    """Text that is safe inside /* */ : printable ASCII only, no comment delimiters, no trigraphs
    (C99 replaces ??x even inside comments, and gcc -Wall warns about it)."""
    if not (text.isascii() and text.isprintable()):  # the usual line needs no character replaced
        text = "".join(c if " " <= c <= "~" else "?" for c in text)
    text = text.replace("*/", "*_/").replace("/*", "/_*")
    return re.sub(r"\?(?=\?)", "?_", text) if "??" in text else text


def int_rows(values: Sequence[int], per_row: int = 12, indent: str = "    ") -> list[str]:
    """Initializer rows `a, b, c,` (a trailing comma is fine in C99 and C++)."""
    if not values:
        return [indent + "0 /* empty: C needs at least one element */"]
    # "a, b, c," as ", ".join + ",": the numbers' text made by str in C, not an f-string each
    return [indent + ", ".join(map(str, values[i:i + per_row])) + ","
            for i in range(0, len(values), per_row)]


def int_rows_text(values: Sequence[int] | np.ndarray, per_row: int = 12, indent: str = "    ") -> str:
    """"\n".join(int_rows(values, per_row, indent)), made a whole column at a time: each number
    with what follows it (", ", or "," and a newline at the end of a row), and the indent where a
    row starts (emit/text_matrix.py)."""
    if not len(values):
        return "\n".join(int_rows([], per_row, indent))
    count = len(values)
    column = np.arange(count) % per_row
    row_ends = (column == per_row - 1) & (np.arange(count) < count - 1)
    return lines_text([fixed(indent, count, column == 0), decimal(np.asarray(values, dtype=np.int64)),
                       fixed(",", count), fixed(" ", count, (column < per_row - 1) & (np.arange(count) < count - 1)),
                       fixed("\n", count, row_ends)])


def block_comment(lines: Iterable[str]) -> list[str]:
    body = [comment_text(line) for line in lines]
    return ["/*"] + [f" * {line}".rstrip() for line in body] + [" */"]
