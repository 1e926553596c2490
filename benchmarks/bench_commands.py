"""What each command costs a user on a large model: CPU seconds (user + system), peak memory
(maximum resident set) and the size of what it prints, each command run as its own child process
of the CLI on the synthetic models of the scale benchmark (cached in .cache/scale/).

    python -m benchmarks.bench_commands --sizes 1000,10000,100000 [--shape chain] [--repeat 3]

CPU time, not wall-clock time, is the figure: the machine may be shared (other work on it still
slows a run a little: --repeat N keeps each command's least CPU time of N runs). The growth
exponent of CPU time from the smallest to the largest size shows anything superlinear.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from benchmarks.bench_scale import cached_model, exponent
from benchmarks.synthetic import SHAPES
from benchmarks.text_table import render

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SIZES = (1_000, 10_000, 100_000)
TIMEOUT = 900.0  # wall-clock seconds before a run is stopped (a loaded machine runs slowly)

# name -> the CLI's arguments for a model file and a scratch folder
COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "plan": lambda m, d: ["plan", str(m)],
    "plan --json": lambda m, d: ["plan", str(m), "--json"],
    "inspect": lambda m, d: ["inspect", str(m)],
    "inspect --json": lambda m, d: ["inspect", str(m), "--json"],
    "inspect --records": lambda m, d: ["inspect", str(m), "--records"],
    "report": lambda m, d: ["report", str(m), "-o", str(d / "report.html"), "--no-measure", "--no-times"],
    "compare": lambda m, d: ["compare", str(m), "--no-runtimes", "--runtime", "litert"],
}


@dataclass
class Run:
    cpu: float | None = None  # seconds, user + system
    peak: int | None = None  # bytes
    printed: int | None = None  # bytes on stdout
    failed: str = ""


@dataclass
class Row:
    command: str
    runs: dict[int, Run] = field(default_factory=dict)


def run_cli(args: list[str], timeout: float = TIMEOUT) -> Run:
    """One CLI run in a child process, measured by the kernel's accounting for that child alone."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, str(REPO / "cli.py"), *args], stdout=out, stderr=err,
                                cwd=REPO)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        run = Run(cpu=usage.ru_utime + usage.ru_stime, peak=usage.ru_maxrss * 1024, printed=out.tell())
        if proc.returncode != 0:
            err.seek(0)
            last = (err.read().decode(errors="replace").strip().splitlines() or ["killed"])[-1]
            run.failed = f"exit {proc.returncode}: {last}"[:120]
        return run


def measure(commands: list[str], sizes: list[int], shape: str = "chain",
            model_of: Callable[[int], Path] | None = None, timeout: float = TIMEOUT,
            repeat: int = 1) -> list[Row]:
    model_of = model_of or (lambda n: cached_model(shape, n))
    rows = [Row(c) for c in commands]
    with tempfile.TemporaryDirectory() as scratch:
        for n in sizes:
            model = model_of(n)
            for row in rows:
                runs = [run_cli(COMMANDS[row.command](model, Path(scratch)), timeout)
                        for _ in range(max(1, repeat))]
                failed = [r for r in runs if r.failed]
                row.runs[n] = failed[0] if failed else min(runs, key=lambda r: r.cpu)
    return rows


def render_rows(rows: list[Row], sizes: list[int]) -> str:
    header = ["command", *(f"{n:,}: CPU s" for n in sizes), *(f"{n:,}: peak MB" for n in sizes),
              f"{sizes[-1]:,}: printed MB", "CPU exponent"]
    lines = []
    for row in rows:
        runs = [row.runs[n] for n in sizes]
        cpu = {n: r.cpu for n, r in zip(sizes, runs) if r.cpu is not None and not r.failed}
        k = exponent(cpu) if len(cpu) > 1 else None
        lines.append([row.command,
                      *("failed" if r.failed else f"{r.cpu:.2f}" for r in runs),
                      *("failed" if r.failed else f"{r.peak / 1e6:.0f}" for r in runs),
                      "failed" if runs[-1].failed else f"{runs[-1].printed / 1e6:.1f}",
                      "-" if k is None else f"{k:.2f}"])
    notes = [f"{row.command} at {n:,}: {r.failed}" for row in rows for n, r in row.runs.items() if r.failed]
    return "\n".join([render(header, lines), *notes])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_commands", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)),
                        help="operator counts, comma-separated")
    parser.add_argument("--shape", default="chain", choices=list(SHAPES))
    parser.add_argument("--commands", default=",".join(COMMANDS),
                        help=f"comma-separated, of: {', '.join(COMMANDS)}")
    parser.add_argument("--timeout", type=float, default=TIMEOUT,
                        help="wall-clock seconds before one run is stopped")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each command; the table keeps the one of least CPU time")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    commands = [c.strip() for c in args.commands.split(",")]
    unknown = [c for c in commands if c not in COMMANDS]
    if unknown:
        parser.error(f"unknown command {', '.join(unknown)} (choose from {', '.join(COMMANDS)})")
    print(f"{args.shape} models; CPU = user + system seconds of the child process"
          + (f" (least of {args.repeat} runs)" if args.repeat > 1 else "")
          + "; peak = its maximum resident set; printed = what it writes to stdout")
    print(render_rows(measure(commands, sizes, args.shape, timeout=args.timeout, repeat=args.repeat),
                      sizes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
