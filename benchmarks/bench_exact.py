"""The exact offset search on MiniMalloc's challenging instances: one row per instance.

    python -m benchmarks.bench_exact [--nodes N] [CSV ...]

Without CSV files it reads ../shared/benchmarks/minimalloc/*.csv. Each instance is solved from
nothing (no portfolio plan to start from) with the node budget `best` uses; the columns are our
peak over 2^20 (the capacity MiniMalloc is given), whether it is proven optimal (it meets the lower
bound, or every smaller capacity was searched out), the nodes spent, and CPU seconds of this
process (they move with the machine; the peak, the proof and the nodes do not).

MiniMalloc's figures beside ours: it finds a packing under the capacity 2^20 on every instance of
the suite (the benchmark's published result); its CPU time is ours too, measured on this machine
from its C++ build: 0.6 to 6.2 s per instance.
"""

from __future__ import annotations

import argparse
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
from packager.plan.records import OffsetPlan

REPO = Path(__file__).resolve().parent.parent
MINIMALLOC = REPO.parent / "shared" / "benchmarks" / "minimalloc"
CAPACITY = 1 << 20
MINIMALLOC_FIGURE = "<= 1.000, 0.6-6.2 s"


def row(path: Path, nodes: int) -> list[str]:
    records = read_records_csv(path)
    start = time.process_time()
    result = exact_search.search(records, 1, None, node_budget=nodes)
    cpu = time.process_time() - start
    check_offset_plan(records, OffsetPlan(exact_search.NAME, result.offsets, result.arena))
    return [path.name.split(".")[0], f"{len(records)}", f"{offset_lower_bound(records) / CAPACITY:.4f}",
            f"{result.arena / CAPACITY:.4f}", "yes" if result.proven_optimal else "no",
            f"{result.nodes:,}", f"{cpu:.1f}", MINIMALLOC_FIGURE]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="*", type=Path)
    parser.add_argument("--nodes", type=int, default=EXACT_NODES, help="node budget per instance")
    args = parser.parse_args(argv)
    paths = args.csv or sorted(MINIMALLOC.glob("*.csv"))
    if not paths:
        print(f"no instances: pass CSV files or provide {MINIMALLOC}", file=sys.stderr)
        return 1
    rows = [row(p, args.nodes) for p in paths]
    print(render(["instance", "records", "bound / 2^20", "peak / 2^20", "proven", "nodes", "CPU s",
                  "MiniMalloc (peak / 2^20, CPU)"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
