"""The command line: parses arguments, calls the library, renders results. Nothing else."""

from __future__ import annotations

import atexit
import gc
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

# Before numpy loads: its OpenBLAS starts a pool of threads that spin
# on start-up, 0.1-0.2 s of CPU a command, for matrix products no command makes (the planning is
# element-wise). A user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import typer
from rich.console import Console

from packager.errors import InternalError, PackagerError, shown
from packager.text.plan_text import print_dynamic, print_result
from packager.text.plan_view import arena_view, passes_view, result_view
from packager.arenas import plan_model, plan_records
from packager.plan import kernels
from packager.dynamic.stored_batch import stored_batch
from packager.reader import read_model
from packager.semantics import SEMANTICS, TFLITE, TFLM
from packager import stop_signals
from packager.package.output_dir import stop_signals_interrupt
# What one command alone needs is imported where that command runs (a command pays only for its
# own modules): inspect's views, the records CSV reader, the JSON writer, the version lookup.
from packager.size_limits import check_tensor_sizes


EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT, EXIT_OVER_BUDGET, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_CODES = ("Exit codes: 0 done; 1 a bug of tflpack's (one line; please report it); "
              "2 bad input or bad usage (one line on stderr); "
              "3 the plan is over --budget (package); 130 interrupted by Ctrl-C (143 by SIGTERM, "
              "129 by SIGHUP).")
# The default semantics of each command, and why it is the default (every output names the one used).
DEFAULT_SEMANTICS = {"inspect": TFLITE.name, "plan": TFLITE.name, "report": TFLITE.name, "package": TFLM.name}

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None,
                  invoke_without_command=True, epilog=EXIT_CODES,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Plan, prove and package the tensor memory of TensorFlow Lite models.")
out = Console(highlight=False)


def _argument_type_in_words(self, ctx):
    """Typer prints an argument's Python type (`<list[Path]>`) after its name; where we give the
    argument a metavar in words (MODEL...), that name says it all."""
    return None if self.metavar is not None else _typer_argument_type(self, ctx)


_typer_argument_type = typer.core.TyperArgument.display_type_rich
typer.core.TyperArgument.display_type_rich = _argument_type_in_words


def dim_option() -> list[str]:
    return typer.Option([], "--dim", metavar="NAME=MIN..MAX",
                        help="Bound a free input dimension (NAME=MIN..MAX), bind it (NAME=V) or rename "
                             "it (OLD:NEW=MIN..MAX). Repeatable.")


def semantics_option(command: str):
    default = DEFAULT_SEMANTICS[command]
    return typer.Option(None, "--semantics", "-s", metavar="|".join(SEMANTICS),
                        help=f"Runtime rules. Default: {default} ({SEMANTICS[default].runtime}; "
                             + ("the runtime that reads a packaged plan" if SEMANTICS[default].offline_plan
                                else "what a .tflite file runs in") + ").")


DimOption = dim_option()
JsonOption = typer.Option(False, "--json", help="Print machine-readable JSON instead of text.")
QuietOption = typer.Option(False, "--quiet", "-q", help="Print nothing but errors (and --json).")


def resolve_semantics(command: str, given: str | None) -> tuple[str, str]:
    """The semantics to use, and what the output says about it when the user did not choose."""
    if given is not None:
        return check_semantics(given), ""
    default = DEFAULT_SEMANTICS[command]
    other = next(s for s in DEFAULT_SEMANTICS.values() if s != default)
    return default, (f" (default of {command}: {SEMANTICS[default].runtime}; -s {other} for "
                     f"{SEMANTICS[other].runtime})")


def read_checked(path: Path):
    """The model, with any tensor too large for a plan named at once (every command)."""
    model = read_model(path)
    check_tensor_sizes(model, path.name)
    return model


@contextmanager
def working(what: str, quiet: bool = False) -> Iterator[None]:
    """A spinner on stderr for work that can take a while, only when stderr is a terminal."""
    err = Console(stderr=True)
    if quiet or not err.is_terminal:
        yield
        return
    with err.status(what):
        yield


@contextmanager
def user_errors() -> Iterator[None]:
    """Bad input becomes one line on stderr and exit code 2, never a traceback."""
    try:
        yield
    except PackagerError as e:
        typer.echo(f"error: {error_line(e)}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT)
    except InternalError as e:  # ours, not the input's: said as such, with its own exit code
        typer.echo(f"internal error: {error_line(e)}", err=True)
        raise typer.Exit(EXIT_INTERNAL)
    except KeyboardInterrupt:
        raise typer.Exit(stop_signals.interrupted_exit_code())  # (said once, here or at the signal)
    except ImportError:
        # A stop signal inside a compiled module's initialisation surfaces as an ImportError.
        if stop_signals.announced():
            raise typer.Exit(stop_signals.exit_code())
        raise


# The longest error line printed: the messages name what is wrong in a sentence or two; anything
# longer quotes too much of a file.
ERROR_LINE_LIMIT = 1000


def error_line(e: BaseException) -> str:
    """An error as one line: whatever it quotes (names and text from a file) escaped and capped."""
    return shown(str(e), ERROR_LINE_LIMIT)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tflpack {package_version()}")
        raise typer.Exit(EXIT_OK)


def package_version() -> str:
    from importlib import metadata
    try:
        return metadata.version("tflpack")
    except metadata.PackageNotFoundError:  # run from a checkout that is not installed
        return "(not installed: see pyproject.toml)"


@app.callback()
def _commands(ctx: typer.Context,
              version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                           help="Print the version and exit.")) -> None:
    """Plan, prove and package the tensor memory of TensorFlow Lite models."""
    stop_signals.reset()  # a new run (tests run several in one process)
    stop_signals_interrupt()  # SIGTERM and SIGHUP stop a run the way Ctrl-C does: nothing half-written
    if ctx.invoked_subcommand is None:  # the bare command: help, and success
        typer.echo(ctx.get_help())
        raise typer.Exit(EXIT_OK)


def check_semantics(name: str) -> str:
    if name not in SEMANTICS:
        raise PackagerError(f"unknown semantics '{name}' (choose from {', '.join(SEMANTICS)})")
    return name


def stored_shape_field(batch, semantics: str) -> dict:
    """`stored_shape` in --json when a batch -1 only in shape_signature was planned at the stored
    shape (dynamic/stored_batch.py); nothing otherwise."""
    return {"stored_shape": batch.view(semantics)} if batch is not None else {}


def print_json(data: object) -> None:
    """json.dumps(data, indent=2, sort_keys=True) + newline, written in pieces (json_text)."""
    from packager.emit.json_text import write_json
    with user_errors():  # Ctrl-C while a long document is written: exit 130, no traceback
        sys.stdout.flush()  # (the bytes go under the text layer)
        write_json(data, sys.stdout.buffer.write)


@app.command(epilog=EXIT_CODES)
def inspect(model: Path = typer.Argument(..., metavar="MODEL", help="A .tflite file."),
            semantics: Optional[str] = semantics_option("inspect"),
            dims: list[str] = DimOption,
            json_out: bool = JsonOption,
            records: bool = typer.Option(False, "--records", help="Also list every usage record.")) -> None:
    """Summarise a model: subgraphs, ops, which tensors are planned, and their lifetimes."""
    with user_errors():
        from packager.text.inspect_text import print_summary
        from packager.text.inspect_view import model_summary
        semantics, said = resolve_semantics("inspect", semantics)
        summary = model_summary(read_checked(model), semantics, source=model, dims=tuple(dims))
    if json_out:
        print_json(summary)
        return
    print_summary(out, summary, show_records=records)
    if said:
        out.print(f"semantics: {semantics}{said}", markup=False, soft_wrap=True)


@app.command(epilog=EXIT_CODES)
def plan(model: Optional[Path] = typer.Argument(None, metavar="[MODEL]", help="A .tflite file (or use --records)."),
         semantics: Optional[str] = semantics_option("plan"),
         strategy: str = typer.Option("best", "--strategy", metavar="NAME",
                                      help="best, all, or one strategy's name."),
         records: Optional[Path] = typer.Option(None, "--records", metavar="FILE.csv",
                                                help="Plan usage records from a MiniMalloc CSV instead."),
         dims: list[str] = DimOption,
         gpu: bool = typer.Option(False, "--gpu", help="What the TFLite GPU delegate's OpenCL, Metal and "
                                  "OpenGL backends would allocate, beside our best plan."),
         json_out: bool = JsonOption,
         offsets_only: bool = typer.Option(False, "--offsets-only",
                                           help="With --records: the best offsets soonest (planners "
                                                "until one meets the bound, then the exact search; "
                                                "no shared objects).")) -> None:
    """Plan every arena with the chosen strategies; print each result beside the lower bound."""
    said, batch = "", None
    with user_errors():
        if (model is None) == (records is None):
            raise PackagerError("give a MODEL or --records FILE.csv (one of the two)")
        if offsets_only and (records is None or strategy != "best"):
            raise PackagerError("--offsets-only goes with --records FILE.csv and no --strategy")
        if gpu:
            if model is None:
                raise PackagerError("--gpu plans a MODEL's tensors, not --records")
            from packager.plan.gpu_backends import gpu_answer
            from packager.text.gpu_text import gpu_view, print_gpu
            with working(f"planning {model.name} for the GPU delegate"):
                answer = gpu_answer(read_checked(model))
    if gpu:
        if json_out:
            print_json({"source": model.name, "gpu": gpu_view(answer)})
        else:
            out.print(f"{model.name}", style="bold", markup=False)
            print_gpu(out, answer)
        return
    with user_errors():
        if records is not None:
            from packager.plan.csv_records import read_records_csv
            with working(f"planning {records.name}"):
                result = plan_records(read_records_csv(records), strategy, offsets_only=offsets_only)
            arenas = [(None, False, result, None)]  # (subgraph, inline, result, passes)
            title = f"{records.name}: {len(result.problem.records)} records"
        else:
            semantics, said = resolve_semantics("plan", semantics)
            m = read_checked(model)
            with working(f"planning {model.name}"):
                arenas = [(a.lifetimes.subgraph, a.lifetimes.inline, a.result, a.passes)
                          for a in plan_model(m, semantics, strategy, dims)]
            batch = stored_batch(m, dims)
            title = f"{model.name} under {semantics} semantics"
    if json_out:  # (the views exist only here: every strategy's every tensor, written as it goes)
        print_json({"source": (records or model).name, "semantics": None if records else semantics,
                    "arenas": [arena_view(*a) for a in arenas], **stored_shape_field(batch, semantics)})
        return
    out.print(title, style="bold", markup=False)
    if said:
        out.print(f"semantics: {semantics}{said}", markup=False, soft_wrap=True)
    if batch is not None:
        out.print(f"note: {batch.note(semantics)}", markup=False, soft_wrap=True)
    for subgraph, inline, result, passes in arenas:
        where = ("all records" if subgraph is None else
                 "whole model (inline)" if inline else f"subgraph {subgraph}")
        print_result(out, where, result, timeline=("step" if subgraph is None else
                                                   "scope" if inline else "op"))
        if passes is not None:
            print_dynamic(out, passes_view(passes)["dynamic"])


@app.command(epilog=EXIT_CODES)
def report(model: Path = typer.Argument(..., metavar="MODEL", help="A .tflite file."),
           output: Path = typer.Option(..., "--output", "-o", metavar="FILE.html", help="The HTML page to write."),
           semantics: Optional[str] = semantics_option("report"),
           strategy: str = typer.Option("best", "--strategy", metavar="NAME",
                                        help="best, or the strategy whose plan to draw."),
           dims: list[str] = DimOption,
           png: Optional[Path] = typer.Option(None, "--png", metavar="FILE.png",
                                              help="Also write the first arena's layout as a PNG."),
           no_times: bool = typer.Option(False, "--no-times",
                                         help="Leave planning times out, so the page is byte-identical."),
           measure: bool = typer.Option(True, "--measure/--no-measure",
                                        help="Set TFLite's measured layout beside ours (when installed)."),
           json_out: bool = JsonOption,
           quiet: bool = QuietOption) -> None:
    """Write a one-page HTML report: layout, breadth curve, shared objects and strategies per arena.
    The page and the picture are written together or not at all."""
    with user_errors():  # (imports inside: an interrupt while loading them is still an interrupt)
        from packager.emit.layout_png import render_layout_png  # Pillow: loaded only when reporting
        from packager.compare.measured_layout import tflite_layouts
        from packager.emit.report import render_report_html
        from packager.package.output_dir import write_files
        from packager.pictures import arena_picture
        semantics, said = resolve_semantics("report", semantics)
        m = read_checked(model)
        with working(f"planning {model.name}", quiet):
            arenas = plan_model(m, semantics, strategy, dims)
            batch = stored_batch(m, dims)
            measured = tflite_layouts(model, m, arenas, semantics) if measure else None
        pictures = [arena_picture(m, a, strategy) for a in arenas]
        html = render_report_html(pictures, source_name=model.name, semantics=semantics, strategy=strategy,
                                  include_times=not no_times, measured=measured)
        files = {output: html.encode("utf-8")}
        if png is not None:
            files[png] = render_layout_png(pictures[0], f"{model.name} under {semantics} semantics")
        written = write_files(files)
    if json_out:
        print_json({"source": model.name, "semantics": semantics, "strategy": strategy,
                    "files": [{"path": str(p), "bytes": len(files[p])} for p in written],
                    "arenas": [{"subgraph": a.lifetimes.subgraph, "inline": a.lifetimes.inline,
                                **result_view(a.result, with_tensors=False), **passes_view(a.passes)}
                               for a in arenas], **stored_shape_field(batch, semantics)})
        return
    if quiet:
        return
    for path in written:
        out.print(f"wrote {path}", markup=False)
    if said:
        out.print(f"semantics: {semantics}{said}", markup=False, soft_wrap=True)
    if batch is not None:
        out.print(f"note: {batch.note(semantics)}", markup=False, soft_wrap=True)


@app.command(epilog=EXIT_CODES)
def package(models: list[Path] = typer.Argument(..., metavar="MODEL...",
                                                help="A .tflite file; several: one TFLite Micro arena shared by "
                                                     "them all, set up in this order (docs/tflm-arena.md)."),
            output: Path = typer.Option(..., "--output", "-o", metavar="DIR",
                                        help="The folder to write (created or updated atomically)."),
            semantics: Optional[str] = semantics_option("package"),
            strategy: str = typer.Option("best", "--strategy", metavar="NAME",
                                         help="best, or one offset strategy's name."),
            budget: Optional[str] = typer.Option(None, "--budget", metavar="BYTES",
                                                 help="Fail (exit 3) when the arena needs more: bytes, or 256K, 1M."),
            name: Optional[str] = typer.Option(None, "--name", metavar="PREFIX",
                                               help="File and C prefix (default: the model's name)."),
            dims: list[str] = DimOption,
            no_report: bool = typer.Option(False, "--no-report", help="Do not write <prefix>_report.html."),
            target: str = typer.Option("host", "--target", metavar="TARGET",
                                       help="The TFLite Micro build the whole arena is for: host (the pinned "
                                            "64-bit wheel), x86_64-linux (its sources built for 64-bit Linux), "
                                            "armhf-linux (32-bit ARM Linux), cortex-m or a core "
                                            "(cortex-m0 ... cortex-m85: bare metal, reference kernels), "
                                            "either with +cmsis-nn (CMSIS-NN kernels)."),
            no_verify: bool = typer.Option(False, "--no-verify",
                                           help="Do not run the packaged model on tflite-micro before writing."),
            keep_offline_plan: bool = typer.Option(False, "--keep-offline-plan",
                                                   help="Keep an OfflineMemoryAllocation the model already has "
                                                        "(e.g. Vela's) instead of replacing it."),
            regions: Optional[str] = typer.Option(None, "--regions", metavar="PART=SECTION:SIZE,...",
                                                  help="TFLite Micro's memory in two buffers: non-persistent=SECTION:SIZE"
                                                       ",persistent=SECTION:SIZE (e.g. non-persistent=.dtcm:64K,"
                                                       "persistent=.sram:512K); exit 3 when a part does not fit."),
            json_out: bool = JsonOption,
            quiet: bool = QuietOption) -> None:
    """Plan, prove and write a model's memory plan for a device: sidecar plan (JSON + FlatBuffer),
    C header, model array, report page and, for tflm, the .tflite with its offline plan. A model
    with dynamic shapes needs a bound for every free input dimension (--dim): the plan holds for
    all of them. Files this tool wrote into DIR for this model before (as its plan records them)
    and does not write now are removed in the same step and named; other files in DIR are kept,
    never overwritten, and the input model is never replaced. Several models (tflm): each packaged
    as one is, plus the one arena they share on one MicroAllocator (<name>_arena.h, --name
    default "shared")."""
    if len(models) > 1:
        return _package_shared(models, output, semantics, strategy, budget, name, dims, no_report, target,
                               no_verify, keep_offline_plan, json_out, quiet)
    model = models[0]
    with user_errors():
        from packager.text.package_summary import summary_json, summary_lines
        from packager.package.build import BudgetExceeded, package as package_model, parse_bytes
        semantics, said = resolve_semantics("package", semantics)
        try:
            with working(f"packaging {model.name}", quiet):
                result = package_model(model, output, semantics=semantics, strategy=strategy,
                                       budget=None if budget is None else parse_bytes(budget), name=name,
                                       dims=dims, report=not no_report, target=target,
                                       verify=not no_verify, keep_offline_plan=keep_offline_plan,
                                       regions=regions)
        except BudgetExceeded as e:
            typer.echo(f"error: {error_line(e)}", err=True)
            raise typer.Exit(EXIT_OVER_BUDGET)
    if json_out:
        print_json(summary_json(result))
        return
    if quiet:
        return
    lines = summary_lines(result)
    if said:
        lines.insert(1, f"  semantics: {semantics}{said}")
    for line in lines:
        typer.echo(line)  # plain: no wrapping, so file lists and notes stay one line each


def _package_shared(models, output, semantics, strategy, budget, name, dims, no_report, target, no_verify,
                    keep_offline_plan, json_out, quiet) -> None:
    """`package A B ...`: several models in one arena (packager/package/shared_arena.py)."""
    with user_errors():
        from packager.package.build import BudgetExceeded, parse_bytes
        from packager.package.shared_arena import package_shared
        from packager.text.shared_summary import shared_json, shared_lines
        semantics, _ = resolve_semantics("package", semantics)
        if semantics != TFLM.name:
            raise PackagerError(f"several models share an arena in TFLite Micro only (--semantics tflm, not {semantics})")
        if dims:
            raise PackagerError("--dim applies to one model: package a model with dynamic shapes on its own")
        try:
            with working(f"packaging {len(models)} models sharing one arena", quiet):
                result = package_shared(models, output, name=name, strategy=strategy,
                                        budget=None if budget is None else parse_bytes(budget),
                                        report=not no_report, target=target, verify=not no_verify,
                                        keep_offline_plan=keep_offline_plan)
        except BudgetExceeded as e:
            typer.echo(f"error: {error_line(e)}", err=True)
            raise typer.Exit(EXIT_OVER_BUDGET)
    if json_out:
        print_json(shared_json(result))
    elif not quiet:
        for line in shared_lines(result):
            typer.echo(line)


@app.command(epilog=EXIT_CODES)
def compare(models: list[Path] = typer.Argument(..., metavar="MODEL", help=".tflite files or folders of them."),
            json_out: bool = JsonOption,
            csv_file: Optional[Path] = typer.Option(None, "--csv", metavar="FILE.csv",
                                                    help="Also write one row per model."),
            markdown: bool = typer.Option(False, "--markdown", help="Print the table as Markdown."),
            no_runtimes: bool = typer.Option(False, "--no-runtimes",
                                             help="Planned figures only; do not run the runtimes."),
            runtime: Optional[str] = typer.Option(
                None, "--runtime", metavar="litert|tflite-runtime|all",
                help="TFLite version: litert (ai-edge-litert), tflite-runtime (2.14, in its own "
                     "environment), or all (the default): every one installed, a row each."),
            timeout: float = typer.Option(60.0, "--timeout", metavar="SECONDS", min=1,
                                          help="Stop a runtime's try after this long; the row then says it did "
                                               "not finish (a model that never ends)."),
                        quiet: bool = QuietOption) -> None:
    """Measure TFLite's and TFLite Micro's arenas, check our prediction of them byte for byte, and
    show what the best plan saves. Each model runs under tflite, tflm and ideal semantics, and
    every column names the one it uses."""
    with user_errors():
        from rich.progress import Progress

        from packager.compare.comparison import compare_model, expand_models, notes
        from packager.runtimes.tflite_versions import ALL, CHOICES, chosen
        from packager.text.compare_view import (comparison_json, comparison_rows, comparison_table,
                                                csv_text, error_json, error_rows, markdown_table)
        from packager.emit.atomic_write import write_atomically
        from packager.text.tables import print_table
        if runtime is not None and runtime not in (*CHOICES, ALL):
            raise PackagerError(f"--runtime {runtime}: choose one of {', '.join(CHOICES)}, or {ALL}")
        tflite_runtimes = tuple(c.name for c in chosen(runtime))  # default: every installed one
        paths = expand_models(models)
        if not paths:
            raise PackagerError("no .tflite files in " + ", ".join(map(str, models)))
        bad: dict[Path, str] = {}  # a file that cannot be compared: its row says why, the rest go on
        for path in paths:  # a size no plan can hold is named before minutes of measuring
            try:
                read_checked(path)
            except PackagerError as e:
                bad[path] = error_line(e)
        results = []
        err = Console(stderr=True)
        # Progress on stderr, only for a person watching a terminal.
        with Progress(console=err, transient=True, disable=quiet or not err.is_terminal) as progress:
            task = progress.add_task("measuring", total=len(paths))
            for path in paths:
                progress.update(task, description=path.name)
                if path not in bad:
                    try:
                        results.append(compare_model(path, measure=not no_runtimes,
                                                     tflite_runtimes=tflite_runtimes, timeout=timeout))
                    except PackagerError as e:
                        bad[path] = error_line(e)
                progress.advance(task)
        done = {Path(r.path): r for r in results}
        rows = [row for path in paths
                for row in (error_rows(path, bad[path]) if path in bad else comparison_rows(done[path]))]
        if csv_file is not None:
            write_atomically(csv_file, csv_text(rows).encode())
    if json_out:
        print_json([error_json(path, bad[path]) if path in bad else comparison_json(done[path])
                    for path in paths])
    elif not quiet:
        if markdown:
            sys.stdout.write(markdown_table(rows))
        else:
            print_table(out, comparison_table(rows))
        for line in notes(results, rows):
            out.print(line, markup=False)  # runtime messages and pip extras contain [brackets]
    if bad:  # after every other model: each bad file in one line, and a failing exit code
        for message in bad.values():
            typer.echo(f"error: {message}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT)


# Python's cyclic collector runs after every 700 new objects, and each tenth and hundredth run
# walks the older ones again. A command builds millions that make no cycles (a model's tensors,
# its usage records, the plans, the files' pieces): collected every 100,000 instead, `package` at
# 100,000 operators spends 2.7 s of CPU instead of 3.4 s, `plan --strategy best` at 10,000 1.0 s
# instead of 1.2 s. Cycles are still freed (pausing the collector outright lets a minute-long
# search of `plan --strategy best` grow by 25 MB). A numba compile, though, leaves its intermediate
# forms as cycles the older generations keep: the first run after an install (every kernel
# compiled in one process) peaked at 338 MB on a perfect packing of 1,000 buffers (`plan --records
# --offsets-only`; 357 MB with `best`). Collected after each kernel's compile: 293 MB (316 MB),
# 27 -> 29-33 s of CPU on that run only (a kernel loaded from numba's cache is no compile).
COLLECTOR_THRESHOLDS = (100_000, 50, 100)


def run(args: list[str]) -> int:
    """Run one command line; its exit code. Usage errors are one line `error: ...` (exit 2), as
    bad input is; a stop signal anywhere gives the signal's exit code (packager/stop_signals.py)."""
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
    if gc.collect not in kernels.AFTER_COMPILE:
        kernels.AFTER_COMPILE.append(gc.collect)
    # At exit the interpreter would run the collector over everything still held (every
    # strategy's plan, the model's columns, numba's modules): 0.1-0.3 s of CPU after `plan` at
    # 10,000 operators has printed. Frozen, they are left to reference counting, which frees
    # them anyway; open files are closed and flushed as before.
    atexit.register(gc.freeze)
    try:
        code = app(args=args, standalone_mode=False)
    except typer.Abort:  # end of input where the command line reads none: an interrupt
        code = EXIT_INTERRUPTED
    except typer.TyperException as e:  # click's usage errors: no such option, missing argument...
        typer.echo(f"error: {usage_line(e)}", err=True)
        return EXIT_BAD_INPUT
    if code == EXIT_INTERRUPTED or stop_signals.announced():  # typer turns an interrupt into 130
        return stop_signals.interrupted_exit_code()
    return code if isinstance(code, int) else EXIT_OK


def usage_line(e: BaseException) -> str:
    """A usage error in one line, with where to look: `no such option: --bogus (see cli.py plan
    --help)`."""
    message = (e.format_message() if hasattr(e, "format_message") else str(e)).rstrip(".")
    ctx = getattr(e, "ctx", None)
    where = f" (see {ctx.command_path} --help)" if ctx is not None else " (see --help)"
    return error_line(message[:1].lower() + message[1:] + where)


def main() -> None:
    """The command line as a function (the `tflpack` command runs packager.entry.main, which
    handles stop signals before this module loads)."""
    sys.exit(run(sys.argv[1:]))


# Commands of their own modules (packager/commands/).
from packager.commands import batch as _batch_command, gate as _gate_command  # noqa: E402
_batch_command.register(app)
_gate_command.register(app)
