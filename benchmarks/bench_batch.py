"""`tflpack batch` on 1 and more processes against one `tflpack package` process per model (what a
script looping over the folder runs): wall-clock and CPU seconds (the command and its worker
processes, user + system) over a folder of models, each run a child process of the CLI.

    python -m benchmarks.bench_batch ../shared/models [--jobs 1,2] [--repeat 1]

Wall time is the figure a batch is for (the cores work side by side); CPU time shows what the
pool costs on top (each worker imports the packager once), and what one process per model costs
(each imports the packager and warms its planning kernels again). The rows are checked identical
across the runs, the single runs' rows made from their `package --json` (nothing verified, no
report: the figures the batch states). The machine may be shared: --repeat N keeps each setting's
least wall time of N runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.text_table import render
from packager.batch import FIELDS, jsonl_text, models_in

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


def row_of_package_run(name: str, code: int, stdout: str, stderr: str) -> dict:
    """The batch row one `package MODEL --no-verify --no-report --json` run states."""
    row = {**dict.fromkeys(FIELDS), "model": name, "semantics": "tflm", "target": "host"}
    if code != 0:
        error = next(line for line in (stderr + stdout).splitlines() if line.startswith("error: "))
        return {**row, "status": "error", "error": error[len("error: "):]}
    doc = json.loads(stdout)
    whole = doc["runtime_arena"]
    return {**row, "status": "ok", "error": "", "tflm_arena_bytes": whole["arena_bytes"], "standing": whole["bound"],
            "head_bytes": whole["head_bytes"], "tail_bytes": whole["tail_bytes"], "setup_bytes": whole["setup_bytes"],
            "plan_bytes": doc["arena_bytes"], "lower_bound": doc["lower_bound"],
            "strategy": "+".join(a["strategy"] for a in doc["arenas"])}


def run_one_per_model(folder: Path, out: Path) -> tuple[float, float, bytes]:
    """(wall s, CPU s, the rows) of one `package` process per model, one after another."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    rows = []
    for path in models_in(folder):
        name = path.relative_to(folder).as_posix()
        done = subprocess.run([sys.executable, str(REPO / "cli.py"), "package", str(path), "-o", str(out / name),
                               "--no-verify", "--no-report", "--json"], cwd=REPO, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
        rows.append(row_of_package_run(name, done.returncode, done.stdout, done.stderr))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, jsonl_text(rows).encode()


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
            rows.append([f"batch --jobs {jobs}", f"{wall:.1f}", f"{cpu:.1f}", f"{cpu / len(models):.2f}",
                         "yes" if text == first else "NO"])
        wall, cpu, text = min((run_one_per_model(args.folder, Path(tmp) / f"single-{k}") for k in range(args.repeat)),
                              key=lambda r: r[0])
        rows.append(["one package process per model", f"{wall:.1f}", f"{cpu:.1f}", f"{cpu / len(models):.2f}",
                     "yes" if text == first else "NO"])
    print(f"{len(models)} models under {args.folder}")
    print(render(["run", "wall s", "CPU s", "CPU s per model", "rows identical"], rows))


if __name__ == "__main__":
    main()
