"""The offset strategies' compiled loops (`_placement.place`, `_skyline.skyline`): compiled by
numba above `COMPILE_FROM` records, plain Python below it, the same source, the same plans; and a
small input never imports numba."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from packager.plan.offsets import (_gaps, greedy_by_breadth, greedy_by_size_tflite, greedy_by_size_tflm,
                                   greedy_in_order, path_cover, strip_packing)
from packager.plan.records import UsageRecord
from packager.plan.validate import check_offset_plan

_compiled = _gaps.compiled_module()
needs_numba = pytest.mark.skipif(_compiled is None, reason="numba is not installed on this platform")


def _records(seed: int, n: int, times: int, long_every: int) -> tuple[UsageRecord, ...]:
    """Random records: mostly short lives, a long one now and then, empty ones, odd sizes."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        first = rng.randrange(times)
        life = rng.randrange(times) if i % long_every == 0 else rng.choice([0, 1, 2, 5])
        size = rng.choice([0, 1, 13, 16, 48, 64, 100, 4096, rng.randrange(1, 70_000)])
        out.append(UsageRecord(rng.randrange(10 ** 6), first, min(times, first + life), size))
    return tuple(out)


CASES = [(seed, n, times, long_every, alignment)
         for seed, (n, times, long_every) in enumerate([(40, 6, 5), (300, 50, 7), (2_000, 400, 50),
                                                        (3_000, 3_000, 1_000), (1_500, 10 ** 9, 30),
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
    }


@needs_numba
@pytest.mark.parametrize("seed,n,times,long_every,alignment", CASES)
def test_compiled_and_uncompiled_loops_give_the_same_plans(monkeypatch, seed, n, times, long_every,
                                                          alignment):
    records = _records(seed, n, times, long_every)
    uncompiled = _plans(records, alignment)
    calls = {"place": 0, "skyline": 0}
    for name in calls:  # count the compiled loops' runs, so that the test sees them used
        loop = getattr(_compiled, name)

        def counted(*args, _loop=loop, _name=name):
            calls[_name] += 1
            return _loop(*args)
        monkeypatch.setattr(_compiled, name, counted)
    monkeypatch.setattr(_gaps, "COMPILE_FROM", 0)
    compiled = _plans(records, alignment)
    assert calls["place"] >= 6 and calls["skyline"] == 1
    for name, plan in compiled.items():
        check_offset_plan(records, plan)
        assert plan == uncompiled[name], name


@needs_numba
def test_a_fixed_offset_clash_is_found_by_both_forms(monkeypatch):
    records = (UsageRecord(0, 0, 3, 64), UsageRecord(1, 2, 5, 64), UsageRecord(2, 0, 5, 16))
    fixed = {0: 0, 1: 32}
    for compile_from in (10 ** 9, 0):
        monkeypatch.setattr(_gaps, "COMPILE_FROM", compile_from)
        with pytest.raises(Exception, match="fixed offset 32 of tensor 1 overlaps"):
            greedy_by_size_tflm.plan(records, 16, fixed=fixed)


def test_small_inputs_never_import_numba():
    code = ("import sys\n"
            "from packager.plan.records import UsageRecord\n"
            "from packager.plan.registry import OFFSET_STRATEGIES\n"
            "from packager.plan.problem import Problem\n"
            "p = Problem(tuple(UsageRecord(i, i, i + 2, 16 * (i % 7)) for i in range(2_000)), 16)\n"
            "for s in OFFSET_STRATEGIES[:7]:\n"
            "    s.run(p)\n"
            "print('numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@needs_numba
def test_loops_compile_from_a_tenth_of_the_threshold_once_numba_is_loaded():
    """min_cost_flow loads numba from 2,000 records and the portfolio runs it before the offset
    strategies: their loops then compile for the price of loading them, from COMPILE_FROM // 10."""
    code = ("import sys\n"
            "from packager.plan.offsets import _gaps\n"
            "n = _gaps.COMPILE_FROM // 10\n"
            "before = (_gaps.compiles(n), _gaps.compiles(n - 1), _gaps.compiles(_gaps.COMPILE_FROM))\n"
            "import numba\n"
            "print(before, (_gaps.compiles(n), _gaps.compiles(n - 1)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(False, False, True) (True, False)"
