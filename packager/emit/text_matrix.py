"""Lines of ASCII text made a whole column at a time with numpy, for tables of a hundred thousand
lines (the C header's): each line is a row of a byte matrix, its pieces side by side (fixed text,
decimal numbers, strings), each piece padded with NUL bytes, which are dropped at the end. A piece
can be left out of some lines by zeroing it there. No piece may hold a NUL byte of its own.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

_DIGIT = ord("0")
_MINUS = ord("-")
_NOTHING = np.zeros((1 << 20, 0), np.uint8)  # a piece no line shows


def decimal(values: np.ndarray) -> np.ndarray:
    """Each value as str() writes an int, right-aligned in a (len(values), width) uint8 matrix."""
    values = np.asarray(values, dtype=np.int64)
    magnitude = np.abs(values)  # no int64 minimum here: the callers' values fit int32
    top = int(magnitude.max()) if len(values) else 0
    unsigned = np.uint32 if top < 1 << 32 else np.uint64  # 32-bit division is the faster
    rest, ten = magnitude.astype(unsigned), unsigned(10)
    digits = len(str(top))
    negative = values < 0
    width = digits + bool(negative.any())
    out = np.zeros((len(values), width), np.uint8)
    for k in range(digits):
        quotient = rest // ten
        column = (rest - quotient * ten).astype(np.uint8) + np.uint8(_DIGIT)
        if k:
            column[rest == 0] = 0  # nothing left of this digit: a leading zero, left out
        out[:, width - 1 - k] = column
        rest = quotient
    if negative.any():
        rows = np.flatnonzero(negative)
        length = (out[rows] != 0).sum(axis=1)
        out[rows, width - 1 - length] = _MINUS
    return out


def strings(texts: Sequence[str]) -> np.ndarray:
    """ASCII texts (no NUL), left-aligned in a (len(texts), width) uint8 matrix."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    width = int(lengths.max()) if len(texts) else 0
    out = np.zeros((len(texts), width), np.uint8)
    total = int(lengths.sum())
    if total:
        data = np.frombuffer("".join(texts).encode("ascii"), np.uint8)
        rows = np.repeat(np.arange(len(texts)), lengths)
        starts = np.cumsum(lengths) - lengths
        out[rows, np.arange(total) - np.repeat(starts, lengths)] = data
    return out


def fixed(text: str, count: int, where: np.ndarray | None = None) -> np.ndarray:
    """`text` on each of `count` lines, or only where `where` (bool per line) is true."""
    row = np.frombuffer(text.encode("ascii"), np.uint8)
    if where is None or where.all():
        return np.broadcast_to(row, (count, len(row)))
    return np.where(where[:, None], row, np.uint8(0)) if where.any() else _NOTHING[:count]


def only(piece: np.ndarray | Callable[[], np.ndarray], where: np.ndarray) -> np.ndarray:
    """`piece` on the lines where `where` is true, nothing on the others (a piece that takes
    work to make can be given as a function of no arguments: not made when no line shows it)."""
    if not where.any():
        return _NOTHING[:len(where)]
    piece = piece() if callable(piece) else piece
    return piece if where.all() else np.where(where[:, None], piece, np.uint8(0))


def choice(texts: Sequence[str], which: np.ndarray) -> np.ndarray:
    """texts[which[i]] on line i."""
    table = strings(texts)
    return table[which]


def lines_text(pieces: Sequence[np.ndarray]) -> str:
    """The lines, each its pieces side by side without their padding, in one text (each line
    ends where its last piece does: put a newline piece where one is wanted)."""
    matrix = np.concatenate(pieces, axis=1)
    return matrix[matrix != 0].tobytes().decode("ascii")
