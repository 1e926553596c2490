"""CPU seconds of the min_cost_flow strategy by record count, on the four shapes of
benchmarks/synthetic.py and on random records, printed as a table.

    python -m benchmarks.bench_min_cost_flow [--sizes 1000,3000,10000,20000,30000,100000]
        [--numpy-up-to 3000] [--loop-up-to 31000]

The compiled loops' one-off costs (importing numba, loading or compiling the kernels) are timed
first and apart. `--numpy-up-to` also times the numpy form (the one small inputs take) up to that
many records and checks that both give every record the same predecessor. Beside the loop (up to
`--loop-up-to` records: its work grows as the square of the count) the range-tree solver that
plan() takes above LOOP_RECORDS is timed at every size, with both solvers' flow costs (equal:
both are exact) or the CPU seconds it spent before refusing, and the steps (range-tree queries and
updates, what its budget counts) it took, both solves together.
"""

from __future__ import annotations

import argparse
import random
import time

from benchmarks.synthetic import SHAPES, usage_records
from packager.errors import SolverLimitError
from packager.plan.objects import min_cost_flow
from packager.plan.records import UsageRecord


def random_records(n: int, seed: int = 7) -> list[UsageRecord]:
    """Lifetimes of up to 40 operators over n / 2 operators, sizes up to 100,000 bytes (as in
    tests/pins/pin_cases.py)."""
    rng, n_ops = random.Random(seed), max(1, n // 2)
    out = []
    for i in range(n):
        first = rng.randrange(n_ops)
        last = min(n_ops - 1, first + rng.randrange(40))
        size = rng.choice((0, rng.randrange(1, 100_000), 64 * rng.randrange(1, 40)))
        out.append(UsageRecord(i, first, last, size))
    return out


def flow_cost(records, reused) -> int:
    """What the flow pays: a new object costs its size, a reused one the size increase."""
    return sum(r.size if c < 0 else max(0, r.size - records[c].size) for r, c in zip(records, reused))


started_at = [0.0]  # when the latest timed call began (a refusal reports the time spent before it)


def counted_kernel(steps: list[int]):
    """The range-tree kernel, adding the steps of each call (refused or not) to `steps`."""
    from packager.plan import kernels
    from packager.plan.kernels import min_cost_flow_range

    assign = kernels.compiled(min_cost_flow_range).assign

    def kernel(order, *args):
        held, work = assign(order, *args)
        steps.append(work if work >= 0 else -1 - work)
        return held, work
    return kernel


def cpu(fn):
    start = started_at[0] = time.process_time()
    out = fn()
    return out, time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,3000,10000,20000,30000,100000")
    ap.add_argument("--numpy-up-to", type=int, default=3000)
    ap.add_argument("--loop-up-to", type=int, default=31000)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    _, first_use = cpu(lambda: min_cost_flow._compiled_reused_records(
        random_records(50), min_cost_flow._Graph(random_records(50))))
    print(f"compiled loop, first use (import numba, load or compile the kernel): {first_use:.2f} s")
    _, first_use = cpu(lambda: min_cost_flow._range_reused_records(random_records(50)))
    print(f"range-tree solver, first use (load or compile its kernel): {first_use:.2f} s")
    print(f"{'shape':12} {'records':>8} {'loop s':>7} {'numpy s':>8} {'same':>5} {'loop flow':>10} "
          f"{'tree s':>7} {'tree flow':>10} {'equal':>5} {'objects':>8} {'total bytes':>12} "
          f"{'tree steps':>12}")
    for n in sizes:
        cases = {name: usage_records(SHAPES[name](n)) for name in sorted(SHAPES)}
        cases["random"] = random_records(n)
        for name, records in cases.items():
            loop_s = numpy_s = same = loop_flow = "-"
            reused = None
            if len(records) <= args.loop_up_to:
                graph = min_cost_flow._Graph(records)
                reused, seconds = cpu(lambda: min_cost_flow._compiled_reused_records(records, graph))
                loop_s, loop_flow = f"{seconds:.2f}", flow_cost(records, reused)
            if len(records) <= args.numpy_up_to:
                expected, seconds = cpu(lambda: min_cost_flow._reused_records(
                    records, min_cost_flow._Graph(records)))
                numpy_s, same = f"{seconds:.2f}", "yes" if expected == reused else "NO"
            steps: list[int] = []
            try:
                tree, seconds = cpu(lambda: min_cost_flow._range_reused_records(
                    records, kernel=counted_kernel(steps)))
                tree_s, tree_flow = f"{seconds:.2f}", flow_cost(records, tree)
            except SolverLimitError:
                tree, seconds = None, time.process_time() - started_at[0]
                tree_s, tree_flow = f"{seconds:.2f}", "refused"
            equal = "-" if reused is None or tree is None else ("yes" if loop_flow == tree_flow else "NO")
            objects = total = "-"
            planned = reused if len(records) <= min_cost_flow.LOOP_RECORDS else tree
            if planned is not None:
                plan = min_cost_flow.plan_of_chains(records, planned)
                objects, total = str(len(plan.object_sizes)), f"{plan.total:,}"
            print(f"{name:12} {len(records):>8} {loop_s:>7} {numpy_s:>8} {same:>5} {loop_flow!s:>10} "
                  f"{tree_s:>7} {tree_flow!s:>10} {equal:>5} {objects:>8} {total:>12} {sum(steps):>12,}",
                  flush=True)


if __name__ == "__main__":
    main()
