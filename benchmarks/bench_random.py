"""Each strategy on random usage records: the speed figures docs/benchmarks.md quotes.

    python -m benchmarks.bench_random [--sizes 1000,10000] [--seed 0]

Records: first op uniform over 2,000 ops, lifetime 1..40 ops, size 64..1,000,000 bytes (seeded).
Strategies whose time at a size extrapolates past 60 s are skipped at the next size; one above
its registry limit (`best` leaves it out there) or refusing the size is noted and not run. CPU
seconds of this process.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.text_table import render
from packager.errors import SolverLimitError
from packager.plan.problem import Problem
from packager.plan.records import UsageRecord
from packager.plan.registry import BASELINES, OBJECT_STRATEGIES, OFFSET_STRATEGIES
from packager.plan.portfolio import validate


def random_records(n: int, seed: int) -> list[UsageRecord]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        first = rng.randrange(2000)
        out.append(UsageRecord(i, first, first + rng.randrange(40), rng.randrange(64, 1_000_001)))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    rows, last = [], {}
    strategies = (*OFFSET_STRATEGIES, *OBJECT_STRATEGIES, *BASELINES)
    times: dict[str, list[str]] = {f"{s.kind} {s.name}": [] for s in strategies}
    for n in sizes:
        problem = Problem(records=tuple(random_records(n, args.seed)), alignment=1)
        for s in strategies:
            key = f"{s.kind} {s.name}"
            prev = last.get(key)
            if prev is not None and prev[1] * (n / prev[0]) ** 2 > 60:
                times[key].append("skipped")
                continue
            if s.max_records is not None and n > s.max_records:
                times[key].append(f"> max_records {s.max_records:,}")
                continue
            start = time.process_time()
            try:
                plan = s.run(problem)
            except SolverLimitError:
                times[key].append("refuses")
                continue
            seconds = time.process_time() - start
            if s.kind != "baseline":
                validate(problem, plan)
            last[key] = (n, seconds)
            times[key].append(f"{seconds:.3f}")
    for key, cells in times.items():
        rows.append([key, *cells])
    print(render(["strategy (CPU s)", *[f"n={n:,}" for n in sizes]], rows))


if __name__ == "__main__":
    main()
