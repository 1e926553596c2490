"""Each device target's declared TFLite Micro arena against that target's own TFLite Micro (the fit
program .ci/build_tflm_targets.sh builds, run under qemu-arm): the smallest arena the model sets up
and runs in (16-byte steps, searched from the prediction), and whether the figure is proven.

    bash .ci/build_tflm_targets.sh && python -m benchmarks.tflm_targets [--ran-only] [TARGET...]   (default: cortex-m4)

Rows: the shared TFLite Micro models (../shared/models/tflm), every fixture of
fixtures/tflm_kernels.py, fixtures/runtime_cases.py and fixtures/tflm_cmsis_kernels.py, then the
catalog's models (fixtures/models); `--ran-only`: only those the first target's build registers every
operator of. Several targets: their columns side by side. A single CMSIS-NN target: its core's figure with
reference kernels beside it (modelled). Prints a Markdown table (docs/tflm-arena.md).
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
from packager.kernels.tflm_arena import target_named
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


def row(path: Path, target, program: Path) -> list[str]:
    """declared, measured, exact, proven: the target's four cells for one model."""
    model = read_model(path)
    declared = predict_whole_arena(model, target)
    missing = tflm_coverage.unregistered(model, target.oracle)
    unproven = tflm_coverage.unproven(model, target.oracle)
    proven = "✓" if not unproven else f"no: {', '.join(unproven[:3])}{' ...' if len(unproven) > 3 else ''}"
    if missing:
        return [f"{declared.arena:,}", f"not registered: {', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}",
                "-", proven]
    measured = smallest(program, path, declared.arena)
    shown = "does not run" if measured is None else f"{measured:,}"
    return [f"{declared.arena:,}", shown, "✓" if measured == declared.arena else "✗", proven]


def main(argv: list[str]) -> None:
    ran_only = "--ran-only" in argv
    argv = [a for a in argv if a != "--ran-only"]
    targets = [target_named(name) for name in (argv or ["cortex-m4"])]
    where = subprocess.run(["bash", str(REPO / ".ci" / "build_tflm_targets.sh"), "--print-dir"],
                           capture_output=True, text=True, check=True).stdout.strip()
    programs = [fit_program(t.oracle, Path(where)) if where else None for t in targets]
    for t, program in zip(targets, programs):
        if program is None:
            sys.exit(f"error: no build of TFLite Micro for {t.oracle} (bash .ci/build_tflm_targets.sh)")
    reference = target_named(targets[0].name.split("+")[0]) if len(targets) == 1 and targets[0].cmsis_nn else None
    head = "".join(f" {t.name}: declared | measured on its TFLite Micro | exact | proven |" for t in targets)
    print(f"| model |{head}{f' {reference.name}: declared (reference kernels) |' if reference else ''}")
    print("| --- |" + " ---: | ---: | --- | --- |" * len(targets) + (" ---: |" if reference else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for path in cases(Path(tmp)):
            if ran_only and tflm_coverage.unregistered(read_model(path), targets[0].oracle):
                continue  # the first target's build cannot run it
            cells = [c for t, program in zip(targets, programs) for c in row(path, t, program)]
            if reference:
                cells.append(f"{predict_whole_arena(read_model(path), reference).arena:,}")
            print(f"| {path.stem} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
