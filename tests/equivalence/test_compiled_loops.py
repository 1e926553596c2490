"""The offset strategies' kernels (placement, skyline, NNC) held to the strategies' readable
plans: compiled from `kernels.COMPILE_FROM` records on, the same plans as below it, on random
records (with ties) and on real models' records; and a small input never imports numba."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from packager.plan import kernels
from packager.plan.offsets import (greedy_by_breadth, greedy_by_size_tflite, greedy_by_size_tflm,
                                   greedy_in_order, nnc, path_cover, strip_packing)
from packager.plan.records import UsageRecord
from packager.plan.validate import check_offset_plan
from tests.conftest import REPO, SHARED_NAMES, numba_imported_by, shared_model_path


def _records(seed: int, n: int, times: int, long_every: int) -> tuple[UsageRecord, ...]:
    """Random records: mostly short lives, a long one now and then, empty ones, odd sizes, and
    many ties (equal sizes, equal first operators)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        first = rng.randrange(times)
        life = rng.randrange(times) if i % long_every == 0 else rng.choice([0, 1, 2, 5])
        size = rng.choice([0, 1, 13, 16, 48, 64, 100, 4096, rng.randrange(1, 70_000)])
        out.append(UsageRecord(rng.randrange(10 ** 6), first, min(times, first + life), size))
    return tuple(out)


CASES = [(seed, n, times, long_every, alignment)
         for seed, (n, times, long_every) in enumerate([(40, 6, 5), (300, 50, 7), (800, 400, 50),
                                                        (700, 700, 1_000), (500, 10 ** 9, 30),
                                                        (600, 4, 3)])
         for alignment in (1, 16)]


def _plans(records, alignment):
    fixed = {i: o for i, o in enumerate(greedy_by_size_tflm.plan(records, alignment).offsets) if i % 3 == 0}
    return {
        "greedy_in_order": greedy_in_order.plan(records, alignment),
        "greedy_by_size": greedy_by_size_tflite.plan(records, alignment,
                                                     whole_run=frozenset(range(0, len(records), 97))),
        "greedy_by_size_tflm": greedy_by_size_tflm.plan(records, alignment),
        "greedy_by_size_tflm fixed": greedy_by_size_tflm.plan(records, alignment, fixed=fixed),
        "greedy_by_breadth": greedy_by_breadth.plan(records, alignment),
        "path_cover": path_cover.plan(records, alignment),
        "strip_packing": strip_packing.plan(records, alignment),
        "nnc": nnc.plan(records, alignment),
    }


def _readable_and_kernel_plans(monkeypatch, records, alignment):
    monkeypatch.setattr(kernels, "COMPILE_FROM", 1 << 62)
    readable = _plans(records, alignment)
    monkeypatch.setattr(kernels, "COMPILE_FROM", 1)
    return readable, _plans(records, alignment)


@pytest.mark.parametrize("seed,n,times,long_every,alignment", CASES)
def test_the_kernels_give_the_readable_plans(monkeypatch, seed, n, times, long_every, alignment):
    records = _records(seed, n, times, long_every)
    readable, by_kernel = _readable_and_kernel_plans(monkeypatch, records, alignment)
    for name, plan in by_kernel.items():
        check_offset_plan(records, plan)
        assert plan == readable[name], name


@pytest.mark.parametrize("name", SHARED_NAMES)
def test_the_kernels_give_the_readable_plans_on_real_models(monkeypatch, name):
    from packager.arenas import arenas_to_plan, problem_of
    from packager.reader import read_model

    model = read_model(shared_model_path(name))
    for semantics in ("tflite", "tflm"):
        for arena in arenas_to_plan(model, semantics):
            records = problem_of(arena.lifetimes).records
            readable, by_kernel = _readable_and_kernel_plans(monkeypatch, records, 16)
            assert by_kernel == readable


def test_a_fixed_offset_clash_is_found_by_both_forms(monkeypatch):
    records = (UsageRecord(0, 0, 3, 64), UsageRecord(1, 2, 5, 64), UsageRecord(2, 0, 5, 16))
    fixed = {0: 0, 1: 32}
    for compile_from in (1 << 62, 1):
        monkeypatch.setattr(kernels, "COMPILE_FROM", compile_from)
        with pytest.raises(Exception, match="fixed offset 32 of tensor 1 overlaps"):
            greedy_by_size_tflm.plan(records, 16, fixed=fixed)


def test_inputs_below_compile_from_never_import_numba():
    assert not numba_imported_by(
            "from packager.plan import kernels\n"
            "from packager.plan.records import UsageRecord\n"
            "from packager.plan.registry import OFFSET_STRATEGIES\n"
            "from packager.plan.problem import Problem\n"
            "n = kernels.COMPILE_FROM - 1\n"
            "p = Problem(tuple(UsageRecord(i, i, i + 2, 16 * (i % 7)) for i in range(n)), 16)\n"
            "for s in OFFSET_STRATEGIES:\n"
            "    s.run(p)\n")


_COMPILES = """
import numpy as np
from packager.plan import kernels
from packager.plan.kernels import exact_probe
calls = []
kernels.AFTER_COMPILE.append(lambda: calls.append(1))
kernels.compiled(exact_probe).neighbour_rows(np.arange(3, dtype=np.int64), np.full(3, 3, np.int64), 3)
print(len(calls))
"""


def test_after_compile_runs_after_each_kernel_compile_and_not_after_a_cached_load(tmp_path):
    # (the command line collects the compile's garbage there: the first run's peak memory)
    pytest.importorskip("numba")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", _COMPILES], cwd=REPO, env=env, capture_output=True,
                           text=True, check=True).stdout.split()[-1] for _ in range(2)]
    assert int(runs[0]) >= 2 and int(runs[1]) == 0  # neighbour_rows and its sort; then none
