"""Run the packaged model on TFLite Micro before anything is written (in child processes, so a
crash cannot take the packager down), and check what the outputs promise:

- it sets up and runs in exactly the predicted whole arena of the host build, and not in 16
  bytes less (a figure the rules do not call exact is tried there too, and what happens is
  what its standing says: package/standing.py);
- TFLite Micro's head equals the plan (the offline plan is used as written);
- its outputs equal the original model's, inputs seeded the same way;
- it never needs more than the original model would.

A mismatch raises VerifyError with one line; the caller writes nothing. Without the runtime, when
TFLite Micro does not run the original model either, or when a constant is stored shorter than its
shape (the runtime would read past it, so no two runs can be compared), the plan is reported
unverified.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from packager.errors import PlanError
from packager.kernels.tflm_arena import HOST
from packager.kernels.tflm_head import predict_tflm
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.model import Model
from packager.package.constant_data import short_constant
from packager.package.runtime_arena import scratch_differs_from_host
from packager.package.sidecar import PackagePlan
from packager.package.standing import EXACT, UPPER, Shown
from packager.runtimes.child import Unavailable
from packager.runtimes.tflm import ARENA_STEP, first_arena_size, installed_version, try_arenas_each

VERIFIED, UNVERIFIED, SKIPPED = "verified", "unverified", "skipped"


class VerifyError(PlanError):
    """The packaged model does not do on TFLite Micro what the outputs say."""


@dataclass(frozen=True)
class Verification:
    status: str  # verified | unverified | skipped
    line: str  # what the summary says
    shown: Shown | None = None  # what the host build did at the whole arena's figure
    not_run: str = ""  # why it did not run the packaged model there ("" when it did)


def skipped() -> Verification:
    return Verification(SKIPPED, "not verified on TFLite Micro (--no-verify)", not_run="--no-verify")


def _unverified(why: str, not_run: str = "") -> Verification:
    return Verification(UNVERIFIED, f"unverified: {why}", not_run=not_run or why)


def verify_package(original: Path | bytes, packed: bytes, plan: PackagePlan, model: Model,
                   timeout: float = 300.0) -> Verification:
    """`original`: the input model's file, or its bytes (a model whose stored sizes were written)."""
    if plan.runtime_arena is None:
        return _unverified("only a tflm plan runs on TFLite Micro")
    short = short_constant(model)
    if short is not None:
        return _unverified(short)
    head = plan.runtime_arena.head_bytes  # the plan's, or a kept offline plan's
    if scratch_differs_from_host(model, plan.runtime_arena.target):
        # The host runs its own reference kernels: their scratch buffers, not CMSIS-NN's or a
        # 32-bit build's, sit in its head.
        head = predict_tflm(model).head if plan.runtime_arena.head_plan else plan.arena_bytes
    # The packaged model is the input's graph plus its offline plan (package/check.py proves it),
    # and with the head given the prediction reads only the graph: no second read of the model.
    host = predict_whole_arena(model, HOST, head=head)
    before = predict_whole_arena(model, HOST)
    # A plan for dynamic shapes is made at the largest sizes; TFLite Micro runs the stored ones.
    dynamic = plan.is_dynamic
    if host.arena > before.arena and not dynamic:
        raise VerifyError(f"the packaged model would need {host.arena:,} B of TFLite Micro arena, "
                          f"more than the original's {before.arena:,} B")
    with tempfile.TemporaryDirectory(prefix="tflpack-verify-") as folder:
        if isinstance(original, bytes):
            (Path(folder) / "original.tflite").write_bytes(original)
            original = Path(folder) / "original.tflite"
        path = Path(folder) / "packaged.tflite"
        path.write_bytes(packed)
        # The figure and 16 B less; first, where the rules leave memory out, a generous arena
        # (its outputs are compared). Dynamic shapes: the stored ones, generously.
        generous = max(first_arena_size(model), host.arena)
        at = 0 if host.side in (EXACT, UPPER) and not dynamic else 1
        sizes = ([] if at == 0 else [generous]) + ([] if dynamic else [host.arena, host.arena - ARENA_STEP])
        # The original (its outputs are the reference), then the packaged model: one child
        # process, so the runtime is loaded once.
        ran = try_arenas_each([(Path(original), [max(first_arena_size(model), host.arena)]),
                               (path, sizes)], timeout)
    if isinstance(ran, Unavailable):
        return _unverified(ran.reason)
    reference, tries = ran
    if not reference[0].ok:
        return _unverified(f"TFLite Micro does not run the original model ({reference[0].reason})",
                           f"it does not run the original model: {reference[0].reason}")
    first = tries[0]
    if not first.ok:
        raise VerifyError(f"the packaged model does not run in {first.arena:,} B on TFLite Micro: "
                          f"{first.reason}")
    if first.head != head and not dynamic:
        raise VerifyError(f"TFLite Micro's head is {first.head:,} B, not the plan's {head:,} B "
                          f"(it did not use the offline plan as written)")
    wrong = [k for k, (a, b) in enumerate(zip(first.outputs, reference[0].outputs)) if a != b]
    if wrong or len(first.outputs) != len(reference[0].outputs):
        k = wrong[0] if wrong else min(len(first.outputs), len(reference[0].outputs))
        raise VerifyError(f"output {k} of the packaged model differs from the original's on TFLite Micro")
    runtime = f"tflite-micro {installed_version()}".strip()
    if dynamic:
        where = f"runs at its stored shapes in {first.arena:,} B (head {first.head:,} B)"
        return Verification(VERIFIED, f"verified on {runtime}: the packaged model {where}; outputs identical "
                                      "to the original's", not_run="it runs only the stored shapes, not the "
                                                                   "largest the plan is made for")
    runs, below = tries[at].ok, tries[at + 1].ok if tries[at].ok else None
    if host.side == EXACT and below:
        raise VerifyError(f"the packaged model also runs in {host.arena - ARENA_STEP:,} B: the predicted "
                          f"arena of {host.arena:,} B is not the smallest")
    if runs and not below:
        where = f"runs in {host.arena:,} B and not in 16 B less; head {first.head:,} B = the plan"
    elif runs:
        where = (f"runs in {host.arena:,} B and in {host.arena - ARENA_STEP:,} B too (the figure is an upper "
                 f"bound); head {first.head:,} B = the plan")
    else:
        where = (f"runs in {first.arena:,} B but not in {host.arena:,} B (the figure is a lower bound); "
                 f"head {first.head:,} B = the plan")
    shown = Shown(HOST.name, runtime, host.arena, runs, below)
    return Verification(VERIFIED, f"verified on {runtime}: the packaged model {where}; "
                                  "outputs identical to the original's", shown)
