"""Print a rich table so that no figure is ever cut.

Rich fits a table to the console width and elides cells that do not fit (`7,577,…`). A figure is
what a table exists to show, so: when the output is not a terminal (a pipe, a file, a CI log), the
table gets the width it needs and every row stays on one line; on a terminal, cells fold onto a
second line instead of losing digits.
"""

from __future__ import annotations

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table


def print_table(console: Console, table: Table) -> None:
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
