"""A long table (every usage record of a large model) prints as plain aligned text: every cell
the rich table holds, one row a line, and the same bytes whatever the terminal's width."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

from rich.console import Console
from rich.table import Table

from benchmarks.synthetic import SHAPES, tflite_bytes
from packager.text.tables import LONG_TABLE, plain_lines, print_table
from tests.conftest import REPO


def _table(rows: int) -> Table:
    table = Table("tensor", "name", "bytes")
    table.add_column("right", justify="right")
    for i in range(rows):
        table.add_row(str(i), f"t[{i}]" if i % 7 else "a name that is long", f"{i * 1000:,}", str(i % 3))
    return table


def _printed(table: Table, width: int, terminal: bool) -> str:
    buffer = io.StringIO()
    print_table(Console(file=buffer, width=width, force_terminal=terminal, color_system=None), table)
    return buffer.getvalue()


def test_a_long_table_is_plain_text_with_every_cell_on_its_row():
    rows = LONG_TABLE + 5
    text = _printed(_table(rows), 40, False)
    lines = text.splitlines()
    width = max(len(f"{i * 1000:,}") for i in range(rows))
    assert len(lines) == rows + 2 and lines[0].split() == ["tensor", "name", "bytes", "right"]
    assert set(lines[1]) == {"-", " "}
    for i, line in enumerate(lines[2:]):
        name = f"t[{i}]" if i % 7 else "a name that is long"
        assert line.startswith(f"{i:<6}  {name}"), line
        assert line.endswith(f"{i * 1000:,}".ljust(width) + "  " + f"{i % 3:>5}"), line
    widths = {len(line) for line in lines[2:]}
    assert widths == {len(lines[0])}  # aligned: the right-justified last column ends every line


def test_a_long_table_prints_the_same_text_on_any_terminal():
    table = _table(LONG_TABLE)
    texts = {_printed(table, w, t) for w in (40, 80, 300) for t in (False, True)}
    assert len(texts) == 1
    assert "\n".join(plain_lines(table)) + "\n" == texts.pop()


def test_a_short_table_still_goes_through_rich():
    text = _printed(_table(3), 200, False)
    assert "┃" in text or "│" in text
    assert "2,000" in text


def test_inspect_records_lists_every_record_of_a_large_model(tmp_path):
    model = tmp_path / "chain.tflite"
    model.write_bytes(tflite_bytes(SHAPES["chain"](LONG_TABLE * 2)))
    outputs = []
    for columns in ("50", "250"):
        env = {**os.environ, "COLUMNS": columns}
        r = subprocess.run([sys.executable, str(REPO / "cli.py"), "inspect", "--records", str(model)],
                           capture_output=True, text=True, cwd=REPO, timeout=300, env=env)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("tensor  name"))
        outputs.append(lines[start:start + 2 + LONG_TABLE * 2])
    assert outputs[0] == outputs[1]  # the table's lines; the lines around it wrap as before
    rows = [line.split() for line in outputs[0][2:]]
    r = subprocess.run([sys.executable, str(REPO / "cli.py"), "inspect", "--json", str(model)],
                       capture_output=True, text=True, cwd=REPO, timeout=300)
    records = json.loads(r.stdout)["arenas"][0]["records"]
    assert [row[0] for row in rows] == [str(x["id"]) for x in records]
    assert [row[-2] for row in rows] == [f"{x['size']:,}" for x in records]
