"""The device targets' own TFLite Micro: a small fit program (tests/oracle/tflm_fit.cc) linked against
TFLite Micro built for the target's core and kernels (`.ci/build_tflm_targets.sh`), run under
`qemu-arm`; the x86_64-linux build's (`.ci/build_tflm_fit_x86_64.sh`) runs natively. It answers one
question: does this model set up and run once in exactly N bytes?

Where the product finds the builds: `$TFLPACK_TFLM_TARGETS/<build>/tflm_fit` when that variable is
set, else `${TFLPACK_CACHE:-~/.cache/tflpack}/tflm-targets/<build>/tflm_fit` (the link the build
script points at its latest build); for a native build `$TFLPACK_TFLM_FIT_X86_64/<build>/tflm_fit`,
else `.../tflm-fit-x86_64/<build>/tflm_fit`. No build: None, and the figures stay modelled.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

ENV = "TFLPACK_TFLM_TARGETS"
FIT = "tflm_fit"
FITS, DOES_NOT_SET_UP, INVOKE_FAILED = 0, 4, 5  # the program's exit statuses
ARENA_MAX = 8 << 20  # the fit program's static arena: no model gets more
TIMEOUT = 300  # seconds: a failed TFLite Micro check halts by spinning, never by exiting
# Builds whose set-up alone is the target's: cortex-m55+cmsis-nn is a DSP build with CMSIS-NN's MVE
# buffer-size functions swapped in (MVE cannot execute here), so its Invoke would run DSP kernels on
# MVE-sized buffers. TFLite Micro takes all its arena while it sets a model up, so the fit program runs
# only the set-up there (--set-up-only): a model that sets up in N bytes is one an M55 build sets up in N.
SET_UP_ONLY = frozenset({"cortex-m55+cmsis-nn"})
# Builds for this machine's own processor: run as they are, no qemu-arm (build -> where they are found).
NATIVE = {"x86_64-linux": ("TFLPACK_TFLM_FIT_X86_64", "tflm-fit-x86_64")}


def runtime_name(build: str) -> str:
    """How the notes and the header name a build's TFLite Micro."""
    if build in SET_UP_ONLY:
        return (f"TFLite Micro built for {build} (a DSP build with CMSIS-NN's MVE buffer sizes: its set-up "
                "is an M55's, its MVE kernels not run)")
    return f"TFLite Micro built for {build}"


def builds_dir(build: str = "") -> Path:
    env, folder = NATIVE.get(build, (ENV, "tflm-targets"))
    given = os.environ.get(env)
    if given:
        return Path(given)
    cache = os.environ.get("TFLPACK_CACHE") or str(Path.home() / ".cache" / "tflpack")
    return Path(cache) / folder


def fit_program(build: str, where: Path | None = None) -> Path | None:
    """The fit program of one build ("cortex-m4", "cortex-m4+cmsis-nn", "x86_64-linux"...), or None."""
    if not build or (build not in NATIVE and shutil.which("qemu-arm") is None):
        return None
    path = (where or builds_dir(build)) / build / FIT
    return path if path.is_file() and os.access(path, os.X_OK) else None


def _command(program: Path) -> list[str]:
    """How to start the program: natively for a native build, else under qemu-arm. Cortex-M code
    runs on an A-profile core there (its M-profile user mode cannot start a program); an arena
    depends on how the code was compiled, not on which core executes it."""
    if program.parent.name in NATIVE:
        return [str(program)]
    return ["qemu-arm", "-cpu", "cortex-a15", str(program)]


# A device build's failed TFLite Micro check prints this and spins for ever (op_macros.h, AbortImpl, with
# TF_LITE_MCU_DEBUG_LOG): seeing it on the program's stderr ends the run at once instead of at the time limit.
HALTED = b"HALTED"
# Why a build here cannot run a model when the limit is qemu-arm's, not TFLite Micro's (why_not_run).
CANNOT_EMULATE = "it stops on an instruction qemu-arm's core does not have (SIGILL)"


def _run(program: Path, model: Path, arena: int, timeout: float, set_up_only: bool) -> tuple[int | None, bool]:
    """(the exit status or None, whether TFLite Micro halted on a failed check)."""
    only = ["--set-up-only"] if set_up_only or program.parent.name in SET_UP_ONLY else []
    with subprocess.Popen([*_command(program), str(model), str(arena), *only], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE) as proc:
        log, halted, deadline = b"", False, time.monotonic() + timeout
        while not halted:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([proc.stderr], [], [], left)[0]:
                break  # past the time limit
            chunk = os.read(proc.stderr.fileno(), 4096)
            if not chunk:  # stderr closed: the program is ending
                try:
                    return proc.wait(timeout=max(deadline - time.monotonic(), 0.1)), False
                except subprocess.TimeoutExpired:
                    break
            log = (log + chunk)[-len(HALTED) - 4096:]
            halted = HALTED in log
        proc.kill()
        proc.wait()
        return None, halted


def status(program: Path, model: Path, arena: int, timeout: float = TIMEOUT, set_up_only: bool = False) -> int | None:
    """The fit program's exit status for the model in `arena` bytes (None: a TFLite Micro check failed
    and halted, or it did not end within `timeout` s: an emulated core runs a large model slowly).
    `set_up_only`: AllocateTensors alone, without the Invoke."""
    return _run(program, model, arena, timeout, set_up_only)[0]


def why_not_run(program: Path, model: Path, arena: int = ARENA_MAX) -> str | None:
    """None when the model sets up (and runs) in `arena` bytes; else why not, in a few words. The
    M55 build's buffer-size code is compiled for cortex-m55, and gcc puts v8.1-M instructions
    (CSNEG) in some of it (the 1xN convolution's) that the A-profile core qemu-arm runs lacks."""
    code, halted = _run(program, model, arena, TIMEOUT, False)
    if code == FITS:
        return None
    if code == -signal.SIGILL:
        return CANNOT_EMULATE
    if halted:
        return "TFLite Micro halts on a failed check (it prints HALTED)"
    if code is None:
        return f"it does not end within {TIMEOUT} s"
    return "it does not run the model at all"


def sets_up(program: Path, model: Path, arena: int) -> bool:
    """Whether the model sets up in `arena` bytes on this build. TFLite Micro takes every byte of
    its arena while it sets a model up (AllocateTensors); Invoke allocates nothing, so this alone
    decides whether an arena is large enough, and costs no emulated inference."""
    return status(program, model, arena, set_up_only=True) == FITS


def fits(program: Path, model: Path, arena: int) -> bool:
    """Whether the model sets up and runs once in `arena` bytes on this build (a set-up-only build:
    whether it sets up)."""
    return status(program, model, arena) == FITS  # (None: a TFLite Micro check failed and halted)


def registered(program: Path, customs: list[str]) -> set[str]:
    """The builtin operators the build's op resolver registers, and those of `customs` it does."""
    done = subprocess.run([*_command(program), "--registered", *customs],
                          capture_output=True, text=True, timeout=TIMEOUT, check=True)
    return set(done.stdout.split())


def smallest(program: Path, model: Path, hint: int, step: int = 16) -> int | None:
    """The smallest multiple of `step` the model fits in, searched from `hint` (None: it does not
    run even in 8 MiB, the program's arena)."""
    n = max(step, -(-hint // step) * step)
    if fits(program, model, n):
        while n > step and fits(program, model, n - step):
            n -= step
        return n
    high = n
    while not fits(program, model, high):
        if high >= ARENA_MAX:
            return None
        high = min(2 * high, ARENA_MAX)
    low = n  # fails at low, fits at high
    while high - low > step:
        mid = (low + high) // 2 // step * step
        low, high = (mid, high) if not fits(program, model, mid) else (low, mid)
    return high
