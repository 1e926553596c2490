"""CPU seconds of the min_cost_flow strategy by record count, on the four shapes of
benchmarks/synthetic.py and on random records, printed as a table.

    python -m benchmarks.bench_min_cost_flow [--sizes 1000,3000,10000,20000] [--numpy-up-to 3000]

The compiled loop's one-off costs (importing numba, loading or compiling the kernel) are timed
first and apart. `--numpy-up-to` also times the numpy form (the one small inputs take) up to that
many records and checks that both give every record the same predecessor.
"""

from __future__ import annotations

import argparse
import random
import time

from benchmarks.synthetic import SHAPES, usage_records
from packager.plan.objects import min_cost_flow
from packager.plan.records import UsageRecord


def random_records(n: int, seed: int = 7) -> list[UsageRecord]:
    """Lifetimes of up to 40 operators over n / 2 operators, sizes up to 100,000 bytes (as in
    tests/plan/pin_cases.py)."""
    rng, n_ops = random.Random(seed), max(1, n // 2)
    out = []
    for i in range(n):
        first = rng.randrange(n_ops)
        last = min(n_ops - 1, first + rng.randrange(40))
        size = rng.choice((0, rng.randrange(1, 100_000), 64 * rng.randrange(1, 40)))
        out.append(UsageRecord(i, first, last, size))
    return out


def cpu(fn):
    start = time.process_time()
    out = fn()
    return out, time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,3000,10000,20000")
    ap.add_argument("--numpy-up-to", type=int, default=3000)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    _, first_use = cpu(lambda: min_cost_flow._compiled_reused_records(
        random_records(50), min_cost_flow._Graph(random_records(50))))
    print(f"compiled loop, first use (import numba, load or compile the kernel): {first_use:.2f} s")
    print(f"{'shape':12} {'records':>8} {'compiled s':>11} {'numpy s':>8} {'same':>5} {'objects':>8} "
          f"{'total bytes':>12}")
    for n in sizes:
        cases = {name: usage_records(SHAPES[name](n)) for name in sorted(SHAPES)}
        cases["random"] = random_records(n)
        for name, records in cases.items():
            graph = min_cost_flow._Graph(records)
            reused, compiled_s = cpu(lambda: min_cost_flow._compiled_reused_records(records, graph))
            numpy_s, same = "-", "-"
            if len(records) <= args.numpy_up_to:
                expected, seconds = cpu(lambda: min_cost_flow._reused_records_numpy(
                    records, min_cost_flow._Graph(records)))
                numpy_s, same = f"{seconds:.2f}", "yes" if expected == reused else "NO"
            plan = min_cost_flow.plan_of_chains(records, reused)
            objects, total = str(len(plan.object_sizes)), f"{plan.total:,}"
            if len(records) > min_cost_flow.MAX_RECORDS:
                total += " (plan refuses: above MAX_RECORDS)"
            print(f"{name:12} {len(records):>8} {compiled_s:>11.2f} {numpy_s:>8} {same:>5} {objects:>8} "
                  f"{total:>12}", flush=True)


if __name__ == "__main__":
    main()
