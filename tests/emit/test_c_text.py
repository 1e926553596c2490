"""Comment text in the C files: printable ASCII only, no comment delimiters, no trigraphs; the
usual plain line goes through untouched by the character-by-character path."""

from __future__ import annotations

import random
import re

from packager.emit.c_text import comment_text


def _character_by_character(text: str) -> str:
    text = "".join(c if " " <= c <= "~" else "?" for c in text)
    text = text.replace("*/", "*_/").replace("/*", "/_*")
    return re.sub(r"\?(?=\?)", "?_", text)


def test_comment_text_is_safe_and_the_same_as_character_by_character():
    rng = random.Random(7)
    alphabet = ["a", "?", "*", "/", " ", "\t", "é", "~", "\x7f", "\x00", "\n", "\u2028", "Z", "??="]
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9)))
        safe = comment_text(text)
        assert safe == _character_by_character(text)
        assert "*/" not in safe and "/*" not in safe and "??" not in safe
        assert all(" " <= c <= "~" for c in safe)
