"""CPU seconds of the NNC offset strategy by its Python loop and by its kernel (compiled), per
shape and size, with the growth exponent k; every pair of plans checked identical.

    python -m benchmarks.bench_nnc [--sizes 1000,10000,100000] [--shapes chain,...] [--runs 2]

The Python loop is what runs below `_nnc_kernel.COMPILE_TIMES` x `kernels.COMPILE_FROM` records,
the compiled kernel from there on; both rows are timed at every size. Each time is the least of
--runs runs of `nnc.plan` (time.process_time), columns included; the compiled loop's one-off load
from numba's cache (after numba's import), or its compile when the cache is empty, is timed once,
apart, in its own line. Shapes: those of benchmarks/synthetic.py, and `perfect`, a perfect packing
(benchmarks/perfect_packing.py, seed 2).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_scale import exponent
from benchmarks.perfect_packing import csv_text, cut
from benchmarks.synthetic import SHAPES, usage_records
from benchmarks.text_table import render
from packager.plan import kernels
from packager.plan.csv_records import parse_records_csv
from packager.plan.offsets import _nnc_kernel, nnc

DEFAULT_SIZES = (1_000, 10_000, 100_000)
DEFAULT_SHAPES = ("chain", "residual", "branching", "transformer")


def shape_records(shape: str, n: int) -> tuple:
    """n records of a synthetic shape, or of a perfect packing (seed 2) for `perfect`."""
    if shape == "perfect":
        return tuple(parse_records_csv(csv_text(cut(n, 2))))
    return tuple(usage_records(SHAPES[shape](n)))


def least_time(records, runs: int, compiled: bool):
    saved = kernels.COMPILE_FROM
    kernels.COMPILE_FROM = 1 if compiled else 1 << 62
    try:
        best, plan = None, None
        for _ in range(runs):
            start = time.process_time()
            plan = nnc.plan(records, 64)
            seconds = time.process_time() - start
            best = seconds if best is None else min(best, seconds)
        return best, plan
    finally:
        kernels.COMPILE_FROM = saved


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_nnc",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--shapes", default=",".join(DEFAULT_SHAPES))
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    start = time.process_time()
    import numba  # noqa: F401  (timed apart from the kernel's first load)
    imported = time.process_time() - start
    warm = shape_records("chain", _nnc_kernel.COMPILE_TIMES * kernels.COMPILE_FROM)
    start = time.process_time()
    nnc.plan(warm, 64)
    loaded = time.process_time() - start
    print(f"numba import {imported:.3f} s; the compiled loop's first call, loaded from the cache "
          f"(or compiled when the cache is cold), on {len(warm):,} records: {loaded:.3f} s")
    rows = []
    for shape in args.shapes.split(","):
        python, compiled = {}, {}
        for n in sizes:
            records = shape_records(shape, n)
            python[n], by_python = least_time(records, args.runs, compiled=False)
            compiled[n], by_loop = least_time(records, args.runs, compiled=True)
            if by_python != by_loop:
                raise SystemExit(f"{shape} {n}: the plans differ")
            print(f"  {shape} {n:,}: done", file=sys.stderr, flush=True)
        for name, times in (("Python loop", python), ("kernel, compiled", compiled)):
            k = exponent(times)
            rows.append([f"{shape}, {name}", *(f"{times[n]:.3f}" for n in sizes),
                         "-" if k is None else f"{k:.2f}"])
    print()
    print(render(["NNC, CPU s", *(f"{n:,}" for n in sizes), "k"], rows))
    print("\nThe same plans both ways (checked for every row).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
