"""Each device target's declared TFLite Micro arena against that target's own TFLite Micro (the fit
program .ci/build_tflm_targets.sh builds, run under qemu-arm): the smallest arena the model sets up
and runs in (16-byte steps, searched from the prediction), and whether the figure is proven.

    bash .ci/build_tflm_targets.sh && python -m benchmarks.tflm_targets [--ran-only] [TARGET]

Rows: the shared TFLite Micro models (../shared/models/tflm), every fixture of
fixtures/tflm_kernels.py, fixtures/runtime_cases.py and fixtures/tflm_cmsis_kernels.py, then the
catalog's models (fixtures/models); `--ran-only`: only those the build registers every operator of.
Prints a Markdown table (docs/tflm-arena.md).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from fixtures.runtime_cases import RUNTIME_CASES
from fixtures.tflm_cmsis_kernels import CMSIS_BUILDERS
from fixtures.tflm_kernels import KERNEL_BUILDERS
from packager.kernels import tflm_coverage
from packager.kernels.tflm_arena import ARMHF_LINUX, target_named
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.reader import read_model
from packager.runtimes.tflm_targets import fit_program, smallest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "models" / "tflm"


def cases(folder: Path) -> list[Path]:
    paths = sorted(SHARED.glob("*.tflite"))
    builders = {**KERNEL_BUILDERS, **{f"runtime_{f.__name__}": f for f in RUNTIME_CASES}, **CMSIS_BUILDERS}
    for name in sorted(builders):
        path = folder / f"{name}.tflite"
        path.write_bytes(builders[name]().build())
        paths.append(path)
    return paths + sorted((REPO / "fixtures" / "models").glob("*.tflite"))


def main(argv: list[str]) -> None:
    ran_only = "--ran-only" in argv
    argv = [a for a in argv if a != "--ran-only"]
    target = target_named(argv[0] if argv else "cortex-m4")
    where = subprocess.run(["bash", str(REPO / ".ci" / "build_tflm_targets.sh"), "--print-dir"],
                           capture_output=True, text=True, check=True).stdout.strip()
    program = fit_program(target.oracle, Path(where)) if where else None
    if program is None:
        sys.exit(f"error: no build of TFLite Micro for {target.oracle} (bash .ci/build_tflm_targets.sh)")
    # Beside it: the same core's reference-kernel figure for a CMSIS-NN target, else armhf-linux's.
    other = target_named(target.name.split("+")[0]) if target.cmsis_nn else ARMHF_LINUX
    what = "reference kernels" if target.cmsis_nn else "modelled"
    print(f"| model | {target.name}: declared | measured on its TFLite Micro | exact | proven "
          f"| {other.name}: declared ({what}) |")
    print("| --- | ---: | ---: | --- | --- | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for path in cases(Path(tmp)):
            model = read_model(path)
            declared = predict_whole_arena(model, target)
            armhf = f"{predict_whole_arena(model, other).arena:,}"
            missing = tflm_coverage.unregistered(model, target.oracle)
            unproven = tflm_coverage.unproven(model, target.oracle)
            proven = "✓" if not unproven else f"no: {', '.join(unproven[:3])}{' ...' if len(unproven) > 3 else ''}"
            if missing and ran_only:
                continue
            if missing:
                print(f"| {path.stem} | {declared.arena:,} | not registered: {', '.join(missing[:4])}"
                      f"{' ...' if len(missing) > 4 else ''} | - | {proven} | {armhf} |", flush=True)
                continue
            measured = smallest(program, path, declared.arena)
            shown = "does not run" if measured is None else f"{measured:,}"
            mark = "✓" if measured == declared.arena else "✗"
            print(f"| {path.stem} | {declared.arena:,} | {shown} | {mark} | {proven} | {armhf} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
