"""The exact offset search on MiniMalloc's challenging instances: one row per instance.

    python -m benchmarks.bench_exact [--nodes N] [--scout none|sweep|bisect|both] [--scout-nodes M] [CSV ...]
    python -m benchmarks.bench_exact --scale [--sizes 1000,2000,5000] [NETWORK ...]
    python -m benchmarks.bench_exact --large [--sizes 5000,10000,50000,100000]

`--scale` runs `best`'s offset searches on the synthetic scale models (benchmarks/synthetic.py)
and on the paper's networks: per input, the best plan of the rest of the portfolio, the exact
search's plan from it (never worse), whether the gap closed or why the search stopped, its nodes
and CPU seconds.

`--large` runs the exact search as `best` runs it (its registry budget: nodes and steps; the
time limit left out) on inputs of 5,000 to 100,000 records, from greedy by size's plan: one input
at the bound (the residual shape: `best` reports the plan as is, at no cost) and inputs whose
bound the search cannot reach, made of small hard instances repeated in time (`tiled`): random
long-lived records of MiniMalloc's kind (2,000 of them stay 1 KiB above their bound), and
MiniMalloc's D when ../shared has it, end to end and half overlapping (a node then scans every
record alive in the overlapped span: no decomposition). Per row: nodes, steps, CPU seconds of the
search (its instance included) and the peak resident memory of the process that ran it (one
process per row, the interpreter and numpy included).

Without CSV files it reads ../shared/benchmarks/minimalloc/*.csv. Each instance is solved from
nothing (no portfolio plan to start from) with the node budget `best` uses; the columns are our
peak over 2^20 (the capacity MiniMalloc is given), whether it is proven optimal (it meets the lower
bound, or every smaller capacity was searched out), the nodes and CPU seconds spent when it first
held a plan with peak <= 2^20 (MiniMalloc's bar), the nodes spent when it found the plan it
returns, the nodes spent, and CPU seconds of this process (they move with the machine; the peak,
the proof and the nodes do not). `--scout none` runs the schedule without the scout (the probe at
the bound first with half the budget, at most 200,000 nodes).

The probe is compiled past its first PLAIN_STEPS steps (packager/plan/kernels/exact_probe.py):
the first compiled probe of the process imports numba and compiles the probe or loads it from
numba's cache; that CPU time is printed before the table and left out of the rows.

MiniMalloc's figures beside ours: it finds a packing under the capacity 2^20 on every instance of
the suite (the benchmark's published result); its CPU time is ours too, measured on this machine
from its C++ build: 0.6 to 6.2 s per instance. On D and J, whose bound is below 2^20, the column
also gives what its C++ build did at capacities below 2^20 (measured here, CPU seconds): the
lowest capacity it packed, and the highest it could neither pack nor prove infeasible.
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
from packager.plan.csv_records import read_records_csv
from packager.plan.offsets import exact_search
from packager.plan.registry import EXACT_NODES
from packager.plan.records import offset_lower_bound
from packager.plan.validate import check_offset_plan
from packager.plan.records import OffsetPlan, UsageRecord
from packager.plan.portfolio import run_portfolio, validate
from packager.plan.problem import Problem
from packager.plan.registry import OFFSET_STRATEGIES, SEARCH_STRATEGIES, offset_strategy

REPO = Path(__file__).resolve().parent.parent
MINIMALLOC = REPO.parent / "shared" / "benchmarks" / "minimalloc"
CAPACITY = 1 << 20
MINIMALLOC_FIGURE = "<= 1.000, 0.6-6.2 s"
# MiniMalloc's C++ build at capacities below 2^20 (in KiB, CPU seconds, measured on this machine;
# "open": stopped without an answer).
MINIMALLOC_BELOW = {"D": "1009 KiB in 16.5 s; 1008 KiB open after 214 s",
                    "J": "1008 KiB open after 70 s"}


def row(path: Path, nodes: int, scout: str = exact_search.DEFAULT_SCOUT,
        scout_nodes: int | None = None) -> list[str]:
    records = read_records_csv(path)
    start = time.process_time()
    result = exact_search.search(records, 1, None, node_budget=nodes, scout=scout,
                                 scout_nodes=scout_nodes)
    cpu = time.process_time() - start
    check_offset_plan(records, OffsetPlan(exact_search.NAME, result.offsets, result.arena))
    name = path.name.split(".")[0]
    return [name, f"{len(records)}", f"{offset_lower_bound(records) / CAPACITY:.4f}",
            f"{result.arena / CAPACITY:.4f} ({result.arena // 1024} KiB)",
            "yes" if result.proven_optimal else f"no: {result.stopped}",
            under_capacity_after(result), under_capacity_cpu(result),
            f"{result.nodes_to_best:,}", f"{result.nodes:,}", f"{cpu:.1f}",
            MINIMALLOC_FIGURE + (f"; {MINIMALLOC_BELOW[name]}" if name in MINIMALLOC_BELOW else "")]


def under_capacity_cpu(result: exact_search.SearchResult) -> str:
    """The CPU seconds spent when the search first held a plan with peak <= 2^20."""
    if result.arena <= CAPACITY and not result.improvements:
        return "0.0"
    hit = next((cpu for (_, arena), cpu in zip(result.improvements, result.improvement_cpu)
                if arena <= CAPACITY), None)
    return "never" if hit is None else f"{hit:.1f}"


def kernel_load_cpu() -> float:
    """CPU seconds of the first probe in this process: importing numba, then compiling the probe
    or loading it from numba's cache (paid once per process, left out of the rows)."""
    saved, exact_search.PLAIN_STEPS = exact_search.PLAIN_STEPS, 0
    try:
        start = time.process_time()
        exact_search.search([UsageRecord(0, 5, 8, 2), UsageRecord(1, 6, 6, 9)], 4, node_budget=100)
        return time.process_time() - start
    finally:
        exact_search.PLAIN_STEPS = saved


def under_capacity_after(result: exact_search.SearchResult) -> str:
    """The nodes spent when the search first held a plan with peak <= 2^20 (MiniMalloc's bar)."""
    if result.arena <= CAPACITY and not result.improvements:
        return "0 (start)"
    hit = next((nodes for nodes, arena in result.improvements if arena <= CAPACITY), None)
    return "never" if hit is None else f"{hit:,}"


def random_steps(n: int, seed: int) -> list[UsageRecord]:
    """n records over a timeline of n / 2 steps, each alive for up to 13 steps, 64 B to 4 KiB."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        first = rng.randint(0, n // 2)
        out.append(UsageRecord(i, first, first + rng.randint(0, 12), rng.randint(1, 64) * 64))
    return out


def long_lived(n: int, seed: int, life: int = 100) -> list[UsageRecord]:
    """n records over a timeline of n steps, each alive for up to `life` steps, 1 to 96 KiB: at
    2,000 records and life 100 the exact search stays 1 KiB above the bound within its budget."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        first = rng.randint(0, n)
        out.append(UsageRecord(i, first, first + rng.randint(0, life), rng.randint(1, 96) * 1024))
    return out


def tiled(base: list[UsageRecord], n: int, overlap: float) -> list[UsageRecord]:
    """n records: copies of `base` one after another in time, each starting `1 - overlap` of
    base's span after the last (0: end to end, nothing alive across two copies)."""
    span = max(r.last_op for r in base) + 1
    shift = max(1, round(span * (1 - overlap)))
    out: list[UsageRecord] = []
    copy = 0
    while len(out) < n:
        for r in base[:n - len(out)]:
            out.append(UsageRecord(len(out), r.first_op + copy * shift, r.last_op + copy * shift, r.size))
        copy += 1
    return out


def large_subjects(n: int) -> list[tuple[str, list[UsageRecord]]]:
    from benchmarks.synthetic import SHAPES, usage_records

    out = [("residual (at the bound)", usage_records(SHAPES["residual"](n))),
           ("long-lived 2,000 repeated, end to end", tiled(long_lived(2_000, 1), n, 0.0)),
           ("long-lived 2,000 repeated, half overlapping", tiled(long_lived(2_000, 1), n, 0.5))]
    named = MINIMALLOC / "D.1048576.csv"
    if named.exists():
        d = read_records_csv(named)
        out += [("D repeated, end to end", tiled(d, n, 0.0)),
                ("D repeated, half overlapping", tiled(d, n, 0.5))]
    return out


def large_row(title: str, records: list[UsageRecord]) -> list[str]:
    """One input: greedy by size's plan, then the exact search from it as `best` runs it (the
    call `portfolio.improve` makes, with the registry's budget, then validated)."""
    import resource

    from packager.plan.offsets import greedy_by_size_tflite
    from packager.plan.portfolio import Outcome, improve

    kernel_load_cpu()  # import numba and load the probe before the clock starts
    problem = Problem(records=tuple(records))
    start = greedy_by_size_tflite.plan(problem.records, 1)
    search = offset_strategy(exact_search.NAME)
    bound = problem.offset_lower_bound
    cpu = time.process_time()
    if start.arena <= bound:  # `best` reports the plan as is
        arena = improve(problem, Outcome("greedy_by_size", "offsets", start, 0.0),
                        names=[exact_search.NAME])[0].total
        state, nodes, steps = "at the bound: not run", "-", "-"
    else:
        result = exact_search.search(problem.records, 1, start, search.budget.work, None, bound,
                                     step_budget=search.budget.steps(len(records)))
        validate(problem, OffsetPlan(exact_search.NAME, result.offsets, result.arena, 1))
        arena = result.arena
        state = "proven optimal" if result.proven_optimal else result.stopped
        nodes, steps = f"{result.nodes:,}", f"{result.steps:,}"
    cpu = time.process_time() - cpu
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    return [title, f"{len(records):,}", f"{bound:,}", f"{start.arena:,}", f"{arena:,}", state,
            nodes, steps, f"{cpu:.1f}", f"{rss:,}"]


def _large_row_of(args: tuple[int, int]) -> list[str]:
    n, k = args
    return large_row(*large_subjects(n)[k])


def large_rows(sizes: list[int]) -> list[list[str]]:
    """One child process per row, so that each row's peak memory is its own."""
    import multiprocessing

    rows = []
    ctx = multiprocessing.get_context("spawn")
    for n in sizes:
        for k in range(len(large_subjects(min(n, 2_000)))):
            with ctx.Pool(1) as pool:
                rows.append(pool.apply(_large_row_of, ((n, k),)))
            print(f"  {rows[-1][0]}: {rows[-1][8]} s", file=sys.stderr, flush=True)
    return rows


def scale_subjects(sizes: list[int], networks: list[str]) -> list[tuple[str, Problem]]:
    from benchmarks.synthetic import SHAPES, usage_records

    out = [(f"{shape} {n:,}", Problem(records=tuple(usage_records(make(n)))))
           for n in sizes for shape, make in SHAPES.items()]
    # The four shapes plan at their bound; random short lifetimes leave a gap to search.
    out += [(f"random steps {n:,}", Problem(records=tuple(random_steps(n, seed=3)))) for n in sizes]
    if networks:
        from benchmarks.paper_setting import paper_problems
        from fixtures.network_cache import network_path
        from packager.reader import read_model

        out += [(name, paper_problems(read_model(network_path(name)))[0]) for name in networks]
    return out


def scale_row(title: str, problem: Problem) -> list[str]:
    """The rest of `best`'s offsets, then the exact search from their best, as `best` runs it
    (without its safety-net time limit: the figures are the work budgets', nodes and steps)."""
    rest = run_portfolio(problem, object_names=[], baselines=False,
                         offset_names=[s.name for s in OFFSET_STRATEGIES + SEARCH_STRATEGIES
                                       if s.name != exact_search.NAME])
    start, bound = rest.best_offsets, problem.offset_lower_bound
    if start.total <= bound:  # `best` does not run it: nothing to improve
        return [title, f"{len(problem.records):,}", f"{bound:,}", f"{start.total:,} ({start.strategy})",
                f"{start.total:,}", "yes", "at the bound", "-", "-"]
    cpu = time.process_time()
    budget = offset_strategy(exact_search.NAME).budget
    result = exact_search.search(problem.records, problem.alignment, start.plan, budget.work, None,
                                 bound, step_budget=budget.steps(len(problem.records)))
    cpu = time.process_time() - cpu
    validate(problem, OffsetPlan(exact_search.NAME, result.offsets, result.arena, problem.alignment))
    state = "proven optimal" if result.proven_optimal else result.stopped
    return [title, f"{len(problem.records):,}", f"{bound:,}", f"{start.total:,} ({start.strategy})",
            f"{result.arena:,}", "yes" if result.arena <= start.total else "NO", state,
            f"{result.nodes:,}", f"{cpu:.1f}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="*", type=Path)
    parser.add_argument("--nodes", type=int, default=EXACT_NODES, help="node budget per instance")
    parser.add_argument("--scout", default=exact_search.DEFAULT_SCOUT,
                        choices=("none",) + exact_search.SCOUT_LADDERS,
                        help="first spend --scout-nodes on small probes over this ladder of capacities")
    parser.add_argument("--scout-nodes", type=int, default=None,
                        help="the scout's node budget (default: the search's own)")
    parser.add_argument("--scale", action="store_true",
                        help="synthetic scale models and the paper's networks (named as arguments)")
    parser.add_argument("--sizes", default=None,
                        help="records of the synthetic models (--scale: 1000,2000,5000; --large: "
                             "5000,10000,50000,100000)")
    parser.add_argument("--large", action="store_true",
                        help="the exact search as best runs it, 5,000 to 100,000 records, at and off the bound")
    args = parser.parse_args(argv)
    if args.large:
        sizes = [int(s) for s in (args.sizes or "5000,10000,50000,100000").split(",") if s]
        print(render(["input", "records", "bound", "greedy_by_size", "exact_search", "gap", "nodes",
                      "steps", "CPU s", "peak RSS MB"], large_rows(sizes)))
        return 0
    if args.scale:
        sizes = [int(s) for s in (args.sizes or "1000,2000,5000").split(",") if s]
        rows = [scale_row(t, p) for t, p in scale_subjects(sizes, [str(n) for n in args.csv])]
        print(render(["input", "records", "bound", "rest of best", "exact_search", "never worse",
                      "gap", "nodes", "CPU s"], rows))
        return 0
    paths = args.csv or sorted(MINIMALLOC.glob("*.csv"))
    if not paths:
        print(f"no instances: pass CSV files or provide {MINIMALLOC}", file=sys.stderr)
        return 1
    scout = "" if args.scout == "none" else args.scout
    print(f"probe kernel: {kernel_load_cpu():.1f} s CPU to import numba and compile or load it")
    rows = [row(p, args.nodes, scout, args.scout_nodes) for p in paths]
    print(render(["instance", "records", "bound / 2^20", "peak / 2^20", "proven",
                  "<= 2^20 after (nodes)", "<= 2^20 after (CPU s)", "best after (nodes)",
                  "nodes", "CPU s", "MiniMalloc (peak / 2^20, CPU)"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
