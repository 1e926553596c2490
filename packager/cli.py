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

from packager.text.breadth_text import result_breadth_lines
from packager.errors import PackagerError
from packager.plan.csv_records import read_records_csv
from packager.plan.portfolio import PortfolioResult
from packager.text.plan_view import overhead_pct, passes_view, result_view
from packager.arenas import plan_model, plan_records
from packager.reader import read_model
from packager.semantics import SEMANTICS
from packager.text.inspect_view import CATEGORIES, model_summary

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True,
                  help="Plan, prove and package the tensor memory of TensorFlow Lite models.")
out = Console(highlight=False)
EXIT_BAD_INPUT = 2

DimOption = typer.Option([], "--dim", help="Bind or bound a symbol: NAME=V, NAME=MIN..MAX, "
                                             "OLD:NEW=MIN..MAX renames it. Repeatable.")
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
            dims: list[str] = DimOption,
            json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
            records: bool = typer.Option(False, "--records", help="Also list every usage record.")) -> None:
    """Summarise a model: subgraphs, ops, which tensors are planned, and their lifetimes."""
    with user_errors():
        check_semantics(semantics)
        summary = model_summary(read_model(model), semantics, source=model, dims=tuple(dims))
    if json_out:
        print_json(summary)
        return
    render_summary(summary, show_records=records)


@app.command()
def plan(model: Optional[Path] = typer.Argument(None, help="A .tflite file (or use --records)."),
         semantics: str = SemanticsOption,
         strategy: str = typer.Option("best", "--strategy", help="best, all, or one strategy's name."),
         records: Optional[Path] = typer.Option(None, "--records",
                                                help="Plan usage records from a MiniMalloc CSV instead."),
         dims: list[str] = DimOption,
         json_out: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Plan every arena with the chosen strategies; print each result beside the lower bound."""
    with user_errors():
        if (model is None) == (records is None):
            raise PackagerError("give a MODEL or --records FILE.csv (one of the two)")
        if records is not None:
            result = plan_records(read_records_csv(records), strategy)
            views = [{"subgraph": None, "inline": False, **result_view(result)}]
            title, results = f"{records.name}: {len(result.problem.records)} records", [result]
        else:
            check_semantics(semantics)
            arenas = plan_model(read_model(model), semantics, strategy, dims)
            views = [{"subgraph": a.lifetimes.subgraph, "inline": a.lifetimes.inline,
                      **result_view(a.result), **passes_view(a.passes)} for a in arenas]
            title = f"{model.name} under {semantics} semantics"
            results = [a.result for a in arenas]
    if json_out:
        print_json({"source": (records or model).name, "semantics": None if records else semantics,
                    "arenas": views})
        return
    out.print(f"[bold]{title}[/bold]")
    for view, result in zip(views, results):
        where = ("all records" if view["subgraph"] is None else
                 "whole model (inline)" if view["inline"] else f"subgraph {view['subgraph']}")
        render_result(where, result, timeline=("step" if view["subgraph"] is None else
                                               "scope" if view["inline"] else "op"))
        if view.get("dynamic"):
            d = view["dynamic"]
            bounds = ", ".join(f"{k} in [{lo}, {hi}]" for k, (lo, hi) in d["bounds"].items())
            out.print(f"dynamic shapes ({bounds}): sizes above are the largest; the multi-pass plan "
                      f"({d['passes']} passes) needs {d['arena']:,} B, lower bound {d['lower_bound']:,} B "
                      f"at the largest binding ({overhead_pct(d['arena'], d['lower_bound']):.1f}% over)")


def render_result(where: str, result: PortfolioResult, timeline: str = "op") -> None:
    p = result.problem
    out.print(f"\n{where}: {len(p.records)} planned tensors, alignment {p.alignment} B")
    table = Table("plan", "strategy", "bytes", "lower bound", "over bound", "time")
    table.columns[1].no_wrap = True
    for o in (*result.offsets, *result.objects, *result.baselines):
        bound = p.object_lower_bound if o.kind == "objects" else p.offset_lower_bound
        is_best = (o is result.best_offsets) or (o is result.best_objects)
        table.add_row(o.kind, ("* " if is_best else "  ") + o.strategy, f"{o.total:,}", f"{bound:,}",
                      f"{overhead_pct(o.total, bound):.1f}%", f"{o.seconds * 1000:.1f} ms")
    out.print(table)
    if result.skipped:
        out.print(f"left out at {len(p.records):,} records (too slow at this size; name one with "
                  f"--strategy to run it): {', '.join(result.skipped)}")
    if result.best_offsets:
        b = result.best_offsets
        out.print(f"best offsets: {b.strategy}, {b.total:,} B "
                  f"({overhead_pct(b.total, p.offset_lower_bound):.1f}% over the lower bound "
                  f"{p.offset_lower_bound:,} B)"
                  + ("; proven optimal: the rest of the gap is the bound's"
                     if b.total > p.offset_lower_bound and result.offsets_optimal else ""))
    if result.offsets_time_limit_hit:
        out.print("stopped by a safety-net time limit, so the plan may differ on another machine: "
                  + ", ".join(result.offsets_time_limit_hit))
    if result.best_objects:
        b = result.best_objects
        gap = b.total > p.object_lower_bound
        out.print(f"best shared objects: {b.strategy}, {b.total:,} B "
                  f"({overhead_pct(b.total, p.object_lower_bound):.1f}% over the lower bound "
                  f"{p.object_lower_bound:,} B)"
                  + ("; proven optimal: the rest of the gap is the bound's"
                     if gap and result.objects_optimal else ""))
    for line in result_breadth_lines(result, timeline, width=min(out.width, 80)):
        out.print(line, markup=False, overflow="ignore", crop=False)


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
            table = Table("tensor", "name", "type", "shape", "first op", "last op", "bytes", "pass", "size expression")
            for r in a["records"]:
                table.add_row(str(r["id"]), r["name"][:40], r["type"], str(r["shape"]),
                              str(r["first_op"]), str(r["last_op"]), f"{r['size']:,}", str(r["pass"]),
                              r["size_expr"] if r["pass"] else "")
            out.print(table)
    if s["symbols"]:
        out.print("\nsymbols:")
        for sym in s["symbols"]:
            bound = f"[{sym['bound'][0]}, {sym['bound'][1]}]" if sym["bound"] else "unbound (give --dim)"
            out.print(f"  {sym['name']}: {sym['source']}, pass {sym['pass']}, {bound}")
    if not show_records:
        out.print("\n(--records lists every usage record; --json gives everything)")


@app.command()
def report(model: Path = typer.Argument(..., help="A .tflite file."),
           output: Path = typer.Option(..., "--output", "-o", help="The HTML page to write."),
           semantics: str = SemanticsOption,
           strategy: str = typer.Option("best", "--strategy", help="best, or the strategy whose plan to draw."),
           dims: list[str] = DimOption,
           png: Optional[Path] = typer.Option(None, "--png", help="Also write the first arena's layout as a PNG."),
           no_times: bool = typer.Option(False, "--no-times",
                                         help="Leave planning times out, so the page is byte-identical."),
           measure: bool = typer.Option(True, "--measure/--no-measure",
                                        help="Set TFLite's measured layout beside ours (when installed).")) -> None:
    """Write a one-page HTML report: layout, breadth curve, shared objects and strategies per arena."""
    from packager.emit.layout_png import write_layout_png  # Pillow: loaded only when reporting
    from packager.compare.measured_layout import tflite_layouts
    from packager.emit.report import write_report
    from packager.emit.report_data import arena_picture

    with user_errors():
        check_semantics(semantics)
        m = read_model(model)
        arenas = plan_model(m, semantics, strategy, dims)
        measured = tflite_layouts(model, m, arenas, semantics) if measure else None
        written = [write_report(output, m, arenas, source_name=model.name, semantics=semantics,
                                strategy=strategy, include_times=not no_times, measured=measured)]
        if png is not None:
            written.append(write_layout_png(png, arena_picture(m, arenas[0], strategy),
                                            f"{model.name} under {semantics} semantics"))
    for path in written:
        out.print(f"wrote {path}")


EXIT_OVER_BUDGET = 3


@app.command()
def package(model: Path = typer.Argument(..., help="A .tflite file."),
            output: Path = typer.Option(..., "--output", "-o", help="The folder to write (created or updated atomically)."),
            semantics: str = typer.Option("tflm", "--semantics", "-s",
                                          help=f"Runtime rules: {', '.join(SEMANTICS)}."),
            strategy: str = typer.Option("best", "--strategy", help="best, or one offset strategy's name."),
            budget: Optional[str] = typer.Option(None, "--budget", help="Fail (exit 3) when the arena needs more: bytes, or 256K, 1M."),
            name: Optional[str] = typer.Option(None, "--name", help="File and C prefix (default: the model's name)."),
            dims: list[str] = DimOption,
            no_report: bool = typer.Option(False, "--no-report", help="Do not write <prefix>_report.html.")) -> None:
    """Plan, prove and write a model's memory plan for a device: sidecar plan (JSON + FlatBuffer),
    C header, model array, report page and, for tflm, the .tflite with its offline plan. A model
    with dynamic shapes needs a bound for every symbol (--dim): the plan holds for all of them."""
    from packager.text.package_summary import summary_lines
    from packager.package.build import BudgetExceeded, package as package_model, parse_bytes

    with user_errors():
        try:
            result = package_model(model, output, semantics=semantics, strategy=strategy,
                                   budget=None if budget is None else parse_bytes(budget), name=name,
                                   dims=dims, report=not no_report)
        except BudgetExceeded as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(EXIT_OVER_BUDGET)
    for line in summary_lines(result):
        typer.echo(line)  # plain: no wrapping, so file lists and notes stay one line each


@app.command()
def compare(models: list[Path] = typer.Argument(..., help=".tflite files or folders of them."),
            json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
            csv_file: Optional[Path] = typer.Option(None, "--csv", help="Also write one row per model."),
            markdown: bool = typer.Option(False, "--markdown", help="Print the table as Markdown."),
            no_runtimes: bool = typer.Option(False, "--no-runtimes",
                                             help="Planned figures only; do not run the runtimes.")) -> None:
    """Measure TFLite's and TFLite Micro's arenas, check our prediction of them byte for byte, and
    show what the best plan saves."""
    from rich.progress import Progress

    from packager.compare.comparison import compare_model, expand_models, notes
    from packager.text.compare_view import (TABLE_HEADERS, comparison_json, comparison_row, csv_text,
                                       markdown_table, table_cells)
    from packager.emit.atomic_write import write_atomically

    with user_errors():
        paths = expand_models(models)
        if not paths:
            raise PackagerError("no .tflite files in " + ", ".join(map(str, models)))
        results = []
        with Progress(console=Console(stderr=True), transient=True,
                      disable=json_out or len(paths) < 2) as progress:
            task = progress.add_task("measuring", total=len(paths))
            for path in paths:
                progress.update(task, description=path.name)
                results.append(compare_model(path, measure=not no_runtimes))
                progress.advance(task)
        rows = [comparison_row(r) for r in results]
        if csv_file is not None:
            write_atomically(csv_file, csv_text(rows).encode())
    if json_out:
        print_json([comparison_json(r) for r in results])
        return
    if markdown:
        sys.stdout.write(markdown_table(rows))
    else:
        table = Table(*TABLE_HEADERS, title="Arenas in bytes: measured, predicted (✓ byte for byte), best plans")
        for row in rows:
            table.add_row(*table_cells(row))
        out.print(table)
    for line in notes(results, rows):
        out.print(line, markup=False)  # runtime messages and pip extras contain [brackets]


def main() -> None:
    app()
