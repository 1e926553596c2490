"""TFLite Micro running several models on one shared arena: the program tests/oracle/tflm_shared.cc
linked against TFLite Micro's x86-64 library built as the pinned wheel is (`.ci/build_tflm_shared.sh`).
It sets the models up in order on one MicroAllocator over exactly N bytes, runs each once on zero
inputs and writes each model's outputs, so `package A B ...` can show the shared figure the smallest
(it works at N, not at N - 16) and each model's outputs the same as when it runs alone.

Where the product finds it: `$TFLPACK_TFLM_SHARED/tflm_shared` when that variable is set, else
`${TFLPACK_CACHE:-~/.cache/tflpack}/tflm-shared/tflm_shared` (the link the build script points at
its latest build). No build: None, and the figure stays predicted.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

ENV = "TFLPACK_TFLM_SHARED"
PROGRAM = "tflm_shared"
FITS = 0  # the program's exit status when every model set up and ran (4: one did not set up; 5: Invoke failed)
ARENA_MAX = 16 << 20  # the program's static arena
RUNTIME = "TFLite Micro (x86-64 build of the pinned sources, compression on, one MicroAllocator)"
TIMEOUT = 300


def program(where: Path | None = None) -> Path | None:
    if where is None:
        given = os.environ.get(ENV)
        cache = os.environ.get("TFLPACK_CACHE") or str(Path.home() / ".cache" / "tflpack")
        where = Path(given) if given else Path(cache) / "tflm-shared"
    path = where / PROGRAM
    return path if path.is_file() and os.access(path, os.X_OK) else None


@dataclass(frozen=True)
class Run:
    fits: bool
    outputs: tuple[tuple[bytes, ...], ...]  # per model, each output's bytes (empty when it did not fit)
    said: str  # the program's last line


def run(exe: Path, models: Sequence[Path], arena: int) -> Run:
    """Set the models up in order on one allocator over `arena` bytes and run each once."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            done = subprocess.run([str(exe), str(arena), tmp, *map(str, models)], capture_output=True,
                                  timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return Run(False, (), "timed out")
        lines = done.stdout.decode(errors="replace").strip().splitlines()
        said = lines[-1] if lines else done.stderr.decode(errors="replace").strip()[-200:]
        if done.returncode != FITS:
            return Run(False, (), said)
        outputs = []
        for i in range(len(models)):
            files = sorted(Path(tmp).glob(f"{i}_*.bin"), key=lambda p: int(p.stem.split("_")[1]))
            outputs.append(tuple(p.read_bytes() for p in files))
        return Run(True, tuple(outputs), said)
