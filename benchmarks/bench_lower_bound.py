"""Is there a lower bound above the largest breadth on MiniMalloc's D and J? Measured at the
bound (the breadth, rounded to the granule), by the exact search's own probes:

- windows: the records alive in a window of sections around the widest section, a subset of the
  records, so any capacity it cannot pack is a lower bound for the whole; the window grows until
  its probe stays open within --nodes (a window that packs at the bound proves nothing above it);
- tiling (--tiling-nodes N): the whole instance's tiling probe (complete) at the bound, each of its
  orders alone for N nodes: searched out, the bound would be one granule higher;
- sections (--slacks S1,S2,...): only the sections whose load is within S granules of the breadth,
  each record alive in the kept sections it spans (`section_relaxation`). Any packing of the whole
  packs these (fewer records, fewer conflicts), so a capacity they cannot pack bounds the whole;
  unlike a window, the kept sections may lie far apart (every load peak of the instance at once);
- triples (--triples S): every three of the sections within S granules of the breadth where a
  record starts and another ends (no other section holds more), each relaxation probed alone:
  contiguity across three sections is where a subset-sum argument could first bite.

Not a relaxation, but the same question asked where the tiling probe is strongest (--filled-nodes
N, at the bound and at each of --filled-at KiB): the instance plus fillers, one granule each, over
one span between record ends each, as many as the capacity leaves free there (`with_fillers`).
Every span is then full at the capacity, and it packs exactly where the instance does (a packing's
free room in a span is whole granules, each one filler), so the tiling probe's rounds run on it
as on a perfect packing: backjumping, random and learning restarts, for at most N nodes per
record.

    python -m benchmarks.bench_lower_bound [--nodes 300000] [--tiling-nodes 0] [--slacks 20,40,60]
                                           [--triples 30] [--filled-nodes 0 --filled-at 995] [CSV ...]

Without CSV files it reads D and J from ../shared/benchmarks/minimalloc (those there; J is in
MiniMalloc's repository, benchmarks/challenging/). Work is counted in nodes.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.text_table import render
from packager.plan.csv_records import read_records_csv
from packager.plan.offsets import exact_search
from packager.plan.offsets._tiling import ORDERS, TilingProbe, TilingRounds, full_at
from packager.plan.records import UsageRecord, breadth_by_step, offset_lower_bound

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


def section_relaxation(inst: exact_search._Instance, records, sections) -> list[UsageRecord]:
    """The records alive in the kept `sections` (ascending), each living over the kept sections it
    spans (consecutive in the new time): a relaxation, its conflicts a subset of the original's."""
    kept = np.asarray(sorted(sections), np.int64)
    a = np.searchsorted(kept, inst.first)  # first kept section at or after the record's first
    b = np.searchsorted(kept, inst.last, side="right") - 1  # last kept section at or before its last
    return [UsageRecord(records[i].tensor, int(a[k]), int(b[k]), records[i].size)
            for k, i in enumerate(inst.ids) if a[k] <= b[k]]


def _probe(records, bound: int, nodes: int) -> tuple[str, int]:
    found, complete, used, _ = exact_search.fits(exact_search._Instance(records, 1), bound, nodes, None)
    return ("packs" if found else "searched out: bound + 1 granule" if complete else "open"), used


def sections(path: Path, slacks: list[int], nodes: int) -> list[list[str]]:
    records = read_records_csv(path)
    inst = exact_search._Instance(records, 1)
    bound, g = offset_lower_bound(records), inst.granule
    rows = []
    for slack in slacks:
        keep = np.flatnonzero(inst.total0 >= bound - slack * g)
        start = time.process_time()
        relaxed = section_relaxation(inst, records, keep)
        answer, used = _probe(relaxed, bound, nodes)
        rows.append([path.stem.split(".")[0], f"{slack}", f"{len(keep)} of {inst.sections}",
                     f"{len(relaxed)} of {len(records)}", f"{bound // 1024} KiB", answer, f"{used:,}",
                     f"{time.process_time() - start:.1f}"])
    return rows


def triples(path: Path, slack: int, nodes: int) -> list[list[str]]:
    records = read_records_csv(path)
    inst = exact_search._Instance(records, 1)
    bound, g = offset_lower_bound(records), inst.granule
    maximal = sorted(set(inst.first.tolist()) & set(inst.last.tolist()))
    peaks = [s for s in maximal if inst.total0[s] >= bound - slack * g]
    start = time.process_time()
    counts = {"packs": 0, "searched out: bound + 1 granule": 0, "open": 0}
    spent = 0
    for three in itertools.combinations(peaks, 3):
        answer, used = _probe(section_relaxation(inst, records, three), bound, nodes)
        counts[answer] += 1
        spent += used
    return [[path.stem.split(".")[0], f"{slack}", f"{len(peaks)} of {inst.sections}", f"{bound // 1024} KiB",
             *(f"{n:,}" for n in counts.values()), f"{spent:,}", f"{time.process_time() - start:.1f}"]]


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


def with_fillers(records: list[UsageRecord], capacity: int, granule: int) -> list[UsageRecord]:
    """The records and, over each span between consecutive record ends (steps [a, b)), as many
    fillers of one granule as `capacity` leaves free there."""
    alive = breadth_by_step(records, 0)
    bounds = sorted({r.first_op for r in records} | {r.last_op + 1 for r in records})
    out = list(records)
    tensor = max((r.tensor for r in records), default=-1) + 1
    for a, b in zip(bounds, bounds[1:]):
        if capacity < alive[a] or (capacity - alive[a]) % granule:
            raise ValueError(f"steps {a}-{b - 1}: {alive[a]} B alive under a capacity of {capacity} B")
        for _ in range((capacity - alive[a]) // granule):
            out.append(UsageRecord(tensor, a, b - 1, granule))
            tensor += 1
    return out


def filled(path: Path, capacities_kib: list[int], nodes_per_record: int) -> list[list[str]]:
    records = read_records_csv(path)
    granule = exact_search._Instance(records, 1).granule
    rows = []
    for capacity in [offset_lower_bound(records)] + [k * 1024 for k in capacities_kib]:
        padded = with_fillers(records, capacity, granule)
        inst = exact_search._Instance(padded, 1)
        assert full_at(inst, capacity)
        start = time.process_time()
        rounds = TilingRounds(inst, capacity)
        used, _, _ = rounds.run(nodes_per_record * len(padded), 10**15, exact_search.PLAIN_STEPS)
        answer = "packs" if rounds.found else "searched out" if rounds.complete else "open"
        rows.append([path.stem.split(".")[0], f"{capacity // 1024} KiB", f"{len(padded) - len(records):,}",
                     answer, f"{used:,}", f"{time.process_time() - start:.1f}"])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="*", type=Path)
    parser.add_argument("--nodes", type=int, default=300_000, help="nodes per window's probe")
    parser.add_argument("--tiling-nodes", type=int, default=0, help="nodes per order of the whole tiling probe")
    parser.add_argument("--slacks", default="", help="section relaxations: loads within these granules of the breadth")
    parser.add_argument("--triples", type=int, default=None, help="every three peak sections within this slack")
    parser.add_argument("--filled-nodes", type=int, default=0, help="nodes per record of the filled instance's rounds")
    parser.add_argument("--filled-at", default="", help="capacities in KiB besides the bound, for --filled-nodes")
    args = parser.parse_args(argv)
    paths = args.csv or [p for p in (MINIMALLOC_CSVS / f"{x}.1048576.csv" for x in "DJ") if p.exists()]
    rows = [row for p in paths for row in windows(p, args.nodes)]
    print(render(["instance", "sections", "records", "capacity", "at the bound", "nodes", "CPU s"], rows))
    if args.tiling_nodes:
        rows = [row for p in paths for row in tiling(p, args.tiling_nodes)]
        print()
        print(render(["instance", "tiling order", "capacity", "at the bound", "nodes", "CPU s"], rows))
    if args.slacks:
        slacks = [int(x) for x in args.slacks.split(",")]
        rows = [row for p in paths for row in sections(p, slacks, args.nodes)]
        print()
        print(render(["instance", "slack", "sections kept", "records", "capacity", "at the bound", "nodes",
                      "CPU s"], rows))
    if args.triples is not None:
        rows = [row for p in paths for row in triples(p, args.triples, args.nodes)]
        print()
        print(render(["instance", "slack", "peak sections", "capacity", "triples packed", "searched out",
                      "open", "nodes", "CPU s"], rows))
    if args.filled_nodes:
        at = [int(x) for x in args.filled_at.split(",") if x]
        rows = [row for p in paths for row in filled(p, at, args.filled_nodes)]
        print()
        print(render(["instance", "capacity", "fillers", "answer", "nodes", "CPU s"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
