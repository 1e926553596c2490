"""Print a table so that no figure is ever cut.

Rich fits a table to the console width and elides cells that do not fit (`7,577,…`). A figure is
what a table exists to show, so: when the output is not a terminal (a pipe, a file, a CI log), the
table gets the width it needs and every row stays on one line; on a terminal, cells fold onto a
second line instead of losing digits.

A long table (a listing of every usage record of a large model) is printed as plain aligned text
instead: rich measures and renders every cell several times, which at 100,000 rows costs minutes
and hundreds of megabytes. Plain text also prints the same bytes on every terminal width.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import render
from rich.measure import Measurement
from rich.table import Table

# From this many rows on, a table is printed as plain aligned text.
LONG_TABLE = 200
GAP = "  "  # between two columns of the plain form


def print_table(console: Console, table: Table) -> None:
    if table.row_count >= LONG_TABLE:
        print_plain(console, table)
        return
    for column in table.columns:
        column.overflow = "fold"
    if console.is_terminal:
        console.print(table)
        return
    needed = Measurement.get(console, console.options.update_width(10_000), table).maximum
    width = console.width  # print(width=...) cannot exceed the console's own width
    console.width = max(width, needed)
    try:
        console.print(table, crop=False)
    finally:
        console.width = width


def _plain(cell: object) -> str:
    """A cell's text as rich would show it (markup applied, no styles)."""
    text = str(cell)
    return render(text).plain if "[" in text else text


def plain_lines(table: Table) -> list[str]:
    """The table as lines of text: a header, a rule, then one line per row, every column as wide
    as its widest cell, numbers where the column asks for them on the right."""
    columns = [[_plain(c.header), *(_plain(cell) for cell in c.cells)] for c in table.columns]
    widths = [max(map(len, cells)) for cells in columns]
    right = [c.justify == "right" for c in table.columns]
    rows = zip(*columns)
    lines = []
    for i, row in enumerate(rows):
        line = GAP.join(cell.rjust(w) if r else cell.ljust(w)
                        for cell, w, r in zip(row, widths, right)).rstrip()
        lines.append(line)
        if i == 0:
            lines.append(GAP.join("-" * w for w in widths))
    return lines


def print_plain(console: Console, table: Table) -> None:
    """The table as plain aligned text, written as it is (no markup, no wrapping)."""
    if console.quiet:
        return
    if table.title:
        console.file.write(_plain(table.title) + "\n")
    console.file.write("\n".join(plain_lines(table)) + "\n")
    console.file.flush()
