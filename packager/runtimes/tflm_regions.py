"""TFLite Micro over two buffers: the program tests/oracle/tflm_regions.cc linked against TFLite Micro's
x86-64 library built from its sources (`.ci/build_tflm_regions.sh`), the `x86_64-linux` target's build.
It sets the model up with `MicroAllocator::Create(persistent, P, non_persistent, NP)` and runs it once,
so `package --target x86_64-linux --regions ...` can show each buffer's figure the smallest (it works
with both as declared, not with either 16 B less while the other is ample).

Where the product finds it: `$TFLPACK_TFLM_REGIONS/tflm_regions` when that variable is set, else
`${TFLPACK_CACHE:-~/.cache/tflpack}/tflm-regions/tflm_regions` (the link the build script points at
its latest build). No build: None, and the figures stay as the rule gives them.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ENV = "TFLPACK_TFLM_REGIONS"
PROGRAM = "tflm_regions"
FITS = 0  # the program's exit status when the model set up and ran (4: it did not set up; 5: Invoke failed)
AMPLE = 8 << 20  # bytes: what "the other buffer ample" gets (the program's buffers are this large)
BUILD = "x86_64-linux"  # the target whose library the program links
TIMEOUT = 300


def program(where: Path | None = None) -> Path | None:
    if where is None:
        given = os.environ.get(ENV)
        cache = os.environ.get("TFLPACK_CACHE") or str(Path.home() / ".cache" / "tflpack")
        where = Path(given) if given else Path(cache) / "tflm-regions"
    path = where / PROGRAM
    return path if path.is_file() and os.access(path, os.X_OK) else None


def fits(exe: Path, model: Path, persistent: int, non_persistent: int) -> bool:
    """Whether the model sets up and runs once with its memory in buffers of these sizes (a crash or a
    halt counts as not)."""
    try:
        done = subprocess.run([str(exe), str(model), str(persistent), str(non_persistent)], capture_output=True,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == FITS
