"""Models nobody here has seen, on TFLite Micro: for each `.tflite` in the folders given, the
kernels whose memory is not modelled, the predicted whole arena, the smallest arena the runtime
sets the model up and runs in (bisection in child processes), and the same for the packaged model
(its declared `<P>_TENSOR_ARENA_BYTES`: does it run in exactly that, and not 16 B less?).

    python -m benchmarks.tflm_unseen FOLDER [FOLDER ...] [--no-package]

Needs tflite-micro (pip install '.[runtimes]'). Real models come from package registries, e.g.
`pip download --no-deps pymicro-wakeword` (four streaming wake-word models inside the wheel) or
`pip download --no-deps mediapipe==0.10.14` (vision models in mediapipe/modules); unzip the
wheel and pass the folders holding the `.tflite` files. Figures are a plain MicroInterpreter's
(the probe gives the Python interpreter 232 B more for its recording allocator).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from benchmarks.text_table import render
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.runtimes.tflm import SmallestArena, smallest_arena, try_arenas
from packager.errors import PackagerError
from packager.reader import read_model

HEADER = ["model", "ops", "not modelled", "predicted", "measured (head + tail)", "exact",
          "packaged: declared", "runs in it, not 16 B less"]


def _ops(model) -> str:
    return str(sum(len(sg.operators) for sg in model.subgraphs))


def _packaged(path: Path, out: Path) -> tuple[str, str]:
    from packager.package.build import package
    try:
        result = package(path, out / path.stem, report=False)
    except PackagerError as e:
        return "-", f"package refused: {e}"
    declared = result.plan.runtime_arena.arena_bytes
    found = sorted((out / path.stem).glob("*.tflite"))
    packed = found[0] if found else None
    if packed is None:
        return f"{declared:,}", "no packaged model written"
    tries = try_arenas(packed, [declared, declared - 16])
    if not isinstance(tries, list):
        return f"{declared:,}", tries.reason
    verdict = [t.ok for t in tries]
    if verdict == [True, False]:
        return f"{declared:,}", "✓"
    if not verdict[0]:
        return f"{declared:,}", f"✗ fails: {tries[0].reason[:60]}"
    return f"{declared:,}", "✗ runs in 16 B less (over-declared)"


def row(path: Path, out: Path, with_package: bool) -> list[str]:
    try:
        model = read_model(path)
    except PackagerError as e:
        return [path.stem, "-", "-", "-", f"unreadable: {e}", "-", "-", "-"]
    predicted = predict_whole_arena(model)
    unmodelled = ", ".join(predicted.unmodelled + tuple(f"{op} (Prepare overlaps its buffers with its temporaries)"
                                                        for op in predicted.overlapping)) or "-"
    measured = smallest_arena(path, model, hint=predicted.arena)
    if not isinstance(measured, SmallestArena):
        reason = " ".join(str(measured.reason).split())[:80]
        return [path.stem, _ops(model), unmodelled, f"{predicted.arena:,}",
                f"does not run: {reason}", "-", "-", "-"]
    if measured.arena == predicted.arena:
        exact = "✓" if predicted.exact else "✓ (said inexact)"
    elif measured.arena < predicted.arena:
        exact = f"✗ {predicted.arena - measured.arena:+,} over"
    else:
        exact = f"✗ {predicted.arena - measured.arena:+,} UNDER"
    cells = [path.stem, _ops(model), unmodelled, f"{predicted.arena:,}",
             f"{measured.arena:,} ({measured.head:,} + {measured.tail:,})", exact]
    cells += list(_packaged(path, out)) if with_package else ["-", "-"]
    return cells


def main(argv: list[str]) -> None:
    with_package = "--no-package" not in argv
    folders = [Path(a) for a in argv if not a.startswith("--")]
    if not folders:
        sys.exit("usage: python -m benchmarks.tflm_unseen FOLDER [FOLDER ...] [--no-package]")
    paths = sorted(p for f in folders for p in (f.glob("*.tflite") if f.is_dir() else [f]))
    rows = []
    with tempfile.TemporaryDirectory() as out:
        for path in paths:
            rows.append(row(path, Path(out), with_package))
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    print(render(HEADER, rows))


if __name__ == "__main__":
    main(sys.argv[1:])
