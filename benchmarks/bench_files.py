"""CPU milliseconds of the files `package` renders from a finished plan, each alone: the report's
pictures (its drawn tensors; a plan drawn that is not one of the portfolio's own passes the
validator again), the report page's text, the C header and the model as a C array (of the model
as read); each made in full (its bytes counted, not kept) on the inputs one `package` run hands
it, the median of several runs, with the size of what it makes.

    python -m benchmarks.bench_files [model.tflite ...] [--runs 5]

Times are CPU seconds of this process (time.process_time) with the cycle collector paused
(benchmarks/collector.py), so that no collection falls inside one run: other load on the machine slows them less than wall-clock time would; they
still vary by several percent from run to run.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable

from benchmarks.text_table import millis, render
from packager.emit import model_array
from packager.emit.encoded_blocks import encoded_in_blocks
from packager.emit.report import report_html_chunks
from benchmarks.collector import collector_paused
from packager.package import build, c_header
from packager.pictures import arena_picture

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = REPO / ".cache" / "scale" / "branching_100000.v1.tflite"


def package_inputs(path: Path) -> dict:
    """What one `package` run (verification off) hands the renderers: its plan, model, prefix,
    planned arenas and strategy."""
    got: dict = {}
    write_files, report_html = build.write_files, build.report_html

    def take_files(folder, plan, model, prefix, *args, **kwargs):
        got.update(plan=plan, model=model, prefix=prefix)
        return write_files(folder, plan, model, prefix, *args, **kwargs)

    def take_report(planned, model, strategy, *args):
        got.update(planned=planned, strategy=strategy)
        return report_html(planned, model, strategy, *args)

    build.write_files, build.report_html = take_files, take_report
    try:
        with tempfile.TemporaryDirectory() as out:
            build.package(path, Path(out) / "out", strategy="best")
    finally:
        build.write_files, build.report_html = write_files, report_html
    return got


def _size(pieces: Iterable[bytes | memoryview]) -> int:
    return sum(len(piece) for piece in pieces)


def renderers(inputs: dict) -> list[tuple[str, Callable[[], int]]]:
    """(name, a call that makes it and returns its size in bytes or pictures)."""
    plan, model, prefix = inputs["plan"], inputs["model"], inputs["prefix"]
    planned, strategy = inputs["planned"], inputs["strategy"]

    def pictures():
        return [arena_picture(model, p, strategy, layout_outcome=p.offsets, labels=p.arena.scratch)
                for p in planned.arenas]

    drawn = pictures()
    page = lambda: _size(encoded_in_blocks(report_html_chunks(  # noqa: E731
        drawn, source_name=planned.plan.source.file, semantics=planned.plan.semantics, strategy=strategy,
        include_times=False)))
    return [("report: pictures", lambda: len(pictures())),
            ("report: page text", page),
            ("C header", lambda: _size(c_header.render_chunks(plan, model, prefix))),
            ("C array of the model", lambda: _size(model_array.source_chunks(prefix, model.raw)))]


def median_cpu(run: Callable[[], int], runs: int) -> tuple[float, int]:
    seconds, made = [], 0
    for _ in range(runs):
        with collector_paused():
            start = time.process_time()
            made = run()
            seconds.append(time.process_time() - start)
    return statistics.median(seconds), made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", default=[str(DEFAULT_MODEL)])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    rows = []
    for name in args.models:
        path = Path(name)
        if not path.is_file():
            print(f"no model at {path} (python -m benchmarks.bench_scale writes the scale models)")
            return 1
        total = 0.0
        for label, run in renderers(package_inputs(path)):
            seconds, made = median_cpu(run, args.runs)
            total += seconds
            rows.append([f"{path.name}: {label}", millis(seconds), f"{made:,}"])
        rows.append([f"{path.name}: all four", millis(total), ""])
    print(render(["file renderer", "CPU ms (median)", "bytes made (pictures: arenas)"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
