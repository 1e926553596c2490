"""The command line: parses arguments, calls the library, renders results. Nothing else."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

import typer
from rich.console import Console
from rich.table import Table

from packager.errors import PackagerError
from packager.reader import read_model
from packager.semantics import SEMANTICS
from packager.summary import CATEGORIES, model_summary

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True,
                  help="Plan, prove and package the tensor memory of TensorFlow Lite models.")
out = Console(highlight=False)
EXIT_BAD_INPUT = 2

SemanticsOption = typer.Option("tflite", "--semantics", "-s",
                               help=f"Runtime rules: {', '.join(SEMANTICS)}.")


@contextmanager
def user_errors() -> Iterator[None]:
    """Bad input becomes one line on stderr and exit code 2, never a traceback."""
    try:
        yield
    except PackagerError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        raise typer.Exit(130)


@app.callback()
def _commands() -> None:
    """Plan, prove and package the tensor memory of TensorFlow Lite models."""


def check_semantics(name: str) -> str:
    if name not in SEMANTICS:
        raise PackagerError(f"unknown semantics '{name}' (choose from {', '.join(SEMANTICS)})")
    return name


def print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True) + "\n")


@app.command()
def inspect(model: Path = typer.Argument(..., help="A .tflite file."),
            semantics: str = SemanticsOption,
            json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
            records: bool = typer.Option(False, "--records", help="Also list every usage record.")) -> None:
    """Summarise a model: subgraphs, ops, which tensors are planned, and their lifetimes."""
    with user_errors():
        check_semantics(semantics)
        summary = model_summary(read_model(model), semantics, source=model)
    if json_out:
        print_json(summary)
        return
    render_summary(summary, show_records=records)


def render_summary(s: dict, show_records: bool) -> None:
    out.print(f"[bold]{s['model']}[/bold]  schema v{s['schema_version']}"
              + (f"  \"{s['description']}\"" if s["description"] else ""))
    if s["metadata"] or s["signatures"]:
        out.print(f"metadata: {', '.join(s['metadata']) or '-'}   signatures: {', '.join(s['signatures']) or '-'}")
    for sg in s["subgraphs"]:
        ops = ", ".join(f"{name} x{n}" for name, n in sorted(sg["ops_by_type"].items(), key=lambda kv: (-kv[1], kv[0])))
        out.print(f"\nsubgraph {sg['index']} '{sg['name']}': {sg['operators']} ops, {sg['tensors']} tensors, "
                  f"inputs {sg['inputs']}, outputs {sg['outputs']}")
        out.print(f"  ops: {ops or '-'}")
        for op, children in sg["calls"].items():
            out.print(f"  op {op} runs subgraph(s) {children}")
    for a in s["arenas"]:
        where = "whole model (inline)" if a["inline"] else f"subgraph {a['subgraph']}"
        counts = ", ".join(f"{a['counts'][c]} {c}" for c in CATEGORIES)
        out.print(f"\n[bold]{s['semantics']}[/bold] arena of {where}: {counts}")
        out.print(f"  lower bound {a['lower_bound']:,} B (largest operator breadth)"
                  f"; persistent {a['persistent_bytes']:,} B kept apart")
        if a["aliases"]:
            out.print("  aliases: " + ", ".join(f"{x['index']}->{x['alias_of']}" for x in a["aliases"]))
        if show_records:
            table = Table("tensor", "name", "type", "shape", "first op", "last op", "bytes")
            for r in a["records"]:
                table.add_row(str(r["id"]), r["name"][:40], r["type"], str(r["shape"]),
                              str(r["first_op"]), str(r["last_op"]), f"{r['size']:,}")
            out.print(table)
    if not show_records:
        out.print("\n(--records lists every usage record; --json gives everything)")


def main() -> None:
    app()
