"""Where the tests find each device target's TFLite Micro (the fit program .ci/build_tflm_targets.sh
builds): the build of the current shared sources and harness (its folder is keyed by their hash, so
a stale build is never used). No ../shared, no toolchain, no build yet: None and the reason."""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

from packager.runtimes.tflm_targets import NATIVE, fit_program
from tests.conftest import REPO

SCRIPT = REPO / ".ci" / "build_tflm_targets.sh"
NATIVE_SCRIPT = REPO / ".ci" / "build_tflm_fit_x86_64.sh"  # the x86_64-linux build's, run natively


@functools.cache
def builds(build: str = "") -> Path | None:
    """The folder holding `build`'s fit program (every qemu-run build's by default)."""
    script = NATIVE_SCRIPT if build in NATIVE else SCRIPT
    done = subprocess.run(["bash", str(script), "--print-dir"], capture_output=True, text=True, check=True)
    out = done.stdout.strip()
    return Path(out) if out else None


def program(build: str) -> tuple[Path | None, str]:
    """(the fit program of `build`, "") or (None, why there is none)."""
    if build not in NATIVE and shutil.which("qemu-arm") is None:
        return None, "qemu-arm is not installed (Debian: qemu-user)"
    if build in NATIVE and shutil.which("g++") is None:
        return None, "no g++ on this machine"
    where = builds(build)
    if where is None:
        return None, "no ../shared/oracles/tflm: the device targets' TFLite Micro cannot be built"
    found = fit_program(build, where)
    if found is None:
        script = NATIVE_SCRIPT.name if build in NATIVE else f"{SCRIPT.name} {build}"
        return None, f"TFLite Micro for {build} is not built (bash .ci/{script})"
    return found, ""
