"""`tflpack batch DIR -o OUT.jsonl|.csv [--jobs N]`: one row of `package`'s figures per model."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

EXIT_FAILED = 2  # a model could not be planned (its row says why); the file is still written
EPILOG = ("Exit codes: 0 every model planned; 2 bad input or bad usage, or a model failed (its row says why; "
          "the file is written); 130 interrupted (Ctrl-C, SIGTERM, SIGHUP).")


def batch(folder: Path = typer.Argument(..., metavar="DIR", help="A folder; every .tflite file under it."),
          output: Path = typer.Option(..., "--output", "-o", metavar="OUT.jsonl|OUT.csv",
                                      help="The rows, one per model, in the models' order."),
          jobs: Optional[int] = typer.Option(None, "--jobs", "-j", metavar="N", min=1,
                                             help="Processes (default: the cores this process may use)."),
          semantics: str = typer.Option("tflm", "--semantics", "-s", metavar="tflite|tflm|ideal",
                                        help="Runtime rules (default tflm, as package)."),
          target: str = typer.Option("host", "--target", metavar="host|cortex-m",
                                     help="The TFLite Micro build the whole arena is for."),
          strategy: str = typer.Option("best", "--strategy", metavar="NAME", help="best, or one offset strategy."),
          quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing but errors.")) -> None:
    """Plan every model under DIR as `package` does (nothing verified, no files but OUT) and write
    one row per model: TFLite Micro's whole arena and its standing, head, tail, set-up room, the best
    plan, its lower bound, status and error. The same rows in the same order whatever --jobs."""
    from packager.cli import check_semantics, user_errors
    from packager.batch import FAILED, default_jobs, rows, rows_text
    from packager.emit.atomic_write import write_atomically
    from packager.errors import PackagerError
    from packager.package.runtime_arena import check_target
    with user_errors():
        check_semantics(semantics)
        check_target(target)
        if output.suffix not in (".jsonl", ".csv"):
            raise PackagerError(f"{output}: the rows go to a .jsonl or a .csv file")
        table = list(rows(folder, jobs or default_jobs(), semantics, target, strategy))
        if not table:
            raise PackagerError(f"no .tflite files under {folder}")
        write_atomically(output, rows_text(table, output).encode())
    failed = [r for r in table if r["status"] == FAILED]
    if not quiet:
        typer.echo(f"wrote {output}: {len(table)} models, {len(table) - len(failed)} planned, {len(failed)} failed")
    if failed:
        typer.echo(f"error: {len(failed)} of {len(table)} models failed, the first {failed[0]['model']}: "
                   f"{failed[0]['error']}", err=True)
        raise typer.Exit(EXIT_FAILED)


def register(app: typer.Typer) -> None:
    app.command(epilog=EPILOG)(batch)
