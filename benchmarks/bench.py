"""The paper's tables on our planners: Table 1 (shared objects) and Table 2 (offsets) for the six
networks of Pisarchyk & Lee 2020 and the shared real models, plus the MiniMalloc instances.

    python -m benchmarks.bench [--no-shared] [--no-minimalloc] [--graph-io] [NETWORK ...]
    python benchmarks/bench.py ...

Sizes are MiB (2^20 bytes), times milliseconds of one run on this machine (they move with load; the
sizes do not: every strategy is deterministic and the local search counts iterations). The setting
is the paper's: see benchmarks/paper_setting.py.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.paper_setting import MIB, paper_problems
from benchmarks.text_table import millis, mib, percent_over, render
from fixtures.network_cache import network_path
from fixtures.networks import NETWORKS
from packager.plan.csv_records import read_records_csv
from packager.plan.portfolio import Outcome, PortfolioResult, run_portfolio
from packager.plan.problem import Problem
from packager.reader import read_model

REPO = Path(__file__).resolve().parent.parent
SHARED_MODELS = REPO.parent / "shared" / "models"
MINIMALLOC = REPO.parent / "shared" / "benchmarks" / "minimalloc"
SHARED_TITLES = {"face_detection_short_range": "face_detect", "iris_landmark": "iris",
                 "hand_recrop": "hand_recrop", "selfie_segmentation": "selfie_seg"}

# (row label, registry name) in the paper's order.
TABLE1_ROWS = (("Naive", "naive"), ("Greedy in order", "greedy_in_order"),
               ("Min-cost flow", "min_cost_flow"), ("Greedy by breadth", "greedy_by_breadth"),
               ("Greedy by size", "greedy_by_size"),
               ("Greedy by size improved", "greedy_by_size_improved"),
               ("Integer program (HiGHS)", "integer_program"))
TABLE2_ROWS = (("Naive", "naive"), ("Greedy in order", "greedy_in_order"),
               ("Strip packing best-fit", "strip_packing"),
               ("Greedy by breadth", "greedy_by_breadth"), ("Greedy by size", "greedy_by_size"),
               ("Path cover", "path_cover"), ("NNC", "nnc"),
               ("Simulated allocator", "simulated_allocator"), ("Local search", "local_search"),
               ("Skyline tree search", "best_fit_search"))
OBJECTS_WITHIN = 0.10  # the floor: best shared objects within 10% of their bound


@dataclass(frozen=True)
class Subject:
    title: str
    problem: Problem


@dataclass(frozen=True)
class Measured:
    subject: Subject
    result: PortfolioResult
    seconds: float


def network_subjects(names: list[str], graph_io: bool) -> list[Subject]:
    return [Subject(NETWORKS[n].title, paper_problems(read_model(network_path(n)), graph_io)[0])
            for n in names]


def shared_subjects(graph_io: bool) -> list[Subject]:
    if not SHARED_MODELS.is_dir():
        return []
    return [Subject(SHARED_TITLES.get(p.stem, p.stem), paper_problems(read_model(p), graph_io)[0])
            for p in sorted(SHARED_MODELS.glob("*.tflite"))]


def measure(subject: Subject, objects: bool = True) -> Measured:
    start = time.perf_counter()
    result = run_portfolio(subject.problem, object_names=None if objects else [], baselines=False)
    return Measured(subject, result, time.perf_counter() - start)


def _outcome(outcomes: tuple[Outcome, ...], name: str) -> Outcome | None:
    return next((o for o in outcomes if o.strategy == name), None)


def _table(runs: list[Measured], kind: str, rows: tuple[tuple[str, str], ...]) -> tuple[str, str]:
    """The sizes table and the times table of one kind (objects or offsets)."""
    header = ["MiB", *(m.subject.title for m in runs)]
    theader = ["ms", *(m.subject.title for m in runs)]
    sizes, times = [], []
    for label, name in rows:
        found = [_outcome(getattr(m.result, kind), name) for m in runs]
        sizes.append([label, *(mib(o.total if o else None) for o in found)])
        times.append([label, *(millis(o.seconds if o else None) for o in found)])
    best = [getattr(m.result, f"best_{kind}") for m in runs]
    bounds = [m.result.problem.object_lower_bound if kind == "objects"
              else m.result.problem.offset_lower_bound for m in runs]
    sizes.append(["Best", *(mib(b.total) for b in best)])
    sizes.append(["Lower bound", *(mib(b) for b in bounds)])
    sizes.append(["Best over bound", *(percent_over(b.total, lb) for b, lb in zip(best, bounds))])
    sizes.append(["Best strategy", *(b.strategy for b in best)])
    times.append(["Best (all strategies)",
                  *(millis(sum(o.seconds for o in getattr(m.result, kind))) for m in runs)])
    return render(header, sizes), render(theader, times)


def print_tables(title: str, runs: list[Measured]) -> None:
    if not runs:
        return
    t1, t1_times = _table(runs, "objects", TABLE1_ROWS)
    t2, t2_times = _table(runs, "offsets", TABLE2_ROWS)
    print(f"\n### {title}: Table 1, shared objects (MiB)\n\n{t1}\n")
    print(f"Planning time (ms)\n\n{t1_times}\n")
    print(f"### {title}: Table 2, offsets (MiB)\n\n{t2}\n")
    print(f"Planning time (ms)\n\n{t2_times}\n")


def print_floors(runs: list[Measured]) -> None:
    """The issue's floors, on the six networks."""
    at_bound = [m.subject.title for m in runs
                if m.result.best_offsets.total == m.result.problem.offset_lower_bound]
    within = [m.subject.title for m in runs if m.result.best_objects.total
              <= (1 + OBJECTS_WITHIN) * m.result.problem.object_lower_bound]
    print(f"Offsets at the lower bound: {len(at_bound)} of {len(runs)} ({', '.join(at_bound) or '-'}).")
    print(f"Shared objects within {OBJECTS_WITHIN:.0%} of the bound: {len(within)} of {len(runs)} "
          f"({', '.join(within) or '-'}).")
    print_optima(runs)


def print_optima(runs: list[Measured]) -> None:
    """Where the best plan is proven optimal, the gap left to the positional-maxima bound is the
    bound's, not the planners': no plan closes it."""
    notes = [f"{m.subject.title} {mib(m.result.best_objects.total)} "
             f"({percent_over(m.result.best_objects.total, m.result.problem.object_lower_bound)})"
             for m in runs if m.result.objects_optimal]
    print(f"Shared-object plans no plan beats (at the bound, or proven by the integer program): "
          f"{', '.join(notes) or '-'}.")


def print_minimalloc() -> None:
    paths = sorted(MINIMALLOC.glob("*.csv")) if MINIMALLOC.is_dir() else []
    if not paths:
        print("\n(MiniMalloc instances absent: ../shared/benchmarks/minimalloc)")
        return
    rows = []
    for path in paths:
        records = read_records_csv(path)
        run = measure(Subject(path.stem, Problem(records=tuple(records), alignment=1)),
                      objects=False)
        best = run.result.best_offsets
        gbs = _outcome(run.result.offsets, "greedy_by_size")
        rows.append([path.name, str(len(records)),
                     f"{run.result.problem.offset_lower_bound / MIB:.4f}",
                     f"{gbs.total / MIB:.4f}" if gbs else "-", f"{best.total / MIB:.4f}",
                     best.strategy, millis(run.seconds)])
    header = ["instance", "buffers", "max load / 2^20", "greedy by size / 2^20",
              "best / 2^20", "best strategy", "time (ms)"]
    print(f"\n### MiniMalloc instances (peak / 2^20; 1.0000 fits the known capacity)\n\n"
          f"{render(header, rows)}\n")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench", description=__doc__.split("\n")[0])
    parser.add_argument("networks", nargs="*", help=f"default: all of {', '.join(NETWORKS)}")
    parser.add_argument("--no-shared", action="store_true", help="skip ../shared/models")
    parser.add_argument("--no-minimalloc", action="store_true", help="skip the MiniMalloc instances")
    parser.add_argument("--graph-io", action="store_true",
                        help="also plan graph inputs and outputs (the paper leaves them out)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.networks if n not in NETWORKS]
    if unknown:
        parser.error(f"unknown network(s) {', '.join(unknown)}")
    start = time.perf_counter()
    print("Setting: 'paper' semantics (exact sizes, no alignment, no in-place), "
          + ("graph inputs and outputs planned" if args.graph_io else
             "intermediate tensors only (graph inputs and outputs are the application's)") + ".")
    networks = [measure(s) for s in network_subjects(args.networks or list(NETWORKS), args.graph_io)]
    print_tables("The paper's six networks", networks)
    print_floors(networks)
    if not args.no_shared:
        print_tables("Shared real models (../shared/models)", [measure(s) for s in
                                                               shared_subjects(args.graph_io)])
    if not args.no_minimalloc:
        print_minimalloc()
    print(f"\n(total {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
