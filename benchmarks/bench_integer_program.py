"""The integer program inside `best`: its CPU seconds and its result against the lower bound at
250 / 1,000 / 10,000 / 100,000 records on the four synthetic shapes.

    python -m benchmarks.bench_integer_program [--sizes 250,1000,10000,100000] [--shapes chain,...]

As in `best`, it starts from the best plan of the shared-object strategies listed before it in the
registry (min_cost_flow only up to its own limit); when that plan already meets the lower bound,
`best` reports it as is and the integer program does not run ("at the bound"). "Alone" is
`plan --strategy integer_program`: it starts from greedy_by_size_improved's plan. Times are CPU
seconds of this process (time.process_time) and leave out highspy's import (a few milliseconds,
once per process). Up to 250 records the whole model is solved; above, the window search runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synthetic import SHAPES, usage_records
from benchmarks.text_table import percent_over, render
from packager.errors import SolverLimitError
from packager.plan.objects import integer_program
from packager.plan.portfolio import validate
from packager.plan.problem import Problem
from packager.plan.registry import OBJECT_STRATEGIES

DEFAULT_SIZES = (250, 1_000, 10_000, 100_000)
DEFAULT_SHAPES = ("chain", "residual", "branching", "transformer")


def start_plan(problem: Problem):
    """The best plan `best` hands the integer program (ties: the earlier strategy)."""
    best = None
    for s in OBJECT_STRATEGIES:
        if s.name == integer_program.NAME:
            break
        try:
            plan = s.run(problem)
        except SolverLimitError:  # min_cost_flow above its limit
            continue
        if best is None or plan.total < best.total:
            best = plan
    return best


def row(shape: str, n: int) -> list[str]:
    problem = Problem(records=tuple(usage_records(SHAPES[shape](n))))
    bound = problem.object_lower_bound
    start = start_plan(problem)
    cells = [f"{shape} {n:,}", f"{len(problem.records):,}", f"{bound:,}",
             f"{start.total:,} ({percent_over(start.total, bound)})"]
    began = time.process_time()
    alone = integer_program.solve(problem.records)
    alone_seconds = time.process_time() - began
    validate(problem, alone.plan)
    alone_cells = [f"{alone.plan.total:,} ({percent_over(alone.plan.total, bound)})",
                   f"{alone_seconds:.3f}"]
    if start.total <= bound:
        return cells + ["at the bound", "-", "-"] + alone_cells + ["-"]
    began = time.process_time()
    solution = integer_program.solve(problem.records, start=start)
    seconds = time.process_time() - began
    validate(problem, solution.plan)
    plan = solution.plan
    return cells + [f"{plan.total:,} ({percent_over(plan.total, bound)})",
                    "yes" if solution.proven_optimal else "no", f"{seconds:.3f}",
                    *alone_cells, plan.search_stopped or "-"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--shapes", default=",".join(DEFAULT_SHAPES))
    args = parser.parse_args(argv)
    import highspy  # noqa: F401  (its import is not the integer program's work)

    rows = []
    for shape in args.shapes.split(","):
        for n in (int(s) for s in args.sizes.split(",")):
            rows.append(row(shape, n))
            print(f"  {shape} {n:,}: done", file=sys.stderr, flush=True)
    print(render(["shape, records asked", "records", "lower bound", "start (best before it)",
                  "in best", "proven", "CPU s", "alone (its own start)", "CPU s",
                  "in best: stopped by"], rows))


if __name__ == "__main__":
    main()
