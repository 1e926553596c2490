"""NNC's kernel (`kernels.nnc.run`, over int64 columns), uncompiled and compiled, held to the
readable `nnc.plan` (what runs below `_nnc_kernel.COMPILE_TIMES` x `kernels.COMPILE_FROM`
records)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.synthetic import SHAPES, usage_records
from packager.errors import PlanError
from packager.plan import kernels
from packager.plan.kernels import nnc as nnc_kernel
from packager.plan.offsets import _nnc_kernel, nnc
from packager.plan.records import UsageRecord
from packager.plan.validate import check_offset_plan
from tests.conftest import numba_imported_by


# Tie-heavy: few sizes (zero among them), short and equal intervals, records that repeat.
tied_st = st.lists(st.tuples(st.integers(0, 20), st.sampled_from([0, 0, 1, 2, 3, 9]),
                             st.sampled_from([0, 16, 16, 32, 48, 64, 100])),
                   max_size=45).map(lambda rows: [UsageRecord(i, a, a + d, s)
                                                  for i, (a, d, s) in enumerate(rows)])
alignment_st = st.sampled_from([1, 16, 64])


def readable(records, alignment):
    """nnc.plan's readable loop, whatever the size."""
    saved = kernels.COMPILE_FROM
    kernels.COMPILE_FROM = 1 << 62
    try:
        return nnc.plan(records, alignment)
    finally:
        kernels.COMPILE_FROM = saved


def column_loop(records, alignment, loop=nnc_kernel.run) -> tuple[int, ...]:
    """The offsets by kernels.nnc.run (as given: uncompiled or compiled) on the records' columns."""
    first = np.array([r.first_op for r in records], np.int64)
    last = np.array([r.last_op for r in records], np.int64)
    size = np.array([r.size for r in records], np.int64)
    return tuple(_nnc_kernel.run_loop(loop, first, last, size, max(1, alignment)).tolist())


@settings(max_examples=250, deadline=None)
@given(records=tied_st, alignment=alignment_st)
def test_the_kernel_gives_the_readable_plan_on_tied_records(records, alignment):
    want = readable(records, alignment)
    assert column_loop(records, alignment) == want.offsets
    check_offset_plan(records, want)


def _random_records(seed: int, n: int, times: int, sizes: list[int]) -> list[UsageRecord]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        first = rng.randrange(times)
        life = rng.randrange(times) if rng.random() < 0.05 else rng.choice([0, 1, 2, 4])
        out.append(UsageRecord(i, first, first + life, rng.choice(sizes)))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_kernel_gives_the_readable_plan_on_random_records(seed):
    sizes = [[16], [0, 16, 32], [1, 7, 64, 100, 4096], list(range(1, 300))][seed % 4]
    records = _random_records(seed, 70, [5, 40, 200][seed % 3], sizes)
    for alignment in (1, 64):
        assert column_loop(records, alignment) == readable(records, alignment).offsets


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_kernel_gives_the_readable_plan_on_the_synthetic_shapes(shape):
    records = usage_records(SHAPES[shape](60))
    assert column_loop(records, 64) == readable(records, 64).offsets


@pytest.mark.parametrize("seed", range(4))
def test_compiled_and_uncompiled_kernels_give_the_readable_plan(seed):
    sizes = [[16, 16, 32], [0, 48, 64, 64], [1, 13, 100, 70_000], list(range(1, 5000))][seed]
    records = _random_records(seed, 1500, [30, 300, 3000, 10 ** 9][seed], sizes)
    for alignment in (1, 16):
        compiled = column_loop(records, alignment, kernels.compiled(nnc_kernel).run)
        assert compiled == column_loop(records, alignment)
        assert compiled == readable(records, alignment).offsets


def test_nnc_compiles_from_its_own_threshold():
    start = _nnc_kernel.COMPILE_TIMES * kernels.COMPILE_FROM
    records = [UsageRecord(i, i, i + 1, 8) for i in range(start)]
    assert start > kernels.COMPILE_FROM
    assert _nnc_kernel.compiled_loop(records[:start - 1], 1) is None  # the readable loop
    assert _nnc_kernel.compiled_loop(records, 1) is not None


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_nnc_plan_compiled_gives_the_readable_plan_on_the_synthetic_shapes(monkeypatch, shape):
    # NNC's threshold lowered to COMPILE_FROM records (a readable plan at its own takes seconds).
    monkeypatch.setattr(kernels, "COMPILE_FROM", kernels.COMPILE_FROM // _nnc_kernel.COMPILE_TIMES)
    records = tuple(usage_records(SHAPES[shape](1_200)))
    assert _nnc_kernel.compiled_loop(records, 64) is not None  # from its threshold: compiled
    compiled = nnc.plan(records, 64)
    assert compiled == readable(records, 64)
    check_offset_plan(records, compiled)


def test_few_records_take_the_readable_plan_and_sizes_beyond_int64_sums_are_refused():
    assert _nnc_kernel.compiled_loop([UsageRecord(i, i, i + 1, 8) for i in range(100)], 1) is None  # few
    with pytest.raises(PlanError, match="sizes add up"):
        nnc.plan([UsageRecord(i, i, i + 1, 1 << 62) for i in range(2500)], 1)


def test_nnc_on_compile_from_records_never_imports_numba():
    # Where the other kernels start, NNC still runs its readable loop (a first run compiles less).
    assert not numba_imported_by("from benchmarks.synthetic import SHAPES, usage_records\n"
                                 "from packager.plan import kernels\n"
                                 "from packager.plan.offsets import nnc\n"
                                 "records = usage_records(SHAPES['branching'](kernels.COMPILE_FROM))\n"
                                 "nnc.plan(records[:kernels.COMPILE_FROM], 64)\n")
