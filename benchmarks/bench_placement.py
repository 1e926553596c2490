"""CPU milliseconds of the offset placement loop (`kernels.placement.place`) where `package` spends them:
greedy by size in TFLite's order (`greedy_by_size_tflite`) on the records a package plans (TFLite
Micro's semantics, kernel scratch buffers included) of each benchmark shape, at several sizes.

Columns: the strategy as `package` starts it (order, columns, the loop as Python under the
package's stop rule: stopped once a record ends above the lower bound), the loop as Python to its
end, the loop compiled to its end (numba's import and the load of its cached code paid before),
and the validation of the plan (`portfolio.validate`). Each figure is the median of `--runs` runs.

    python -m benchmarks.bench_placement [--shapes chain,residual,branching,transformer]
                                         [--sizes 1000,10000,100000] [--runs 5]

Times are CPU seconds of this process (time.process_time), with the cyclic collector paused
(benchmarks/collector.py); they still vary by several percent from run to run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Callable

from benchmarks.bench_scale import cached_model
from benchmarks.text_table import millis, render
from packager import arenas
from benchmarks.collector import collector_paused
from packager.plan import kernels, portfolio
from packager.plan.offsets import _gaps, _placement_kernel, greedy_by_size_tflite
from packager.plan.records import Records
from packager.plan.offsets._stop import Paused
from packager.reader import read_model


def median_cpu(run: Callable[[], object], runs: int) -> tuple[object, float]:
    times, got = [], None
    for _ in range(runs):
        start = time.process_time()
        got = run()
        times.append(time.process_time() - start)
    return got, statistics.median(times)


def row(shape: str, n: int, runs: int) -> list[str]:
    model = read_model(cached_model(shape, n))
    found = arenas.arenas_to_plan(model, "tflm")[0]
    problem = arenas.problem_of(found.lifetimes)
    stop = arenas._above_the_bound(problem, found.scratch)
    records, alignment = problem.records, problem.alignment
    order = greedy_by_size_tflite.allocation_order(records, problem.whole_run)

    def loop(plain_first: bool) -> Callable[[], object]:
        return lambda: _gaps.PlacementLoop(records, order, alignment, best_fit=True, remember_unaligned=True,
                                           plain_first=plain_first).run()

    with collector_paused():
        started, as_package = median_cpu(
            lambda: greedy_by_size_tflite.start(records, alignment, problem.whole_run, stop), runs)
        _, plain = median_cpu(loop(True), runs)
        compile_from, kernels.COMPILE_FROM = kernels.COMPILE_FROM, 1
        try:
            loop(False)()  # numba's import and the load of the cached code, untimed
            _, compiled = median_cpu(loop(False), runs)
        finally:
            kernels.COMPILE_FROM = compile_from
        plan = started.finish() if isinstance(started, Paused) else started

        def proof() -> None:
            portfolio.validate(problem, plan)
        _, checked = median_cpu(proof, runs)
    width, _ = _placement_kernel.bucket_width(Records.of(records))
    stopped = (f"stopped at {started.placed:,}" if isinstance(started, Paused) else "to the end")
    return [f"{shape} {n:,}", f"{len(records):,}", str(width), f"{millis(as_package)} ({stopped})",
            millis(plain), millis(compiled), millis(checked)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="chain,residual,branching,transformer")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    rows = [row(shape, int(n), args.runs) for shape in args.shapes.split(",") for n in args.sizes.split(",")]
    print("greedy_by_size (TFLite's order) on the records a package plans: CPU milliseconds, "
          f"median of {args.runs} runs")
    print(render(["shape, operators", "records", "bucket width", "as package starts it",
                  "loop, Python", "loop, compiled", "validate"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
