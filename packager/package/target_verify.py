"""Run the packaged model on the device target's own TFLite Micro (packager/runtimes/tflm_targets.py)
before anything is written: it must set up in exactly the declared arena and not in 16 B less (the
set-up is where TFLite Micro takes its whole arena), and run once in it (an Invoke that does not end
within the time limit under qemu-arm is said, not held against the figure: the files never depend on
how fast a machine emulates a core). When it does, the figure is proven for this model whatever the
coverage matrix says (what the build showed settles its standing: package/standing.py); when it
does not, the package is refused (one line), as on the host. No build of the target here: the figure stays as modelled
and the note says the target was not run."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from typing import Callable

from packager.kernels import tflm_coverage
from packager.kernels.tflm_arena import target_named
from packager.model import Model
from packager.package.sidecar import PackagePlan
from packager.package.standing import EXACT, Shown
from packager.package.verify import VerifyError
from packager.runtimes import tflm_targets
from packager.semantics import SEMANTICS

STEP = 16


def verify_on_target(plan: PackagePlan, model: Model,
                     packed: Callable[[], bytes]) -> tuple[PackagePlan, str | None, Shown | None]:
    """(the plan, its figure proven when the target's build ran it; the note to print, or None
    when the target has no build of its own; what the build showed, or None when it did not run
    the model). `packed`: makes the model as it will be written."""
    arena = plan.runtime_arena
    target = target_named(arena.target) if arena is not None else None
    if target is None or not target.oracle or not SEMANTICS[plan.semantics].offline_plan:
        return plan, None, None
    program = tflm_targets.fit_program(target.oracle)
    if program is None:
        return plan, (f"not run on TFLite Micro built for {target.oracle} (no build: "
                      f"bash .ci/build_tflm_targets.sh, or set {tflm_targets.ENV})"), None
    missing = tflm_coverage.unregistered(model, target.oracle)
    if missing:
        return plan, (f"not run on TFLite Micro built for {target.oracle}: the build registers no "
                      f"{', '.join(missing)}"), None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "packaged.tflite"
        path.write_bytes(packed())
        n = arena.arena_bytes
        # The arena is settled by the set-up alone (TFLite Micro's Invoke allocates nothing): at the
        # figure and 16 B below it; then one Invoke at the figure shows the model runs there.
        if not tflm_targets.sets_up(program, path, n):
            return _not_run_by(plan, target.oracle, program, path, n)
        # A plan for dynamic shapes is made at the largest sizes; TFLite Micro runs the stored ones.
        below = None if plan.is_dynamic else tflm_targets.sets_up(program, path, n - STEP)
        if below and arena.bound == EXACT:
            raise VerifyError(f"the packaged model also runs in {n - STEP:,} B on TFLite Micro built for "
                              f"{target.oracle}: the declared {n:,} B is not the smallest")
        ran = tflm_targets.status(program, path, n)
        if ran not in (tflm_targets.FITS, None):
            return _not_run_by(plan, target.oracle, program, path, n)
    runtime = tflm_targets.runtime_name(target.oracle)
    runs, unfinished = "runs", ""
    if ran is None:
        # Set up exactly, its Invoke unfinished: the figure is settled (the files do not depend on how
        # fast this machine emulates the core), the note says what was not seen.
        runs = "sets up"
        unfinished = (f"; its one Invoke did not end within {tflm_targets.TIMEOUT} s (an emulated core "
                      "runs a large model slowly; a failed TFLite Micro check would halt it too)")
    if below is None:
        # Its stored shapes ran, not the largest the plan is made for: nothing settled (as on the host).
        return plan, (f"{runs} in {n:,} B on {runtime} (its stored shapes; not checked to be the smallest)"
                      f"{unfinished}"), None
    shown = Shown(arena.target, runtime, n, True, below)
    if below:
        return plan, (f"{runs} in {n:,} B on {runtime}, and in 16 B less too (the figure is an upper bound)"
                      f"{unfinished}"), shown
    proven = replace(arena, modelled=False, rule=f"{target.rule}; this model run on {runtime}")
    return (replace(plan, runtime_arena=proven),
            f"verified on {runtime}: {runs} in {n:,} B and not in 16 B less{unfinished}", shown)


def _not_run_by(plan: PackagePlan, build: str, program: Path, path: Path, n: int) -> tuple[PackagePlan, str, None]:
    """The model did not run in the declared `n` bytes on the target's own build: refused when it runs
    with more, else said. Unless the cause is the emulator's (an instruction qemu-arm lacks), TFLite
    Micro itself refuses or halts on it: what the build's coverage matrix proves of each kernel form
    does not reach a model the runtime does not run, so the figure is left modelled, never exact."""
    why = tflm_targets.why_not_run(program, path, max(n, tflm_targets.ARENA_MAX))
    if not why:
        raise VerifyError(f"the packaged model does not run in the declared {n:,} B on TFLite Micro "
                          f"built for {build}")
    if why != tflm_targets.CANNOT_EMULATE:
        plan = replace(plan, runtime_arena=replace(plan.runtime_arena, modelled=True))
    return plan, f"not run on TFLite Micro built for {build}: {why}", None
