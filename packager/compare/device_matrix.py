"""The coverage matrix on a device target's own TFLite Micro: every model of fixtures/op_matrix.py
set up on the target's build (the fit program .ci/build_tflm_targets.sh links, run under
qemu-arm) in the declared whole arena and in 16 B less.

A row's verdict (the words of packager/compare/matrix.py):
- exact: the prediction calls itself exact, and the model sets up in the declared arena and not in
  16 B less;
- named: the prediction is not exact and says so itself (the kernel or rule it lacks, and which side
  of the truth the figure lies on), so nothing is claimed; the runs are reported beside it;
- unnamed: the prediction calls itself exact and the build disagrees (it needs more, or less): a
  missing rule nobody has named;
- refused: the build does not set the model up even in the fit program's whole 8 MiB (the kernel
  does not accept this mode); not registered: the build has no kernel for one of its operators.

"Sets up" is AllocateTensors working: an Invoke on zeros that fails afterwards (exit 5) is noted,
since no kernel takes arena memory in Invoke. A set-up-only build (cortex-m55+cmsis-nn) runs no Invoke
(packager/runtimes/tflm_targets.py, SET_UP_ONLY).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from packager.compare.matrix import EXACT, FAILED, NAMED, REFUSED, UNNAMED, Row
from packager.kernels import tflm_coverage
from packager.kernels.tflm_arena import Target
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.reader import read_model
from packager.runtimes.tflm_targets import ARENA_MAX, FITS, INVOKE_FAILED, status

NOT_REGISTERED = "not registered"
TIMEOUT = 60.0  # seconds per run: these models set up in well under one; a failed check halts


def _sets_up(code: int | None) -> bool:
    return code in (FITS, INVOKE_FAILED)


def row_of(path: Path, target: Target, program: Path) -> Row:
    label = target.name
    model = read_model(path)
    missing = tflm_coverage.unregistered(model, target.oracle)
    if missing:
        return Row(path.stem, label, NOT_REGISTERED, why=f"the build registers no {', '.join(missing)}")
    try:
        whole = predict_whole_arena(model, target)
    except Exception as e:  # noqa: BLE001 - a model the prediction cannot read is a failed row, named
        return Row(path.stem, label, FAILED, why=f"no prediction: {e}")
    n = whole.arena
    at = status(program, path, n, TIMEOUT)
    below = status(program, path, n - 16, TIMEOUT) if _sets_up(at) else None
    if not _sets_up(at) and not _sets_up(status(program, path, ARENA_MAX, TIMEOUT)):
        return Row(path.stem, label, REFUSED, predicted=n,
                   why="it does not set up even in 8 MiB" if at is not None else "a TFLite Micro check halted")
    seen = f"declared {n:,} B: sets up in it {_sets_up(at)}, in 16 B less {_sets_up(below)}"
    invoke = "one Invoke on zeros failed" if at == INVOKE_FAILED else ""
    if not whole.exact:
        return Row(path.stem, label, NAMED, predicted=n, after_invoke=invoke,
                   why=f"{whole.why_inexact} ({seen})")
    if _sets_up(at) and not _sets_up(below):
        return Row(path.stem, label, EXACT, n, n, after_invoke=invoke)
    return Row(path.stem, label, UNNAMED, predicted=n, after_invoke=invoke, why=seen)


def measure_device_matrix(paths: list[Path], target: Target, program: Path, workers: int = 2) -> list[Row]:
    """One row per model, in the order given (runs in `workers` threads, each a qemu-arm process)."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda p: row_of(p, target, program), paths))
