"""The coverage matrix per device target (packager/compare/device_matrix.py): every model of
fixtures/op_matrix.py set up on the target's own TFLite Micro (the fit program, under qemu-arm or natively) in
the declared whole arena and in 16 B less. Every row the build sets up is exact, or its figure
names the kernel or rule it lacks (never an unnamed miss, over or under); docs/device-matrix.md
shows each row as measured here; the target's coverage table claims no form a row contradicts."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from benchmarks.tflm_target_matrix import cell, count_line
from fixtures.op_matrix import CASES, write
from packager.compare.device_matrix import measure_device_matrix
from packager.compare.matrix import EXACT, FAILED, UNNAMED
from packager.kernels import tflm_coverage
from packager.kernels.tflm_arena import target_named
from packager.reader import read_model
from tests.conftest import REPO
from tests.oracle.locate import program

# The reference-kernel builds (x86_64-linux runs natively), then the CMSIS-NN builds of the DSP, no-DSP and
# MVE families (M55: set-up only).
TARGETS = ("cortex-m4", "armhf-linux", "x86_64-linux", "cortex-m4+cmsis-nn", "cortex-m3+cmsis-nn",
           "cortex-m55+cmsis-nn")
PAGE = REPO / "docs" / "device-matrix.md"


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> tuple[Path, ...]:
    return tuple(write(tmp_path_factory.mktemp("device_matrix")))


@functools.cache
def _rows(target: str, paths: tuple[Path, ...]):
    found, why = program(target_named(target).oracle)
    if found is None:
        pytest.skip(why)
    return measure_device_matrix(list(paths), target_named(target), found)


def _column(target: str) -> list[str]:
    """The target's column of docs/device-matrix.md, in CASES order."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    header = next(line for line in lines if line.startswith("| operator | mode |"))
    at = [c.strip() for c in header.strip("|").split("|")].index(target)
    rows = [line for line in lines if line.startswith("| ") and line.count("|") >= 4][2:]
    return [re.split(r" \| ", row.strip("| "))[at] for row in rows]


@pytest.mark.parametrize("target", TARGETS)
def test_every_row_is_exact_or_named(target, models):
    rows = _rows(target, models)
    unnamed = [f"{r.model}: {r.why}" for r in rows if r.verdict in (UNNAMED, FAILED)]
    assert not unnamed, "rows not exact, with no kernel named as not modelled:\n" + "\n".join(unnamed)
    assert sum(r.verdict == EXACT for r in rows) > 250


@pytest.mark.parametrize("target", TARGETS)
def test_the_page_shows_each_row_as_measured(target, models):
    rows = _rows(target, models)
    page = PAGE.read_text(encoding="utf-8")
    assert count_line(target, rows) in page, "docs/device-matrix.md is stale (python -m benchmarks.tflm_target_matrix --write docs/device-matrix.md)"
    assert _column(target) == [cell(r) for r in rows]
    assert len(rows) == len(CASES)


@pytest.mark.parametrize("target", TARGETS)
def test_the_coverage_table_claims_only_what_ran_exact(target, models, tmp_path_factory):
    """Each form claimed is held by an exact row here or an exact case of test_tflm_targets.py (the
    shared models, the fixtures, the catalog), and no row that was not exact has it. On a CMSIS-NN
    build a form names the kernel's buffer branch: a branch no exact case took is claimed by nothing."""
    from tests.compare.test_tflm_targets import CASES as TARGET_CASES, case_path, runs_exactly
    from tests.conftest import SHARED_MODELS
    rows = _rows(target, models)
    build = target_named(target).oracle
    claimed = tflm_coverage.PROVEN[build]
    by_name = {p.stem: p for p in models}
    held = {f for r in rows if r.verdict == EXACT for f in tflm_coverage.forms(read_model(by_name[r.model]), build)}
    wrong = {f for r in rows if r.verdict in (UNNAMED, FAILED)
             for f in tflm_coverage.forms(read_model(by_name[r.model]), build)}
    folder = str(tmp_path_factory.mktemp("target_cases"))
    for case in TARGET_CASES:
        if case.startswith("shared:") and not SHARED_MODELS.exists():
            continue
        if runs_exactly(target, case, folder)[0]:
            held.update(tflm_coverage.forms(read_model(case_path(case, folder)), build))
    assert claimed <= held, f"claimed but not held exact: {sorted(claimed - held)}"
    assert not claimed & wrong, sorted(claimed & wrong)
