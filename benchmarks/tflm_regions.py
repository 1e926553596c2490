"""TFLite Micro over two buffers, measured: for every model tests/package/test_regions_runs.py runs,
the smallest persistent and non-persistent buffers that set the packaged model up and run it (each
found by bisection in 16-byte steps with the other buffer ample, on tests/oracle/tflm_regions.cc as
.ci/build_tflm_regions.sh builds it), beside what `package --regions` declares, and the one-buffer
arena beside their sum. "declared" is the host target's figure (the pinned wheel's structure sizes),
"rule" the same rule with the library's (tests/package/test_regions_runs.py's SOURCES: its
TfLiteFullyConnectedParams is 16 B, the wheel's 32). Prints a Markdown table (docs/tflm-arena.md,
"Two buffers").

    python -m benchmarks.tflm_regions
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from packager.package.build import package

REPO = Path(__file__).resolve().parents[1]
AMPLE = 8 << 20


def smallest(fits) -> int:
    """The smallest multiple of 16 for which fits(n) holds (fits is monotone)."""
    low, high = 0, 16
    while not fits(high):
        low, high = high, high * 2
    while high - low > 16:
        mid = (low + high) // 32 * 16
        low, high = (low, mid) if fits(mid) else (mid, high)
    return high


def main() -> int:
    sys.path.insert(0, str(REPO))
    from tests.package.test_regions_runs import MODELS, REGIONS, SOURCES, _stored_dims
    from packager.kernels.tflm_regions import predict_split
    from packager.reader import read_model
    where = subprocess.run(["bash", str(REPO / ".ci" / "build_tflm_regions.sh"), "--print-dir"],
                           capture_output=True, text=True, check=True).stdout.strip()
    exe = Path(where) / "tflm_regions"
    if not exe.is_file():
        print(f"tflm_regions is not built ({exe}): bash .ci/build_tflm_regions.sh", file=sys.stderr)
        return 2

    def fits(model: Path, *sizes: int) -> bool:
        return subprocess.run([str(exe), str(model), *map(str, sizes)], capture_output=True, timeout=120).returncode == 0

    print("| model | non-persistent: declared | rule | smallest | binds | persistent: declared | rule | smallest "
          "| both smallest | one arena smallest | one arena declared |")
    print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for path in MODELS:
        with tempfile.TemporaryDirectory() as folder:
            result = package(path, folder, report=False, dims=_stored_dims(path), regions=REGIONS)
            non, per = result.plan.regions
            packed = Path(folder) / f"{path.stem}.tflite"
            n = smallest(lambda k: fits(packed, AMPLE, k))
            p = smallest(lambda k: fits(packed, k, AMPLE))
            one = smallest(lambda k: fits(packed, k))
            arena = result.plan.runtime_arena
            rule = predict_split(read_model(packed), SOURCES, head=arena.head_bytes)
            binds = "head" if arena.head_bytes >= non.bytes else "set-up"
            print(f"| {path.stem} | {non.bytes:,} | {rule.non_persistent:,} | {n:,} | {binds} | {per.bytes:,} "
                  f"| {rule.persistent:,} | {p:,} | {n + p:,} | {one:,} | {arena.arena_bytes:,} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
