"""A device build's failed TFLite Micro check prints HALTED and spins for ever: the runner ends such a
run as soon as it says so (not at the time limit), names it, and `package` does not call a figure
exact on a target whose own build halts on the model, whatever that build's coverage matrix proves.
The build here is a stand-in program that halts as TFLite Micro does, so no oracle is needed."""

from __future__ import annotations

import os
import time
from pathlib import Path

from packager.package.build import package
from packager.runtimes import tflm_targets
from tests.conftest import REPO

MODEL = REPO / "fixtures" / "models" / "chain.tflite"


def _halting_build(tmp_path: Path) -> Path:
    """A stand-in x86_64-linux fit program (a native build: no qemu) that halts on every model."""
    program = tmp_path / "builds" / "x86_64-linux" / tflm_targets.FIT
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n[ \"$1\" = --registered ] && exit 0\necho HALTED >&2\nexec sleep 600\n")
    os.chmod(program, 0o755)
    return program


def test_a_halted_run_ends_at_once_and_is_named(tmp_path):
    program = _halting_build(tmp_path)
    start = time.monotonic()
    assert tflm_targets.status(program, MODEL, 4096) is None
    assert tflm_targets.why_not_run(program, MODEL) == "TFLite Micro halts on a failed check (it prints HALTED)"
    assert time.monotonic() - start < 60  # two runs, each ended by its HALTED, not by the 300 s limit


def test_package_does_not_call_exact_a_figure_for_a_model_the_targets_build_halts_on(tmp_path, monkeypatch):
    program = _halting_build(tmp_path)
    monkeypatch.setenv("TFLPACK_TFLM_FIT_X86_64", str(program.parent.parent))
    unverified = package(MODEL, tmp_path / "a", report=False, target="x86_64-linux", verify=False)
    assert "_ARENA_EXACT 1" in (tmp_path / "a" / "chain_plan.h").read_text()  # the coverage matrix's proof
    result = package(MODEL, tmp_path / "b", report=False, target="x86_64-linux", verify=True)
    assert any("x86_64-linux: TFLite Micro halts on a failed check" in n for n in result.notes), result.notes
    header = (tmp_path / "b" / "chain_plan.h").read_text()
    assert "_ARENA_EXACT 0" in header and '_ARENA_BOUND "unknown"' in header
    assert result.plan.runtime_arena.arena_bytes == unverified.plan.runtime_arena.arena_bytes
