"""The operator-breadth curve as a few lines of text for the terminal, for people who never open
the report: a sparkline scaled so that a full block is the arena, carets under the operators that
reach the lower bound, and a legend. The curve is never wider than `width` columns; a longer
legend line wraps (a figure is never cut).
"""

from __future__ import annotations

import math
import textwrap
from typing import Sequence

from packager.plan.portfolio import PortfolioResult
from packager.plan.records import breadth_by_step, num_ops, operator_breadths
from packager.plan.records import overhead_pct

BLOCKS = "▁▂▃▄▅▆▇█"
LABEL = "breadth "
INDENT = " " * len(LABEL)


def columns(breadths: Sequence[int], most: int) -> tuple[list[int], int]:
    """The largest breadth of each run of `per` consecutive steps (a peak is never averaged away)."""
    per = max(1, math.ceil(len(breadths) / max(most, 1)))
    return [max(breadths[i:i + per]) for i in range(0, len(breadths), per)], per


def level(value: int, top: int) -> str:
    """A block whose height rounds up, so that any live byte shows and only the top reaches █."""
    if value <= 0 or top <= 0:
        return " "
    return BLOCKS[min(len(BLOCKS), math.ceil(len(BLOCKS) * value / top)) - 1]


def breadth_lines(breadths: Sequence[int], lower_bound: int, arena: int | None,
                  step_name: str = "op", width: int = 80) -> list[str]:
    """Four lines: the curve, carets under the peak, the bound, and the arena with the scale."""
    if not breadths:
        return [f"{LABEL}(no planned tensors)"]
    cols, per = columns(breadths, width - len(LABEL))
    top = max(arena or 0, lower_bound, 1)
    highest = max(breadths)
    peak_at = next(i for i, b in enumerate(breadths) if b == highest)
    carets = "".join("^" if c == lower_bound and lower_bound > 0 else " " for c in cols).rstrip()
    full = (f"█ arena {arena:,} B, {overhead_pct(arena, lower_bound):.1f}% over the bound"
            if arena else "█ the lower bound (no offset plan)")
    scale = f"{len(breadths)} {step_name}{'s' if len(breadths) != 1 else ''}" + (
        f", {per} per column" if per > 1 else "")
    lines = [LABEL + "".join(level(c, top) for c in cols),
             INDENT + carets,
             f"{INDENT}^ lower bound {lower_bound:,} B, the largest breadth ({step_name} {peak_at})",
             f"{INDENT}{full}; {scale}"]
    # The curve is already as wide as the columns allow; the legend wraps, never losing a figure.
    out = [s.rstrip() for s in lines[:2]]
    for s in lines[2:]:
        out += textwrap.wrap(s, width, initial_indent="", subsequent_indent=INDENT + "  ",
                             break_long_words=False, break_on_hyphens=False, drop_whitespace=True) \
            if len(s) > width else [s.rstrip()]
    return out


def result_breadth_lines(result: PortfolioResult, timeline: str = "op", width: int = 80) -> list[str]:
    """The curve of a portfolio's problem, scaled to its best offset plan. `timeline` names the
    x axis: "op" or "scope" for a model's arena (every step drawn), "step" for records read from a
    file, whose times may be sparse and huge (drawn on the compressed time of their start points)."""
    records = result.problem.records
    breadths = (operator_breadths(records) if timeline == "step"
                else breadth_by_step(records, num_ops(records)))
    best = result.best_offsets
    return breadth_lines(breadths, result.problem.offset_lower_bound, best.total if best else None,
                         timeline, width)
