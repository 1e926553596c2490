"""Is there a lower bound above the largest breadth on MiniMalloc's D and J? Two relaxations
measured at the bound (the breadth, rounded to the granule), by the exact search's own probes:

- windows: the records alive in a window of sections around the widest section, a subset of the
  records, so any capacity it cannot pack is a lower bound for the whole; the window grows until
  its probe stays open within --nodes (a window that packs at the bound proves nothing above it);
- tiling (--tiling-nodes N): the whole instance's tiling probe (complete) at the bound, each of its
  orders alone for N nodes: searched out, the bound would be one granule higher.

    python -m benchmarks.bench_lower_bound [--nodes 300000] [--tiling-nodes 0] [CSV ...]

Without CSV files it reads D and J from ../shared/benchmarks/minimalloc (those there; J is in
MiniMalloc's repository, benchmarks/challenging/). Work is counted in nodes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.text_table import render
from packager.plan.csv_records import read_records_csv
from packager.plan.offsets import exact_search
from packager.plan.offsets._tiling import ORDERS, TilingProbe
from packager.plan.records import offset_lower_bound

MINIMALLOC_CSVS = Path(__file__).resolve().parent.parent.parent / "shared" / "benchmarks" / "minimalloc"
HALF_WIDTHS = (2, 4, 8, 16, 24, 32, 48, 64, 100, 200)


def windows(path: Path, nodes: int) -> list[list[str]]:
    records = read_records_csv(path)
    inst = exact_search._Instance(records, 1)
    bound = offset_lower_bound(records)
    peak = int(np.argmax(inst.total0))  # the first widest section
    rows = []
    for half in HALF_WIDTHS:
        lo, hi = max(0, peak - half), min(inst.sections - 1, peak + half)
        keep = [records[inst.ids[k]] for k in range(len(inst.ids)) if inst.last[k] >= lo and inst.first[k] <= hi]
        start = time.process_time()
        found, complete, used, _ = exact_search.fits(exact_search._Instance(keep, 1), bound, nodes, None)
        answer = "packs" if found else "searched out: bound + 1 granule" if complete else "open"
        rows.append([path.stem.split(".")[0], f"{lo}-{hi} of {inst.sections}", f"{len(keep)} of {len(records)}",
                     f"{bound // 1024} KiB", answer, f"{used:,}", f"{time.process_time() - start:.1f}"])
        if found is None or hi - lo + 1 >= inst.sections:
            break  # open: wider windows are harder still
    return rows


def tiling(path: Path, nodes: int) -> list[list[str]]:
    records = read_records_csv(path)
    inst = exact_search._Instance(records, 1)
    bound = offset_lower_bound(records)
    rows = []
    for order in ORDERS:
        probe = TilingProbe(inst, bound, order)
        start = time.process_time()
        probe.run(nodes, 10**15, True)
        answer = "packs" if probe.found else "searched out" if probe.complete else "open"
        rows.append([path.stem.split(".")[0], order, f"{bound // 1024} KiB", answer, f"{probe.nodes:,}",
                     f"{time.process_time() - start:.1f}"])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="*", type=Path)
    parser.add_argument("--nodes", type=int, default=300_000, help="nodes per window's probe")
    parser.add_argument("--tiling-nodes", type=int, default=0, help="nodes per order of the whole tiling probe")
    args = parser.parse_args(argv)
    paths = args.csv or [p for p in (MINIMALLOC_CSVS / f"{x}.1048576.csv" for x in "DJ") if p.exists()]
    rows = [row for p in paths for row in windows(p, args.nodes)]
    print(render(["instance", "sections", "records", "capacity", "at the bound", "nodes", "CPU s"], rows))
    if args.tiling_nodes:
        rows = [row for p in paths for row in tiling(p, args.tiling_nodes)]
        print()
        print(render(["instance", "tiling order", "capacity", "at the bound", "nodes", "CPU s"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
