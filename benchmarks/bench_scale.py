"""How planning time grows with the number of tensors: every strategy on synthetic usage records,
and the whole `plan --strategy best` pipeline on the same graphs written as .tflite files.

    python -m benchmarks.bench_scale [--sizes 1000,10000,100000] [--shapes chain,...] [--budget S]
    python -m benchmarks.bench_scale --phases --shapes chain   (CPU per phase, the reader beside a
        reference reader, memory of the per-tensor objects, package phase by phase, commands end to end)
    python benchmarks/bench_scale.py ...

For each graph shape (benchmarks/synthetic.py) and size it prints each strategy's time and the
exponent k of a least-squares fit time ~ n^k on a log-log scale. A strategy is skipped at a size
when its times so far extrapolate beyond the budget, or stopped when it runs past the budget; the
table says which. The pipeline (read + lifetimes + portfolio with local search + validation, as
`tflpack plan FILE --strategy best` does under the default 'tflite' semantics) runs on the .tflite
files, cached in .cache/scale/; `package` is timed too.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import signal
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synthetic import SHAPES, SYNTHETIC_VERSION, tflite_bytes, usage_records
from benchmarks.text_table import render
from packager.errors import SolverLimitError
from packager.plan.portfolio import Outcome, improve
from packager.plan.problem import Problem
from packager.plan.registry import (OBJECT_STRATEGIES, OFFSET_STRATEGIES, SEARCH_LIMITS,
                                    SEARCH_STRATEGIES, SEARCHES)
from packager.arenas import plan_model
from packager.reader import read_model

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".cache" / "scale"
DEFAULT_SIZES = (1_000, 10_000, 100_000)
DEFAULT_BUDGET = 60.0  # seconds one strategy may take at one size
PIPELINE_BUDGET = 90.0  # seconds one whole-pipeline run may take
# Wall-clock seconds one command may take end to end (--phases): its CPU seconds are the figure,
# and on a loaded machine a 40-second run takes minutes of wall clock.
COMMAND_TIMEOUT = 600.0
PIPELINE_SEMANTICS = "tflite"  # the CLI's default
MIN_FIT_SECONDS = 0.002  # shorter times are mostly timer and interpreter noise: not fitted


class OverBudget(Exception):
    pass


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Interrupt the block after `seconds` (SIGALRM: pure-Python loops stop promptly)."""
    def expire(signum, frame):
        raise OverBudget()
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Timing:
    """One strategy's times by size: seconds, or a note ('skipped', '> 60 s')."""
    name: str
    seconds: dict[int, float]
    notes: dict[int, str]

    def predicted(self, n: int) -> float | None:
        """Extrapolate from the two largest sizes measured (at least linear growth)."""
        sizes = sorted(self.seconds)
        if not sizes:
            return None
        last = sizes[-1]
        k = max(1.0, exponent({s: self.seconds[s] for s in sizes[-2:]}) or 2.0)
        return self.seconds[last] * (n / last) ** k

    def cell(self, n: int) -> str:
        if n in self.notes:
            return self.notes[n]
        return f"{self.seconds[n]:.3f}" if n in self.seconds else "-"


def exponent(points: dict[int, float]) -> float | None:
    """Slope of log(time) against log(n), least squares, over times long enough to trust."""
    usable = [(math.log(n), math.log(t)) for n, t in points.items() if t >= MIN_FIT_SECONDS]
    if len(usable) < 2:
        return None
    mx = sum(x for x, _ in usable) / len(usable)
    my = sum(y for _, y in usable) / len(usable)
    sxx = sum((x - mx) ** 2 for x, _ in usable)
    return sum((x - mx) * (y - my) for x, y in usable) / sxx if sxx else None


def time_strategy(timing: Timing, n: int, run: Callable[[], object], budget: float) -> object:
    guess = timing.predicted(n)
    if guess is not None and guess > budget:
        timing.notes[n] = f"skipped (~{guess:,.0f} s)"
        return None
    start = time.perf_counter()
    try:
        with deadline(budget):
            result = run()
    except OverBudget:
        timing.notes[n] = f"> {budget:.0f} s"
        return None
    except SolverLimitError:  # refuses this size outright, or found no plan within its caps
        timing.notes[n] = "gives up"
        return None
    timing.seconds[n] = time.perf_counter() - start
    return result


def strategies_on_records(shape: str, sizes: list[int], budget: float) -> list[Timing]:
    timings = {s.kind + ":" + s.name: Timing(f"{s.kind} {s.name}", {}, {})
               for s in (*OFFSET_STRATEGIES, *OBJECT_STRATEGIES)}
    for name in SEARCHES:
        timings["search:" + name] = Timing(f"offsets {name} (from the best)", {}, {})
    for n in sizes:
        problem = Problem(records=tuple(usage_records(SHAPES[shape](n))), alignment=1)
        best: Outcome | None = None
        for s in (*OFFSET_STRATEGIES, *OBJECT_STRATEGIES):
            plan = time_strategy(timings[s.kind + ":" + s.name], n, lambda: s.run(problem), budget)
            if plan is not None and s.kind == "offsets":
                outcome = Outcome(s.name, s.kind, plan, 0.0)
                if best is None or outcome.total < best.total:
                    best = outcome
        if best is not None:
            # The exact search's conflict lists grow with the square of the live records: it
            # runs up to the size `best` runs it at.
            names = [m for m in SEARCHES if m != "exact_search" or n <= (SEARCH_LIMITS[m] or n)]
            time_searches([timings["search:" + name] for name in names], n,
                          lambda: improve(problem, best, names=names), min(budget, search_budget()))
        print(f"  {shape} {n:,}: strategies done", file=sys.stderr, flush=True)
    return list(timings.values())


def search_budget() -> float:
    """Twice the time caps the portfolio gives its searches: a run past that ignores its cap."""
    caps = sum(s.budget.time_limit or 0.0 for s in SEARCH_STRATEGIES)
    return 2 * caps if caps else DEFAULT_BUDGET


def time_searches(timings: list[Timing], n: int, run: Callable[[], list[Outcome]],
                  budget: float) -> None:
    """The portfolio's searches run as one call (each starts from the best so far). They carry
    their own time caps, so they are never skipped by extrapolation: overrunning is the finding."""
    try:
        with deadline(budget):
            outcomes = run()
    except OverBudget:
        for t in timings:
            t.notes[n] = f"> {budget:.0f} s (together)"
        return
    by_name = {o.strategy: o.seconds for o in outcomes}
    for t in timings:
        name = t.name.split()[1]
        if name in by_name:
            t.seconds[n] = by_name[name]


def cached_model(shape: str, n: int) -> Path:
    """Building a 100k-tensor file takes seconds: keep it (generation is deterministic)."""
    path = CACHE / f"{shape}_{n}.v{SYNTHETIC_VERSION}.tflite"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=CACHE, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(tflite_bytes(SHAPES[shape](n)))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return path


def fallback_notes() -> list[str]:
    """Strategies that switch to a cheaper method above a size, so their exponent means little."""
    notes = []
    for kind, name in (("offsets", "nnc"),
                       ("offsets", "simulated_allocator"), ("offsets", "strip_packing")):
        try:
            module = importlib.import_module(f"packager.plan.{kind}.{name}")
        except ImportError:
            continue
        limit = getattr(module, "MAX_RECORDS", None)
        if limit is not None:
            notes.append(f"{kind} {name} falls back to a cheaper strategy above {limit:,} records "
                         f"(its MAX_RECORDS), still under its own name.")
    return notes


def package_function() -> Callable[..., object]:
    from packager.package.build import package
    return package


def pipeline_row(shape: str, n: int, budget: float,
                 package: Callable[..., object] | None) -> list[str]:
    path = cached_model(shape, n)
    label, read_s = f"{shape} {n:,}", None
    start = time.perf_counter()
    try:
        with deadline(budget):
            model = read_model(path)
            read_s = time.perf_counter() - start
            arenas = plan_model(model, PIPELINE_SEMANTICS, "best")
    except OverBudget:
        read = f"{read_s:.2f}" if read_s is not None else "-"
        stopped = f"> {budget:.0f} s (stopped)"
        return [label, read, "-", stopped, "-", "-", "not run" if package else "-"]
    total = time.perf_counter() - start
    result = arenas[0].result
    best = result.best_offsets
    bound = result.problem.offset_lower_bound
    searched = [o.seconds for o in result.offsets if o.strategy in SEARCHES]
    return [label, f"{read_s:.2f}", f"{total - read_s:.2f}", f"{total:.2f}",
            f"{sum(searched):.2f}" if searched else "-",
            f"{best.strategy} {100 * (best.total - bound) / max(bound, 1):+.2f}%",
            time_package(package, path, budget) if package else "-"]


def time_package(package: Callable[..., object], path: Path, budget: float) -> str:
    """`package FILE --strategy best` with its defaults, into a directory thrown away after."""
    with tempfile.TemporaryDirectory(prefix="tflpack-scale-") as out:
        start = time.perf_counter()
        try:
            with deadline(budget):
                package(path, Path(out) / "out", strategy="best")
        except OverBudget:
            return f"> {budget:.0f} s (stopped)"
        except Exception as e:  # a work in progress: report, do not abort the benchmark
            return f"error: {type(e).__name__}"
        return f"{time.perf_counter() - start:.2f}"


def _fmt(k: float | None) -> str:
    return "-" if k is None else f"{k:.2f}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_scale",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET,
                        help="seconds one strategy or pipeline run may take at one size")
    parser.add_argument("--pipeline-budget", type=float, default=PIPELINE_BUDGET,
                        help="seconds one whole-pipeline run may take")
    parser.add_argument("--command-timeout", type=float, default=COMMAND_TIMEOUT,
                        help="with --phases: wall-clock seconds one command may take end to end")
    parser.add_argument("--no-pipeline", action="store_true")
    parser.add_argument("--phases", action="store_true",
                        help="only the per-phase CPU table of the chain model, and package / plan "
                             "end to end in fresh processes (CPU seconds, peak memory)")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    shapes = args.shapes.split(",")
    start = time.perf_counter()
    if args.phases:
        from benchmarks.phases import (object_memory_rows, phase_rows, reader_rows, render_end_to_end,
                                       render_package_phases, render_phases)
        for shape in shapes:
            path_of = lambda n, shape=shape: cached_model(shape, n)
            print(f"\n### {shape}: CPU seconds per phase ('tflite' semantics), growth exponent k\n")
            print(render_phases(phase_rows(path_of, sizes, args.budget), sizes, exponent))
            print(f"\n### {shape}: the reader beside a struct-based reference reader, CPU seconds\n")
            print(render_phases(reader_rows(path_of, sizes), sizes, exponent))
            print(f"\n### {shape}: memory the per-tensor objects hold (tracemalloc, after each step)\n")
            print(render_phases(object_memory_rows(path_of, sizes), sizes, lambda seconds: None,
                                "held by (MB, bytes per tensor)"))
            print(f"\n### {shape}: `package` phase by phase ('tflm' semantics, --no-verify), CPU seconds\n")
            print(render_package_phases(path_of, sizes, exponent))
            print(f"\n### {shape}: commands end to end, each in a fresh process\n")
            print(render_end_to_end(path_of, sizes, args.command_timeout, exponent))
        print(f"\n(total {time.perf_counter() - start:.0f} s)")
        return 0
    for shape in shapes:
        timings = strategies_on_records(shape, sizes, args.budget)
        rows = [[t.name, *(t.cell(n) for n in sizes), _fmt(exponent(t.seconds)),
                 _fmt(exponent({n: t.seconds[n] for n in sorted(t.seconds)[-2:]}))]
                for t in timings]
        print(f"\n### {shape}: seconds per strategy (usage records, 'paper' lifetimes)\n")
        print(render(["strategy", *(f"n={n:,}" for n in sizes), "k (fit)", "k (last step)"],
                     rows))
    for note in fallback_notes():
        print(f"\nNote: {note}")
    if not args.no_pipeline:
        package = package_function()
        rows = [pipeline_row(shape, n, args.pipeline_budget, package)
                for shape in shapes for n in sizes]
        print(f"\n### whole pipeline, `plan --strategy best` ({PIPELINE_SEMANTICS} semantics), seconds\n")
        print(render(["graph", "read", "lifetimes + portfolio + validation", "total",
                      "of which searches", "best offsets vs bound", "package (s)"], rows))
    print(f"\n(total {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
