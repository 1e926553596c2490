"""Plain-text tables in Markdown pipe syntax, so the printed output pastes straight into docs/benchmarks.md."""

from __future__ import annotations

from typing import Sequence


def render(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """First column left-aligned (labels), the others right-aligned (numbers)."""
    widths = [max(len(str(r[i])) for r in (header, *rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        parts = [str(c).ljust(w) if i == 0 else str(c).rjust(w)
                 for i, (c, w) in enumerate(zip(cells, widths))]
        return "| " + " | ".join(parts) + " |"

    rule = "| " + " | ".join(("-" * w if i == 0 else "-" * (w - 1) + ":")
                             for i, w in enumerate(widths)) + " |"
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def mib(nbytes: int | None) -> str:
    return "-" if nbytes is None else f"{nbytes / (1 << 20):.3f}"


def millis(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    ms = seconds * 1000
    return f"{ms:.2f}" if ms < 10 else f"{ms:.1f}" if ms < 1000 else f"{ms:,.0f}"


def percent_over(value: int, bound: int) -> str:
    return "-" if bound <= 0 else f"{100 * (value - bound) / bound:+.1f}%"
