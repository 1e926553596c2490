"""The TFLite GPU delegate's own memory_management code, built by .ci/build_gpu_delegate.sh, as a
measuring instrument: locate the build, run a strategy on usage records, read its answer.

The build lives outside the clone, under ${TFLPACK_CACHE:-~/.cache/tflpack}/gpu_delegate-<hash>,
the hash taken over the oracle's sources and the recipe exactly as the script takes it, so a
changed source or recipe is never mistaken for the build of another.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from packager.plan.records import UsageRecord

REPO = Path(__file__).resolve().parent.parent
ORACLE = REPO.parent / "shared" / "oracles" / "gpu_delegate"
RECIPE = REPO / ".ci" / "build_gpu_delegate.sh"


def build_hash() -> str:
    digest = hashlib.sha256()
    files = sorted("./" + p.relative_to(ORACLE).as_posix() for p in ORACLE.rglob("*")
                   if p.is_file() and not p.relative_to(ORACLE).as_posix().startswith("build/"))
    for name in files:
        digest.update(name.encode() + b"\0" + (ORACLE / name).read_bytes() + b"\0")
    digest.update(RECIPE.read_bytes())
    return digest.hexdigest()[:16]


def locate() -> tuple[Path | None, str]:
    """(the gpu_assign executable, "") or (None, why it is not there)."""
    if not ORACLE.is_dir():
        return None, f"the GPU delegate's sources ({ORACLE}) are absent"
    cache = Path(os.environ.get("TFLPACK_CACHE", Path.home() / ".cache" / "tflpack"))
    exe = cache / f"gpu_delegate-{build_hash()}" / "gpu_assign"
    if not exe.is_file():
        return None, f"the GPU delegate is not built ({exe}): run bash .ci/build_gpu_delegate.sh"
    return exe, ""


@dataclass(frozen=True)
class Answer:
    """What gpu_assign printed: objects (sizes as ints, or extents as tuples), the object of each
    record, and for --offsets the arena and each record's offset."""

    object_sizes: tuple = ()
    object_ids: tuple[int, ...] = ()
    total: int = 0
    arena: int = 0
    offsets: tuple[int, ...] = ()
    cpu_ns: int = 0


def run(exe: Path, records: Sequence[UsageRecord], strategy: str,
        extents: Sequence[tuple[int, ...]] | None = None, offsets: bool = False,
        align: int = 1) -> Answer:
    """Run one strategy on the records in the order given. With `extents` (2 or 3 numbers each) the
    records are 2D or 3D textures."""
    dims = len(extents[0]) if extents else 1
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        if dims == 1:
            f.write("id,lower,upper,size\n")
            f.writelines(f"{k},{r.first_op},{r.last_op + 1},{r.size}\n" for k, r in enumerate(records))
        else:
            f.write("id,lower,upper," + ",".join("xyz"[:dims]) + "\n")
            f.writelines(f"{k},{r.first_op},{r.last_op + 1}," + ",".join(map(str, e)) + "\n"
                         for k, (r, e) in enumerate(zip(records, extents)))
        path = f.name
    try:
        args = [str(exe)] + ([f"--{dims}d"] if dims > 1 else []) + (["--offsets", "--align", str(align)]
                                                                   if offsets else []) + [path, strategy]
        done = subprocess.run(args, capture_output=True, text=True, check=True)
    finally:
        os.unlink(path)
    lines = dict(line.partition(" ")[::2] for line in done.stdout.splitlines())
    if lines.get("status") != "OK":
        raise RuntimeError(f"gpu_assign {strategy}: {lines.get('status')}")

    def ints(key: str) -> tuple[int, ...]:
        return tuple(int(v) for v in lines.get(key, "").split())

    sizes = tuple(tuple(int(v) for v in s.split("x")) if dims > 1 else int(s)
                  for s in lines.get("object_sizes", "").split())
    return Answer(sizes, ints("object_ids"), int(lines.get("total", 0)), int(lines.get("arena", 0)),
                  ints("offsets"), int(lines["cpu_ns"]))
