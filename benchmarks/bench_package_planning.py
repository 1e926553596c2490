"""CPU seconds of the planning `package` does, phase by phase, in a fresh process: the arenas'
records (lifetimes and TFLite Micro's scratch buffers) and lower bounds, then each strategy the package runs
(in registry order, until one meets the lower bound) and the validation of its plan, and the
whole of `plan_arenas(model, semantics, to_ship=True)`; with the process's peak memory.

The first strategy that runs a compiled loop (inputs of `_gaps.COMPILE_FROM` records or more)
also pays numba's import and the load of the cached code: that figure is shown on its own line.

    python -m benchmarks.bench_package_planning [model.tflite] [--semantics tflm]

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
from packager.plan import portfolio
from packager.plan.offsets import _gaps
from packager.plan.records import UsageRecord
from packager.reader import read_model

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = REPO / ".cache" / "scale" / "chain_100000.v1.tflite"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", default=str(DEFAULT_MODEL))
    parser.add_argument("--semantics", default="tflm")
    args = parser.parse_args(argv)
    if not Path(args.model).is_file():
        print(f"no model at {args.model} (python -m benchmarks.bench_scale writes the scale models)")
        return 1
    model = read_model(args.model)
    rows: list[list[str]] = []
    clock = time.process_time

    warmed: list[bool] = []

    def run_and_validate(strategy, problem, so_far=None):
        if not warmed:  # the compiled loops' one-off cost, apart from the first strategy's
            warmed.append(True)
            start = clock()
            if len(problem.records) >= _gaps.COMPILE_FROM and _gaps.compiled_module() is not None:
                _warm_up()
                rows.append(["numba: import, load of the cached loops", f"{clock() - start:.3f}", "", ""])
        start = clock()
        plan = (strategy.improve(problem, so_far.plan, strategy.budget)
                if so_far is not None and strategy.improve is not None else strategy.run(problem))
        ran = clock() - start
        portfolio.validate(problem, plan)
        checked = clock() - start - ran
        total = plan.arena if hasattr(plan, "arena") else plan.total
        rows.append([f"{strategy.kind} {strategy.name}", f"{ran:.3f}", f"{checked:.3f}", f"{total:,}"])
        return portfolio.Outcome(strategy.name, strategy.kind, plan, ran)

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
    try:
        start = clock()
        arenas.plan_arenas(model, args.semantics, to_ship=True)
        planning = clock() - start
    finally:
        portfolio._run = run
    rows.append(["plan_arenas (strategies, validation, choice)", f"{planning:.3f}", "", ""])
    rows.append(["planning in all (records, bounds, plan_arenas)", f"{records_seconds + planning:.3f}", "", ""])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"{Path(args.model).name}, semantics {args.semantics}: CPU seconds; peak memory {peak} MB")
    print(render(["phase", "run", "validate", "arena / total"], rows))
    return 0


def _warm_up() -> None:
    """One tiny call of each compiled loop: numba loads the cached code on its first call."""
    from packager.plan.offsets import greedy_in_order, strip_packing
    records = tuple(UsageRecord(i, i, i + 1, 16) for i in range(8))
    saved = _gaps.COMPILE_FROM, strip_packing.COMPILE_FROM
    _gaps.COMPILE_FROM = strip_packing.COMPILE_FROM = 0
    try:
        greedy_in_order.plan(records, 16)
        strip_packing.plan(records, 16)
    finally:
        _gaps.COMPILE_FROM, strip_packing.COMPILE_FROM = saved


if __name__ == "__main__":
    sys.exit(main())
