"""TFLite Micro's whole arena on the shared example models: what TFLite Micro's own planner needs
(the smallest arena the original model runs in, found by bisection in child processes), our
prediction of it from the file, and the packaged model's declared arena (checked the same way).

    python -m benchmarks.tflm_whole_arena [MODELS_DIR]

Needs tflite-micro (pip install '.[runtimes]') and the models (default ../shared/models/tflm).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.runtimes.tflm import SmallestArena, smallest_arena, try_arenas
from packager.kernels.tflm_arena import ARMHF_LINUX
from packager.package.build import package
from packager.reader import read_model

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "models" / "tflm"


def row(path: Path, out: Path) -> list[str]:
    model = read_model(path)
    predicted = predict_whole_arena(model)
    measured = smallest_arena(path, model, hint=predicted.arena)
    if not isinstance(measured, SmallestArena):
        return [path.stem, "does not run", f"{predicted.arena:,}", "-", "-", "-", "-"]
    mark = " ✓" if measured.arena == predicted.arena else " ✗"
    result = package(path, out / path.stem, report=False)
    whole = result.plan.runtime_arena
    packed = try_arenas(out / path.stem / f"{path.stem}.tflite", [whole.arena_bytes, whole.arena_bytes - 16])
    works = "✓" if [t.ok for t in packed] == [True, False] else "✗"
    return [path.stem,
            f"{measured.arena:,} ({measured.head:,} + {measured.tail:,})",
            f"{predicted.arena:,}{mark}",
            f"{whole.arena_bytes:,} ({whole.head_bytes:,} + {whole.tail_bytes:,})",
            works,
            f"{whole.setup_bytes:,}",
            f"{predict_whole_arena(model, ARMHF_LINUX).arena:,}"]


def main(argv: list[str]) -> None:
    folder = Path(argv[0]) if argv else DEFAULT
    headers = ["model", "TFLite Micro's own planner: smallest arena (head + tail)", "predicted",
               "packaged: declared arena (head + tail)", "runs in it, not 16 B less",
               "set-up room", "armhf-linux (modelled)"]
    print("| " + " | ".join(headers) + " |")
    print("|" + " --- |" * len(headers))
    with tempfile.TemporaryDirectory() as out:
        for path in sorted(folder.glob("*.tflite")):
            print("| " + " | ".join(row(path, Path(out))) + " |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
