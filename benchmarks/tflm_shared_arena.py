"""Models sharing one TFLite Micro arena against an arena each: the figures `package A B ...` states, and
whether TFLite Micro's own code (tests/oracle/tflm_shared.cc, `.ci/build_tflm_shared.sh`) sets them up and
runs them in exactly the figure the same rules give for that build's structure sizes (N works, N - 16 does
not; outputs as each model alone); it differs from the host (wheel) figure only by FULLY_CONNECTED's
parameters, 16 B smaller in the build from the sources.

    python -m benchmarks.tflm_shared_arena [PAIR ...]      PAIR: a.tflite,b.tflite (default: the tests' pairs)
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from benchmarks.text_table import render
from packager.kernels.tflm_arena import X86_64_LINUX
from packager.kernels.tflm_shared_arena import predict_shared_arena
from packager.package.shared_arena import package_shared
from packager.reader import read_model
from packager.runtimes import tflm_shared


def row(pair: list[Path], exe: Path | None) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        result = package_shared(pair, tmp, report=False, verify=False)
        alone = [r.plan.runtime_arena.arena_bytes for r in result.packages]
        f = result.figure
        packed = [Path(tmp) / f"{p}.tflite" for p in result.prefixes]
        heads = [r.plan.runtime_arena.head_bytes for r in result.packages]
        built = predict_shared_arena([read_model(p) for p in packed], heads, X86_64_LINUX).arena
        shown = "-"
        if exe is not None:
            at, below = tflm_shared.run(exe, packed, built), tflm_shared.run(exe, packed, built - 16)
            same = at.fits and all(tflm_shared.run(exe, [p], tflm_shared.ARENA_MAX).outputs[0] == o
                                   for p, o in zip(packed, at.outputs))
            shown = "✓" if at.fits and not below.fits and same else f"no ({at.said})"
    return [" + ".join(p.stem for p in pair), " + ".join(f"{a:,}" for a in alone), f"{sum(alone):,}",
            f"{f.arena:,} ({f.head:,} + {f.tail:,})", f"{sum(alone) - f.arena:,}", f"{built:,}", shown]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs", nargs="*", help="a.tflite,b.tflite")
    args = ap.parse_args()
    if args.pairs:
        pairs = [[Path(p) for p in text.split(",")] for text in args.pairs]
    else:
        from tests.package.test_shared_arena import PAIRS
        pairs = [list(p) for p in PAIRS if all(x.is_file() for x in p)]
    exe = tflm_shared.program()
    print(render(["models (set-up order)", "each alone (B)", "an arena each (B)",
                  "shared: declared (largest plan + tails)", "saved (B)", "sources' build: its figure (B)",
                  "runs in it, not 16 B less, outputs as alone"],
                 [row(p, exe) for p in pairs]))


if __name__ == "__main__":
    main()
