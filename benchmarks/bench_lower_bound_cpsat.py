"""Can a constraint solver raise the lower bound on MiniMalloc's D and J above the largest breadth?
OR-Tools CP-SAT (the optional extra: `pip install -e '.[cpsat]'`) on the
decision "every record fits under capacity C" at C = the breadth, on the section relaxations
(`bench_lower_bound.section_relaxation`: only the sections within S granules of the breadth) and
on the whole instance. INFEASIBLE on any of them would prove the breadth + 1 granule a bound.

The model, in granules: one offset per record in [0, C - size]; a NoOverlap2D of the records'
fixed time intervals against their offset intervals; redundantly, a 1D NoOverlap per maximal
section (a record starts and another ends there: its alive records form a clique), which is where
edge finding works on the tight sections; the largest record in the lower half (the plan mirrored
is a plan). One worker, a fixed seed, and a budget in conflicts: CP-SAT's deterministic time is not
a bound on its work here (a 10-unit limit ran past 190 s of CPU), conflicts are.

    python -m benchmarks.bench_lower_bound_cpsat [--conflicts 3000] [--slacks 20,40,58,60] [--whole]
                                                 [CSV ...]

Without CSV files it reads D and J from ../shared/benchmarks/minimalloc (those there).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from benchmarks.bench_lower_bound import MINIMALLOC_CSVS, section_relaxation
from benchmarks.text_table import render
from packager.plan.csv_records import read_records_csv
from packager.plan.offsets import exact_search
from packager.plan.records import offset_lower_bound


def fits_model(inst: exact_search._Instance, capacity: int):
    """The CP-SAT model of "the instance fits under `capacity` granules"."""
    from ortools.sat.python import cp_model

    g = inst.granule
    sizes = (inst.size // g).tolist()
    m = cp_model.CpModel()
    offsets = [m.NewIntVar(0, capacity - s, f"o{k}") for k, s in enumerate(sizes)]
    times = [m.NewFixedSizeIntervalVar(int(a), int(b - a + 1), f"t{k}")
             for k, (a, b) in enumerate(zip(inst.first, inst.last))]
    spaces = [m.NewFixedSizeIntervalVar(o, s, f"s{k}") for k, (o, s) in enumerate(zip(offsets, sizes))]
    m.AddNoOverlap2D(times, spaces)
    starts, ends = set(inst.first.tolist()), set(inst.last.tolist())
    for t in sorted(starts & ends):  # the maximal sections: cliques of the conflict graph
        alive = inst.alive_idx[inst.alive_ptr[t]:inst.alive_ptr[t + 1]].tolist()
        m.AddNoOverlap([spaces[k] for k in alive])
    if sizes:
        k = int(np.argmax(inst.size))
        m.Add(2 * offsets[k] <= capacity - sizes[k])
    return m


def decide(records, capacity_bytes: int, conflicts: int) -> tuple[str, int, int, float]:
    from ortools.sat.python import cp_model

    inst = exact_search._Instance(records, 1)
    start = time.process_time()
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 1
    solver.parameters.max_number_of_conflicts = conflicts
    status = solver.Solve(fits_model(inst, capacity_bytes // inst.granule))
    answer = {cp_model.FEASIBLE: "packs", cp_model.OPTIMAL: "packs",
              cp_model.INFEASIBLE: "infeasible: bound + 1 granule"}.get(status, "open")
    return answer, solver.num_conflicts, solver.num_branches, time.process_time() - start


def rows_for(path: Path, slacks: list[int], whole: bool, conflicts: int) -> list[list[str]]:
    records = read_records_csv(path)
    inst = exact_search._Instance(records, 1)
    bound = offset_lower_bound(records)
    cases = [(f"{s}", np.flatnonzero(inst.total0 >= bound - s * inst.granule)) for s in slacks]
    if whole:
        cases.append(("whole", np.arange(inst.sections)))
    rows = []
    for label, keep in cases:
        relaxed = section_relaxation(inst, records, keep)
        answer, used, branches, cpu = decide(relaxed, bound, conflicts)
        rows.append([path.stem.split(".")[0], label, f"{len(keep)} of {inst.sections}",
                     f"{len(relaxed)} of {len(records)}", f"{bound // 1024} KiB", answer, f"{used:,}",
                     f"{branches:,}", f"{cpu:.1f}"])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="*", type=Path)
    parser.add_argument("--conflicts", type=int, default=3000, help="CP-SAT conflicts per decision")
    parser.add_argument("--slacks", default="20,40,58,60", help="section relaxations: loads within these granules")
    parser.add_argument("--whole", action="store_true", help="the whole instance at the breadth too")
    args = parser.parse_args(argv)
    try:
        import ortools  # noqa: F401
    except ImportError:
        print("needs OR-Tools: pip install -e '.[cpsat]'", file=sys.stderr)
        return 2
    paths = args.csv or [p for p in (MINIMALLOC_CSVS / f"{x}.1048576.csv" for x in "DJ") if p.exists()]
    slacks = [int(x) for x in args.slacks.split(",") if x]
    rows = [row for p in paths for row in rows_for(p, slacks, args.whole, args.conflicts)]
    print(render(["instance", "slack", "sections kept", "records", "capacity", "at the bound", "conflicts",
                  "branches", "CPU s"], rows))
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
