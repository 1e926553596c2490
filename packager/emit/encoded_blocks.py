"""Text made in many small pieces, written as UTF-8 a block at a time.

A page of a hundred thousand tensors is about 13 MB of text; held as one Python string, a single
non-ASCII character ("–" in its tooltips) makes every character of it two bytes wide, and its
encoding is a third copy. Joined and encoded a block of pieces at a time, it never is.
"""

from __future__ import annotations

from typing import Iterable, Iterator

BLOCK_CHARACTERS = 1 << 20  # a block is written once its pieces reach this many characters


def encoded_in_blocks(pieces: Iterable[str], block: int | None = None, encoding: str = "utf-8") -> Iterator[bytes]:
    """The bytes of "".join(pieces) (UTF-8 unless `encoding` says otherwise), in blocks of about `block` characters: the same bytes,
    since UTF-8 encodes each character on its own."""
    block = BLOCK_CHARACTERS if block is None else block
    held: list[str] = []
    size = 0
    for piece in pieces:
        held.append(piece)
        size += len(piece)
        if size >= block:
            yield "".join(held).encode(encoding)
            held.clear()
            size = 0
    if held:
        yield "".join(held).encode(encoding)
