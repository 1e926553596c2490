"""The README's command table matches `--help`: every command, and every option of each."""

from __future__ import annotations

import re

import typer

from packager.cli import app
from tests.conftest import REPO


def readme_rows() -> dict[str, str]:
    """command -> the text of its rows in the README's command table (a command may have two)."""
    text = (REPO / "README.md").read_text()
    table = text[text.index("## Commands"):]
    table = table[:table.index("\n\n", table.index("| command |"))]
    rows: dict[str, str] = {}
    for line in table.splitlines():
        m = re.match(r"\| `tflpack (\w+)(.*?)` \|", line)
        if m:
            rows[m.group(1)] = rows.get(m.group(1), "") + " " + m.group(2)
    return rows


def test_readme_command_table_matches_help():
    group = typer.main.get_command(app)
    rows = readme_rows()
    assert sorted(rows) == sorted(group.commands)
    for name, command in group.commands.items():
        in_readme = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", rows[name]))
        options = [p for p in command.params if p.param_type_name == "option" and p.name != "help"]
        known = {o for p in options for o in (*p.opts, *p.secondary_opts)}
        assert in_readme <= known, (name, in_readme - known)  # nothing the command does not take
        for p in options:  # every option the command takes is in its row
            assert in_readme & {*p.opts, *p.secondary_opts}, (name, p.opts)
