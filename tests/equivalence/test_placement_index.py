"""The placement kernel's index of placed records (buckets of operators, each listing the records
that start in it and those passing through) finds exactly the conflicting records, whatever the
bucket width: its offsets are those of the gap searches over every conflicting record, found by
brute force."""

from __future__ import annotations

import random

import pytest

from packager.plan import kernels
from packager.plan.kernels import placement as _placement
from packager.plan.offsets import _gaps, _placement_kernel
from tests.equivalence.test_compiled_loops import _records  # random records: short lives, a long one now and then


def _brute_force(records, order, alignment, best_fit, remember_unaligned) -> list[int]:
    """Each record in the gap search's place among every placed record alive with it."""
    offsets = [0] * len(records)
    placed: list[int] = []
    for i in order:
        r = records[i]
        if r.size == 0:
            continue
        conflicts = sorted((offsets[j], offsets[j] + records[j].size, records[j].first_op, records[j].last_op)
                           for j in placed
                           if records[j].first_op <= r.last_op and r.first_op <= records[j].last_op)
        offsets[i] = (_gaps.smallest_gap_offset(conflicts, r.size, alignment, remember_unaligned)
                      if best_fit else _gaps.lowest_offset(conflicts, r.size, alignment))
        placed.append(i)
    return offsets


# (records, operators, every how many records a long one): few conflicts per record; many (more
# than the loop sorts by insertion); long records crossing many buckets.
INPUTS = [(300, 60, 7), (250, 6, 2), (200, 400, 3)]


@pytest.mark.parametrize("width", [1, 2, 5, 64, 10_000])
@pytest.mark.parametrize("seed,n,times,long_every", [(s, *i) for s, i in enumerate(INPUTS)])
@pytest.mark.parametrize("best_fit,remember_unaligned", [(True, True), (True, False), (False, False)])
def test_the_loop_finds_every_conflict_at_any_bucket_width(monkeypatch, width, seed, n, times, long_every,
                                                           best_fit, remember_unaligned):
    records = _records(seed, n, times, long_every)
    order = list(range(n))
    random.Random(seed).shuffle(order)
    monkeypatch.setattr(kernels, "COMPILE_FROM", 1)
    monkeypatch.setattr(_placement_kernel, "bucket_width", lambda cols: (width, int(cols.last.max()) // width + 1))
    for alignment in (1, 16):
        offsets, clash = _gaps.placement(records, order, alignment, best_fit=best_fit,
                                         remember_unaligned=remember_unaligned)
        assert clash == -1
        assert offsets == _brute_force(records, order, alignment, best_fit, remember_unaligned)


def test_many_conflicts_take_the_merge_sort():
    """The second input meets more conflicting records than the loop sorts as it finds them."""
    records = _records(1, *INPUTS[1][:2], INPUTS[1][2])
    alive_at = [sum(1 for r in records if r.size and r.first_op <= t <= r.last_op) for t in range(INPUTS[1][1])]
    assert max(alive_at) > 2 * _placement._INSERTION
