"""CPU seconds of the planning `package` does, phase by phase, in a fresh process: the arenas'
records (lifetimes and TFLite Micro's scratch buffers) and lower bounds, then each strategy the package runs
(in registry order, until one meets the lower bound; those that can stop do so once a tensor they
placed ends above the bound) and the validation of its plan, and the whole of
`plan_arenas(model, semantics, to_ship=True)`; with the process's peak memory and whether numba
was imported.

The strategy that first runs a compiled loop (inputs of `kernels.COMPILE_FROM` records or more,
outside a stopped run's Python start) also pays numba's import and the load of the cached code:
its row says so. `--no-plan-meets-the-bound` measures what stopping costs where it does not pay:
every stopped strategy is then resumed to its end.

    python -m benchmarks.bench_package_planning [model.tflite] [--semantics tflm] [--plain]
                                                [--no-plan-meets-the-bound] [--no-stop]

Times are CPU seconds of this process (time.process_time): other load on the machine slows them
less than wall-clock time would; they still vary by several percent from run to run.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

from benchmarks.text_table import render
from packager import arenas
from packager.plan import kernels, portfolio
from packager.plan.offsets._stop import Paused
from packager.plan.stoppable import STOPPABLE
from packager.reader import read_model

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = REPO / ".cache" / "scale" / "chain_100000.v1.tflite"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", default=str(DEFAULT_MODEL))
    parser.add_argument("--semantics", default="tflm")
    parser.add_argument("--plain", action="store_true",
                        help="planning's loops never compiled (as without numba)")
    parser.add_argument("--no-plan-meets-the-bound", action="store_true",
                        help="as if no plan met the lower bound: every strategy runs, the stopped "
                             "ones resumed to their end (the cost of stopping where it does not pay)")
    parser.add_argument("--no-stop", action="store_true",
                        help="no strategy stops above the bound (as before stopping was added)")
    args = parser.parse_args(argv)
    if args.plain:
        kernels.compiled = lambda kernel: kernel  # every kernel as its plain module
    if not Path(args.model).is_file():
        print(f"no model at {args.model} (python -m benchmarks.bench_scale writes the scale models)")
        return 1
    model = read_model(args.model)
    rows: list[list[str]] = []
    clock = time.process_time

    def numba_note(before: bool) -> str:
        return " (+ numba's import and load)" if not before and "numba" in sys.modules else ""

    def run_and_validate(strategy, problem, so_far=None):
        had_numba = "numba" in sys.modules
        start = clock()
        plan = (strategy.improve(problem, so_far.plan, strategy.budget)
                if so_far is not None and strategy.improve is not None else strategy.run(problem))
        ran = clock() - start
        portfolio.validate(problem, plan)
        checked = clock() - start - ran
        total = plan.arena if hasattr(plan, "arena") else plan.total
        rows.append([f"{strategy.kind} {strategy.name}{numba_note(had_numba)}", f"{ran:.3f}",
                     f"{checked:.3f}", f"{total:,}"])
        return portfolio.Outcome(strategy.name, strategy.kind, plan, ran)

    def started(strategy, problem, stop):
        if stop is None or strategy.name not in STOPPABLE:
            return run_and_validate(strategy, problem)
        had_numba = "numba" in sys.modules
        start = clock()
        got = STOPPABLE[strategy.name](problem, stop)
        ran = clock() - start
        if isinstance(got, Paused):
            rows.append([f"offsets {strategy.name}{numba_note(had_numba)}", f"{ran:.3f}", "",
                         f"stopped above the bound after {got.placed:,} of {got.steps:,} steps"])
            return got, ran
        portfolio.validate(problem, got)
        rows.append([f"offsets {strategy.name}{numba_note(had_numba)}", f"{ran:.3f}",
                     f"{clock() - start - ran:.3f}", f"{got.arena:,}"])
        return portfolio.Outcome(strategy.name, "offsets", got, ran)

    def finished(problem, paused, seconds):
        had_numba = "numba" in sys.modules
        start = clock()
        outcome = finish(problem, paused, seconds)
        rows.append([f"offsets {paused.strategy}, resumed to its end{numba_note(had_numba)}",
                     f"{clock() - start:.3f}", "", f"{outcome.total:,}"])
        return outcome

    start = clock()
    found = arenas.arenas_to_plan(model, args.semantics)
    records_seconds = clock() - start
    rows.append(["records (lifetimes, scratch buffers)", f"{records_seconds:.3f}", "",
                 f"{sum(len(a.lifetimes.records) for a in found):,} records"])
    start = clock()
    for arena in found:  # kept with the arena: plan_arenas asks for the same bounds
        problem = arenas.problem_of(arena.lifetimes)
        problem.offset_lower_bound, problem.object_lower_bound
    rows.append(["lower bounds (offsets, objects)", f"{clock() - start:.3f}", "", ""])
    records_seconds += clock() - start
    run, portfolio._run = portfolio._run, run_and_validate  # each strategy timed as it runs
    start_stoppable, portfolio._started = portfolio._started, started
    finish, portfolio._finished = portfolio._finished, finished
    optimal, above = arenas._optimal_to_ship, arenas._above_the_bound
    if args.no_plan_meets_the_bound:
        arenas._optimal_to_ship = lambda *_: (lambda outcome: False)
    if args.no_stop:
        arenas._above_the_bound = lambda *_: None
    try:
        start = clock()
        arenas.plan_arenas(model, args.semantics, to_ship=True)
        planning = clock() - start
    finally:
        portfolio._run, portfolio._started, portfolio._finished = run, start_stoppable, finish
        arenas._optimal_to_ship, arenas._above_the_bound = optimal, above
    rows.append(["plan_arenas (strategies, validation, choice)", f"{planning:.3f}", "", ""])
    rows.append(["planning in all (records, bounds, plan_arenas)", f"{records_seconds + planning:.3f}", "", ""])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"{Path(args.model).name}, semantics {args.semantics}"
          f"{', loops never compiled' if args.plain else ''}"
          f"{', as if no plan met the bound' if args.no_plan_meets_the_bound else ''}"
          f"{', no strategy stops above the bound' if args.no_stop else ''}: CPU seconds; "
          f"peak memory {peak} MB; numba {'imported' if 'numba' in sys.modules else 'not imported'}")
    print(render(["phase", "run", "validate", "arena / total"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
