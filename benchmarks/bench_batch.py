"""`tflpack batch` on 1 and more processes: wall-clock and CPU seconds (the command and its
worker processes, user + system) over a folder of models, each run a child process of the CLI.

    python -m benchmarks.bench_batch ../shared/models [--jobs 1,2] [--repeat 1]

Wall time is the figure a batch is for (the cores work side by side); CPU time shows what the
pool costs on top (each worker imports the packager once). The rows are checked identical across
the runs. The machine may be shared: --repeat N keeps each setting's least wall time of N runs.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.text_table import render

REPO = Path(__file__).resolve().parent.parent


def run(folder: Path, jobs: int, out: Path) -> tuple[float, float, bytes]:
    """(wall s, CPU s of the command and its children, the rows) of one batch run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, str(REPO / "cli.py"), "batch", str(folder), "-o", str(out), "--jobs", str(jobs),
                    "-q"], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.read_bytes()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--jobs", default="1,2", help="comma-separated process counts")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    models = sorted(args.folder.rglob("*.tflite"))
    rows, first = [], None
    with tempfile.TemporaryDirectory() as tmp:
        for jobs in (int(j) for j in args.jobs.split(",")):
            best = min((run(args.folder, jobs, Path(tmp) / f"rows-{jobs}.jsonl") for _ in range(args.repeat)),
                       key=lambda r: r[0])
            wall, cpu, text = best
            first = text if first is None else first
            rows.append([str(jobs), f"{wall:.1f}", f"{cpu:.1f}", f"{cpu / len(models):.2f}",
                         "yes" if text == first else "NO"])
    print(f"{len(models)} models under {args.folder}")
    print(render(["jobs", "wall s", "CPU s", "CPU s per model", "rows identical"], rows))


if __name__ == "__main__":
    main()
