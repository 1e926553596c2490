"""Run `package --regions` on TFLite Micro's own code before anything is written, on the x86_64-linux
target (the two-buffer harness links that build: runtimes/tflm_regions.py): the packaged model must set
up and run with both buffers as declared, and not with either 16 B smaller while the other is ample.
When it does, both figures are proven for this model; when it does not run at the declared figures, the
package is refused (one line), as the single-arena verification refuses. Other targets, or no harness
built here: the regions keep the rule's standing (package/regions.py) and a note says why not run."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Callable

from packager.kernels import tflm_coverage
from packager.model import Model
from packager.package.sidecar import PackagePlan
from packager.package.standing import ARENA_STEP, EXACT, UPPER
from packager.package.verify import VerifyError
from packager.runtimes import tflm_regions

RUNTIME = f"TFLite Micro built for {tflm_regions.BUILD}"


def verify_regions(plan: PackagePlan, model: Model, packed: Callable[[], bytes]) -> tuple[PackagePlan, str | None]:
    """(the plan, its regions' standing settled by the run; the note to print, None when the target has
    no two-buffer build)."""
    if not plan.regions or plan.runtime_arena is None or plan.runtime_arena.target != tflm_regions.BUILD:
        return plan, None
    exe = tflm_regions.program()
    if exe is None:
        return plan, (f"two buffers not run on {RUNTIME} (no build: bash .ci/build_tflm_regions.sh, "
                      f"or set {tflm_regions.ENV})")
    missing = tflm_coverage.unregistered(model, tflm_regions.BUILD)
    if missing:
        return plan, f"two buffers not run on {RUNTIME}: the build registers no {', '.join(missing)}"
    non, per = plan.regions
    big = tflm_regions.AMPLE
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "packaged.tflite"
        path.write_bytes(packed())
        if not tflm_regions.fits(exe, path, per.bytes, non.bytes):
            if not tflm_regions.fits(exe, path, big, big):
                return plan, f"two buffers not run on {RUNTIME}: it does not run the model at all"
            raise VerifyError(f"the packaged model does not run with its declared buffers ({non.bytes:,} B "
                              f"non-persistent, {per.bytes:,} B persistent) on {RUNTIME}")
        if plan.is_dynamic:  # its stored shapes ran, not the largest the plan is made for
            return plan, f"two buffers run on {RUNTIME} (its stored shapes; not checked to be the smallest)"
        smaller = [r.part for r, sizes in ((non, (big, non.bytes - ARENA_STEP)), (per, (per.bytes - ARENA_STEP, big)))
                   if tflm_regions.fits(exe, path, *sizes)]
    if smaller and non.bound == EXACT:
        raise VerifyError(f"the packaged model also runs with the {smaller[0]} buffer {ARENA_STEP} B smaller on "
                          f"{RUNTIME}: the declared figure is not the smallest")
    if smaller:
        bound, reason = UPPER, (f"{RUNTIME} runs it with both buffers as declared and with the "
                                f"{' and '.join(smaller)} one {ARENA_STEP} B smaller too")
    else:
        bound, reason = EXACT, (f"{RUNTIME} runs it with both buffers as declared and not with either "
                                f"{ARENA_STEP} B smaller, the other ample")
    regions = tuple(replace(r, bound=bound, reason=reason) for r in plan.regions)
    note = (f"two buffers verified on {RUNTIME}: run as declared, not with either {ARENA_STEP} B smaller"
            if bound == EXACT else f"two buffers run on {RUNTIME}, with the {' and '.join(smaller)} one "
                                   f"{ARENA_STEP} B smaller too (an upper bound)")
    return replace(plan, regions=regions), note
