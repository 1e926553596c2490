"""CPU seconds of the shared-object greedy strategies (by size, by breadth, by size improved) on
the synthetic shapes at 1,000 / 10,000 / 100,000 records, with the growth exponent.

    python -m benchmarks.bench_object_greedy [--sizes 1000,10000,100000] [--shapes chain,...]
                                             [--repeat 3]

Each cell is the least CPU time (time.process_time) of --repeat runs of the strategy as `best`
runs it (through the registry, the cyclic collector paused), on a fresh problem each time of the
same Records, whose derived columns (the dense timeline), which every strategy of a problem shares,
are made before the clock starts. k is the slope of log(time) over log(n); times under 2 ms are left out of the fit.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_scale import exponent
from benchmarks.synthetic import SHAPES, usage_records
from benchmarks.text_table import render
from packager.plan.problem import Problem
from packager.plan.records import Records
from packager.plan.registry import OBJECT_STRATEGIES

NAMES = ("greedy_by_size", "greedy_by_breadth", "greedy_by_size_improved")
DEFAULT_SIZES = (1_000, 10_000, 100_000)
DEFAULT_SHAPES = ("chain", "residual", "branching", "transformer")


def seconds(strategy, records: tuple, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        problem = Problem(records=records)
        start = time.process_time()
        strategy.run(problem)
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_object_greedy",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--shapes", default=",".join(DEFAULT_SHAPES))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    strategies = [s for s in OBJECT_STRATEGIES if s.name in NAMES]
    rows = []
    for shape in args.shapes.split(","):
        times: dict[str, dict[int, float]] = {s.name: {} for s in strategies}
        for n in sizes:
            records = Records.of(usage_records(SHAPES[shape](n)))
            records.dense_last  # shared by every strategy of a problem
            for s in strategies:
                times[s.name][n] = seconds(s, records, args.repeat)
            print(f"  {shape} {n:,}: done", file=sys.stderr, flush=True)
        total = {n: sum(t[n] for t in times.values()) for n in sizes}
        for name, row in [*times.items(), ("the three together", total)]:
            k = exponent(row)
            rows.append([f"{shape}: {name}", *(f"{row[n]:.3f}" for n in sizes),
                         "-" if k is None else f"{k:.2f}"])
    print("\n### Shared-object greedy strategies: CPU seconds, growth exponent k\n")
    print(render(["shape: strategy", *(f"n={n:,}" for n in sizes), "k"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
