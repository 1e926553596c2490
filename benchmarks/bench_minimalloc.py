"""The user's command beside MiniMalloc's, on MiniMalloc's instances and on perfect packings.

Each instance is planned by the whole command a user runs, in a child process: `tflpack plan
--records X.csv --offsets-only` (or `--strategy best`: `--command best`), measured by the kernel's
accounting for that child (CPU seconds user + system, start-up included; peak resident memory).
With `--minimalloc BINARY` (MiniMalloc's C++ command-line tool, built from its repository), the
same instance is given to it minimising capacity (`--capacity=<the file's number or 2^20>
--minimize_capacity`), measured the same way, and its plan checked by this project's validator.

    python -m benchmarks.bench_minimalloc [--minimalloc PATH] [--timeout S] [--command offsets-only|best]
        [--sizes 100,250,500,1000] [--seeds 1,2,3] [--no-perfect] [CSV or folder ...]

Without CSV files it reads ../shared/benchmarks/minimalloc/*.csv. Perfect packings come from
`benchmarks.perfect_packing` (cut from a 2^20 x T strip: the optimum is the bound, 2^20), written
to a scratch folder. "open" in a row: no plan within the timeout (wall-clock seconds, a safety net:
a run stopped by it has no CPU or memory figure of its own). --timeout applies to ours,
--minimalloc-timeout to MiniMalloc's.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from benchmarks import perfect_packing
from benchmarks.text_table import render
from packager.plan.csv_records import read_records_csv
from packager.plan.records import OffsetPlan, arena_of, offset_lower_bound
from packager.plan.validate import check_offset_plan

REPO = Path(__file__).resolve().parent.parent
MINIMALLOC_CSVS = REPO.parent / "shared" / "benchmarks" / "minimalloc"
COMMANDS = {"offsets-only": ["--offsets-only"], "best": ["--strategy", "best"]}


@dataclass
class Run:
    peak: int | None = None  # the plan's peak in bytes (None: no plan)
    proven: bool = False  # ours: said optimal
    cpu: float | None = None  # seconds, user + system, of the whole process
    rss: int | None = None  # bytes, peak resident set
    note: str = ""


# The kernel counts a child's peak memory from before its exec too, when it is still a copy of
# this process (about 32 MB with numpy): GNU time, itself small, reports the command's own.
GNU_TIME = Path("/usr/bin/time")


def child(argv: list[str], timeout: float, stdout) -> tuple[int, float, int]:
    """Run argv, its output to `stdout`: (exit code, CPU seconds, peak RSS bytes); killed after
    `timeout` wall-clock seconds (exit code then negative)."""
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as peak:
        timed = [str(GNU_TIME), "-f", "%M", "-o", peak.name, *argv] if GNU_TIME.exists() else argv
        proc = subprocess.Popen(timed, stdout=stdout, stderr=err, start_new_session=True)
        # the whole group: GNU time and the command under it
        timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        code = os.waitstatus_to_exitcode(status)
        rss = usage.ru_maxrss * 1024
        kib = peak.read().strip().splitlines()
        if GNU_TIME.exists() and kib and kib[-1].isdigit():
            rss = int(kib[-1]) * 1024
        return code, usage.ru_utime + usage.ru_stime, rss


def ours(path: Path, command: str, timeout: float) -> Run:
    argv = [sys.executable, str(REPO / "cli.py"), "plan", "--records", str(path), *COMMANDS[command], "--json"]
    with tempfile.TemporaryFile() as out:
        code, cpu, rss = child(argv, timeout, out)
        if code != 0:
            return Run(cpu=None if code < 0 else cpu, rss=rss, note="open" if code < 0 else f"exit {code}")
        out.seek(0)
        arena = json.loads(out.read())["arenas"][0]
    best = next(s for s in arena["strategies"] if s["kind"] == "offsets" and s["name"] == arena["best_offsets"])
    # the command validated its plan; check it once more here, as MiniMalloc's is
    records = read_records_csv(path)
    offsets = [0] * len(records)
    for t in best["tensors"]:
        offsets[t["index"]] = t["offset"]
    check_offset_plan(records, OffsetPlan("ours", tuple(offsets), arena_of(records, offsets), 1))
    return Run(best["total"], bool(arena["best_offsets_optimal"]), cpu, rss)


def minimalloc(binary: Path, path: Path, capacity: int, timeout: float) -> Run:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "solution.csv"
        argv = [str(binary), f"--input={path}", f"--output={out}", f"--capacity={capacity}",
                "--minimize_capacity"]
        code, cpu, rss = child(argv, timeout, subprocess.DEVNULL)
        if code != 0 or not out.exists():
            return Run(cpu=None if code < 0 else cpu, rss=rss, note="open" if code < 0 else "none")
        with out.open(newline="") as f:
            rows = list(csv.DictReader(f))
    records = read_records_csv(path)
    by_id = {int(r["id"]): int(r["offset"]) for r in rows}
    ids = _ids(path)
    offsets = [by_id[i] for i in ids]
    peak = arena_of(records, offsets)
    check_offset_plan(records, OffsetPlan("minimalloc", tuple(offsets), peak, 1))
    return Run(peak, False, cpu, rss)


def _ids(path: Path) -> list[int]:
    """The CSV's ids in file order (the records' order)."""
    with path.open(newline="") as f:
        return [int(r["id"]) for r in csv.DictReader(f)]


def capacity_of(path: Path) -> int:
    """MiniMalloc's instances name a feasible capacity in the file name (A.1048576.csv)."""
    m = re.search(r"\.(\d+)\.csv$", path.name)
    return int(m.group(1)) if m else perfect_packing.WIDTH


def subjects(paths: list[Path], sizes: list[int], seeds: list[int], scratch: Path) -> list[tuple[str, Path]]:
    out = []
    for p in paths:
        files = sorted(p.glob("*.csv")) if p.is_dir() else [p]
        out += [(f.name.split(".")[0], f) for f in files]
    for n in sizes:
        for seed in seeds:
            out.append((f"perfect {n}, seed {seed}",
                        perfect_packing.write(scratch / f"perfect-{n}-{seed}.csv", n, seed)))
    return out


def kib(value: int | None) -> str:
    return "-" if value is None else f"{value / 1024:,.0f}"


def seconds(run: Run) -> str:
    return run.note if run.cpu is None or run.note else f"{run.cpu:.2f}"


def mb(run: Run) -> str:
    return "-" if run.rss is None or run.note == "open" else f"{run.rss / 1e6:.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="*", type=Path)
    parser.add_argument("--minimalloc", type=Path, help="MiniMalloc's command-line binary")
    parser.add_argument("--timeout", type=float, default=300.0, help="wall-clock seconds per run of ours")
    parser.add_argument("--minimalloc-timeout", type=float, default=60.0,
                        help="wall-clock seconds per run of MiniMalloc")
    parser.add_argument("--command", choices=sorted(COMMANDS), default="offsets-only")
    parser.add_argument("--sizes", default="100,250,500,1000")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--no-perfect", action="store_true")
    args = parser.parse_args(argv)
    paths = args.csv or ([MINIMALLOC_CSVS] if MINIMALLOC_CSVS.is_dir() else [])
    sizes = [] if args.no_perfect else [int(s) for s in args.sizes.split(",") if s]
    seeds = [int(s) for s in args.seeds.split(",") if s]
    header = ["instance", "buffers", "bound KiB", "ours KiB", "proven", "ours CPU s", "ours MB"]
    if args.minimalloc:
        header += ["MiniMalloc KiB", "MiniMalloc CPU s", "MiniMalloc MB"]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for title, path in subjects(paths, sizes, seeds, Path(scratch)):
            records = read_records_csv(path)
            row = [title, f"{len(records):,}", kib(offset_lower_bound(records))]
            run = ours(path, args.command, args.timeout)
            row += [kib(run.peak), "yes" if run.proven else "no" if run.peak else "-", seconds(run), mb(run)]
            if args.minimalloc:
                theirs = minimalloc(args.minimalloc, path, capacity_of(path), args.minimalloc_timeout)
                row += [kib(theirs.peak), seconds(theirs), mb(theirs)]
            rows.append(row)
            print(" | ".join(row), file=sys.stderr, flush=True)
    print(render(header, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
