"""`tflpack batch`: the figures `package` states, one row per model of a folder, over a process pool.

Planning a model is CPU work in Python (about 0.7 CPU-s for a typical TFLite Micro model), so one
machine's cores, a process each, are the engine: no threads (the planners hold the interpreter's
lock) and no cluster (a model is far too small a job to ship). The rows come back in the models'
order whatever the number of processes, and a model that cannot be planned gets a row saying why
instead of stopping the others.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Iterable, Iterator

from packager import api
from packager.emit.csv_rows import csv_rows_text
from packager.errors import PackagerError

# The row's columns, in the CSV's order.
FIELDS = ("model", "status", "error", "semantics", "target", "tflm_arena_bytes", "standing", "head_bytes",
          "tail_bytes", "setup_bytes", "plan_bytes", "lower_bound", "strategy")
OK, FAILED = "ok", "error"
# How the pool's processes start: a fork where the system has it (no second import of the packager).
START_METHOD = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


def models_in(folder: Path) -> list[Path]:
    """Every .tflite file under `folder`, at any depth, in the order of their relative paths."""
    if not folder.is_dir():
        raise PackagerError(f"{folder}: not a folder")
    return sorted((p for p in folder.rglob("*.tflite") if p.is_file()), key=lambda p: p.relative_to(folder).as_posix())


def row(path: Path, name: str, semantics: str = "tflm", target: str = "host", strategy: str = "best") -> dict:
    """One model's row: its figures, or status "error" and the one-line message."""
    out = dict.fromkeys(FIELDS)
    out.update(model=name, semantics=semantics, target=target)
    try:
        f = api.plan(path, semantics=semantics, strategy=strategy, target=target)
    except PackagerError as e:
        return {**out, "status": FAILED, "error": str(e)}
    except Exception as e:  # a bug on one model must not lose the other rows; the row names it
        return {**out, "status": FAILED, "error": f"internal error: {type(e).__name__}: {e}"}
    out.update(status=OK, error="", plan_bytes=f.arena_bytes, lower_bound=f.lower_bound,
               strategy="+".join(a.strategy for a in f.arenas))
    if f.tflm is not None:
        out.update(tflm_arena_bytes=f.tflm.arena_bytes, standing=f.tflm.standing, head_bytes=f.tflm.head_bytes,
                   tail_bytes=f.tflm.tail_bytes, setup_bytes=f.tflm.setup_bytes)
    return out


def _row_of(job: tuple) -> dict:
    return row(*job)


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def rows(folder: Path, jobs: int, semantics: str = "tflm", target: str = "host",
         strategy: str = "best") -> Iterator[dict]:
    """The rows of every model under `folder`, in order, made by `jobs` processes (1: this one)."""
    paths = models_in(folder)
    work = [(p, p.relative_to(folder).as_posix(), semantics, target, strategy) for p in paths]
    if jobs <= 1 or len(work) <= 1:
        yield from map(_row_of, work)
        return
    # Child processes are forks of this one (Linux): the packager is imported once, not per worker; this
    # process has started no threads by then (OpenBLAS is held to one, the planners have not run).
    with ProcessPoolExecutor(max_workers=min(jobs, len(work)), mp_context=multiprocessing.get_context(START_METHOD)) as pool:
        yield from pool.map(_row_of, work, chunksize=1)  # results in the order of `work`


def jsonl_text(table: Iterable[dict]) -> str:
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in table)


def csv_text(table: Iterable[dict]) -> str:
    return csv_rows_text(table, FIELDS)


def rows_text(table: list[dict], output: Path) -> str:
    """The file's text, in the format its name asks for (.jsonl or .csv)."""
    if output.suffix == ".jsonl":
        return jsonl_text(table)
    if output.suffix == ".csv":
        return csv_text(table)
    raise PackagerError(f"{output}: the rows go to a .jsonl or a .csv file")
