"""CPU seconds of every planning strategy at 1,000 / 10,000 / 100,000 records, with the growth
exponent, and `best` (the whole portfolio: every strategy, the searches, validation) in total.

    python -m benchmarks.bench_strategies [--sizes 1000,10000,100000] [--shapes chain,...]
                                          [--budget S] [--no-best]

Times are CPU seconds of this process (time.process_time), so other work on the machine changes
them little. The records come from benchmarks/synthetic.py ('paper' lifetimes). A strategy whose
times so far extrapolate beyond the budget is skipped at the larger size; one that runs past the
budget is stopped; one above its registry max_records (where `best` leaves it out) is not run;
the table says which. Each strategy row times the strategy's whole work (nothing shared through
the problem with the strategies before it); the portfolio row shares what `best` shares. k is
the slope of log(time) over log(n) (least squares over the sizes measured); times under 2 ms are
left out of the fit.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_scale import OverBudget, deadline, exponent
from benchmarks.synthetic import SHAPES, usage_records
from benchmarks.text_table import render
from packager.errors import SolverLimitError
from packager.plan.portfolio import Outcome, run_portfolio, validate
from packager.plan.problem import Problem
from packager.plan.registry import (BASELINES, OBJECT_STRATEGIES, OFFSET_STRATEGIES,
                                    SEARCH_STRATEGIES)

DEFAULT_SIZES = (1_000, 10_000, 100_000)
DEFAULT_SHAPES = ("chain", "residual", "branching", "transformer")
DEFAULT_BUDGET = 60.0  # CPU-ish seconds one strategy may take at one size


class Row:
    def __init__(self, name: str) -> None:
        self.name, self.seconds, self.notes = name, {}, {}

    def measure(self, n: int, run: Callable[[], object], budget: float) -> object:
        sizes = sorted(self.seconds)
        if sizes:  # extrapolate from the largest size measured, at least linearly
            k = max(1.0, exponent({s: self.seconds[s] for s in sizes[-2:]}) or 1.0)
            guess = self.seconds[sizes[-1]] * (n / sizes[-1]) ** k
            if guess > budget:
                self.notes[n] = f"skipped (~{guess:,.0f} s)"
                return None
        start = time.process_time()
        try:
            with deadline(budget):
                out = run()
        except OverBudget:
            self.notes[n] = f"> {budget:.0f} s"
            return None
        except SolverLimitError:
            self.notes[n] = "gives up"
            return None
        self.seconds[n] = time.process_time() - start
        return out

    def cells(self, sizes: list[int]) -> list[str]:
        k = exponent(self.seconds)
        return [self.name, *(self.notes.get(n) or (f"{self.seconds[n]:.3f}" if n in self.seconds
                                                   else "-") for n in sizes),
                "-" if k is None else f"{k:.2f}"]


def above_limit(row: Row, strategy, n: int) -> bool:
    """A strategy `best` leaves out at this size (the registry's max_records) is not timed."""
    if strategy.max_records is None or n <= strategy.max_records:
        return False
    row.notes[n] = f"> max_records {strategy.max_records:,}"
    return True


def alone(problem: Problem) -> Problem:
    """The problem without the work its strategies share (the registry makes the shared-object
    greedy by size once per problem): each row times its strategy's whole work. The lower bounds,
    timed in their own row, come along."""
    copy = replace(problem)
    for bound in ("offset_lower_bound", "object_lower_bound"):
        copy.__dict__[bound] = getattr(problem, bound)
    return copy


def strategy_rows(shape: str, sizes: list[int], budget: float, best: bool) -> list[Row]:
    rows: dict[str, Row] = {}

    def row(key: str) -> Row:
        return rows.setdefault(key, Row(key))

    for n in sizes:
        problem = Problem(records=tuple(usage_records(SHAPES[shape](n))))
        row("lower bounds").measure(n, lambda: (problem.offset_lower_bound,
                                                problem.object_lower_bound), budget)
        start: Outcome | None = None
        for s in (*OFFSET_STRATEGIES, *OBJECT_STRATEGIES, *BASELINES):
            if above_limit(row(f"{s.kind} {s.name}"), s, n):
                continue
            plan = row(f"{s.kind} {s.name}").measure(n, lambda: s.run(alone(problem)), budget)
            if plan is None or s.kind == "baseline":
                continue
            row("validation").measure(n, lambda: validate(problem, plan), budget)
            if s.kind == "offsets" and (start is None or plan.arena < start.total):
                start = Outcome(s.name, s.kind, plan, 0.0)
        for s in SEARCH_STRATEGIES:
            if start is None:
                break
            if above_limit(row(f"search {s.name}"), s, n):
                continue
            # From the best plan so far, with the work budget only: no time limit decides.
            plan = row(f"search {s.name}").measure(
                n, lambda: s.improve(problem, start.plan, s.budget.capped(None)), budget)
            if plan is not None and plan.arena < start.total:
                start = Outcome(s.name, "offsets", plan, 0.0)
        if best:
            row("best (whole portfolio)").measure(n, lambda: run_portfolio(problem), budget)
        print(f"  {shape} {n:,}: done", file=sys.stderr, flush=True)
    return list(rows.values())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_strategies",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--shapes", default=",".join(DEFAULT_SHAPES))
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET)
    parser.add_argument("--no-best", action="store_true", help="leave out the whole portfolio")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    for shape in args.shapes.split(","):
        rows = strategy_rows(shape, sizes, args.budget, not args.no_best)
        print(f"\n### {shape}: CPU seconds per strategy, growth exponent k\n")
        print(render(["strategy", *(f"n={n:,}" for n in sizes), "k"],
                     [r.cells(sizes) for r in rows]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
