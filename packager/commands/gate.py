"""`tflpack gate NEW_PLAN.json --baseline OLD_PLAN.json`: exit 3 when the arena grew."""

from __future__ import annotations

from pathlib import Path

import typer

EXIT_GREW = 3  # as package's --budget: the memory asked for is over what was allowed
EPILOG = ("Exit codes: 0 the arena did not grow; 2 bad input or bad usage (one line on stderr); 3 the arena "
          "grew over the baseline; 130 interrupted (Ctrl-C, SIGTERM, SIGHUP).")


def gate(new: Path = typer.Argument(..., metavar="NEW_PLAN", help="A plan package wrote (<prefix>_plan.json or .tplan)."),
         baseline: Path = typer.Option(..., "--baseline", metavar="OLD_PLAN", help="The plan to compare against."),
         quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing but errors.")) -> None:
    """Fail (exit 3) when the new plan needs more memory than the baseline: TFLite Micro's whole
    arena when both plans state it (tflm), else the planned arenas; and each region's buffer when
    both were packaged with --regions. Prints both figures."""
    from packager.cli import user_errors
    from packager.gate import gate as run_gate, verdict_lines
    with user_errors():
        verdict = run_gate(new, baseline)
    if not quiet:
        for line in verdict_lines(verdict):
            typer.echo(line)
    if verdict.grew:
        f = next(f for f in verdict.figures if f.gated and f.grew)
        typer.echo(f"error: the {f.what} grew by {f.new - f.baseline:,} B over the baseline "
                   f"({f.baseline:,} B -> {f.new:,} B)", err=True)
        raise typer.Exit(EXIT_GREW)


def register(app: typer.Typer) -> None:
    app.command(epilog=EPILOG)(gate)
