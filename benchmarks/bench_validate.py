"""CPU seconds of the independent checker on the synthetic shapes at 1,000 / 10,000 / 100,000
records: an object plan and an offset plan (greedy by size's, the shapes' usual winners), checked
once as the first plan of its records (the checker's per-records work included) and again as a
further plan of the same records (the checker's per-plan work only), with the growth exponent.

    python -m benchmarks.bench_validate [--sizes 1000,10000,100000] [--shapes chain,...]
                                        [--repeat 3]

Each cell is the least CPU time (time.process_time) of --repeat runs, the cyclic collector
paused; the plans are made before the clock starts. k is the slope of log(time) over log(n);
times under 2 ms are left out of the fit.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_scale import exponent
from benchmarks.synthetic import SHAPES, usage_records
from benchmarks.text_table import render
from packager.plan.records import Records
from packager.plan.problem import Problem
from packager.plan.registry import OBJECT_STRATEGIES, OFFSET_STRATEGIES
from packager.plan.validate import check_object_plan, check_offset_plan

DEFAULT_SIZES = (1_000, 10_000, 100_000)
DEFAULT_SHAPES = ("chain", "residual", "branching", "transformer")


def _plan(strategies, name: str, records: tuple):
    found = next(s for s in strategies if s.name == name).run(Problem(records=records))
    return getattr(found, "plan", found)


def seconds(check, records: tuple, plan, repeat: int, first: bool) -> float:
    best = float("inf")
    for _ in range(repeat):
        if first:
            records = Records.of(tuple(records))  # new records: the checker's per-records work again
        else:
            check(records, plan)  # the per-records work (kept with the records) done before the clock starts
        start = time.process_time()
        check(records, plan)
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_validate",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--shapes", default=",".join(DEFAULT_SHAPES))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    rows = []
    gc.disable()
    try:
        for shape in args.shapes.split(","):
            times: dict[str, dict[int, float]] = {}
            for n in sizes:
                records = Records.of(usage_records(SHAPES[shape](n)))
                objects = _plan(OBJECT_STRATEGIES, "greedy_by_size", records)
                offsets = _plan(OFFSET_STRATEGIES, "greedy_by_size", records)
                for label, check, plan in (("object plan", check_object_plan, objects),
                                           ("offset plan", check_offset_plan, offsets)):
                    for first in (True, False):
                        key = f"{label}, {'first' if first else 'further'}"
                        times.setdefault(key, {})[n] = seconds(check, records, plan, args.repeat, first)
                print(f"  {shape} {n:,}: done", file=sys.stderr, flush=True)
            for key, row in times.items():
                k = exponent(row)
                rows.append([f"{shape}: {key}", *(f"{row[n]:.4f}" for n in sizes),
                             "-" if k is None else f"{k:.2f}"])
    finally:
        gc.enable()
    print("\n### The checker: CPU seconds per plan, growth exponent k\n")
    print(render(["shape: plan, of its records", *(f"n={n:,}" for n in sizes), "k"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
