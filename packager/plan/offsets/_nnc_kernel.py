"""NNC's plan by its kernel (`kernels.nnc.run`, compiled) over the records' int64 columns: what
`nnc.plan` runs from `COMPILE_TIMES` x `kernels.COMPILE_FROM` records on. The kernel keeps the
readable loop's choices with indexes (see its docstring); this module builds its inputs."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from packager.plan import kernels
from packager.plan.kernels import nnc as nnc_kernel
from packager.plan.records import OffsetPlan, Records, UsageRecord

NAME = "nnc"
SINK_FIRST = nnc_kernel.SINK_FIRST

# NNC compiles from twice kernels.COMPILE_FROM (2,000 records). Its first compile (an empty numba
# cache) takes 14-18 s of CPU and about 60 MB, even after another kernel's; its readable loop
# takes 0.4-0.7 s at 1,000 records, 2.0-3.5 s at 2,000, 8.5-18 s at 4,000 (perfect packings and
# the synthetic shapes; the cached kernel: milliseconds after a 0.04-0.5 s load). Compiled at
# 1,000 the kernel would repay its compile in 20 to 40 runs, from 2,000 in 4 to 9, so the first
# run of a 1,000-record input no longer compiles it (`python -m benchmarks.bench_nnc
# --sizes 1000,2000,4000 --shapes chain,residual,branching,transformer,perfect`).
COMPILE_TIMES = 2

# The compiled loop's numbers stay inside int64: offsets (at most the sizes and the alignment
# padding summed), operators below the sink's, partner ranks (about the cube of the record count).
_INT64_SAFE = 1 << 61


def compiled_loop(records: Sequence[UsageRecord], alignment: int):
    """(`kernels.nnc.run` compiled, the records' columns), or None: too few records, or so many
    (partner ranks grow as the cube of the count) or such an alignment that its sums would pass
    int64 (the records' own bounds hold already)."""
    n = len(records)
    if not kernels.use_kernel(n, COMPILE_TIMES) or (n + 1) ** 3 >= _INT64_SAFE:
        return None
    cols = Records.of(records)
    if alignment * n >= _INT64_SAFE or int(cols.last.max()) >= SINK_FIRST:
        return None
    if not kernels.use_kernel(int(np.count_nonzero(cols.size)), COMPILE_TIMES):
        return None
    return kernels.compiled(nnc_kernel).run, cols


def plan_by_loop(loop, cols: Records, alignment: int) -> OffsetPlan:
    """The plan by `kernels.nnc.run` (compiled or not) over the records' columns."""
    offsets = run_loop(loop, cols.first, cols.last, cols.size, alignment, cols.starts)
    placed = cols.size > 0
    arena = int((offsets[placed] + cols.size[placed]).max()) if placed.any() else 0
    return OffsetPlan(NAME, tuple(offsets.tolist()), arena, alignment)


def run_loop(loop, first: np.ndarray, last: np.ndarray, size: np.ndarray, alignment: int,
             distinct_firsts: np.ndarray | None = None) -> np.ndarray:
    """The offsets by `kernels.nnc.run` (compiled or not) over int64 columns: the inputs it takes,
    built as arrays (`distinct_firsts`: the sorted distinct first operators, if known)."""
    n = len(first)
    ids = np.flatnonzero(size > 0)
    if len(ids) == 0:
        return np.zeros(n, np.int64)
    interference = np.zeros(n, np.int64)
    interference[ids] = _meeting_counts(first[ids], last[ids])
    by_size = ids[np.argsort(-size[ids], kind="stable")]
    distinct_sizes, inverse = np.unique(size[ids], return_inverse=True)
    ascending = inverse.reshape(-1).astype(np.int64)  # smallest 0
    size_rank = np.zeros(n, np.int64)
    size_rank[ids] = len(distinct_sizes) - 1 - ascending  # largest 0
    order = ids[np.argsort(first[ids], kind="stable")]
    ranks = np.zeros(n, np.int64)
    ranks[ids] = (ascending * (n + 1) + interference[ids]) * (n + 1) + (n - ids)
    class_ids, class_firsts, class_bounds, class_longest = _lifetime_classes(first, last)
    if distinct_firsts is None:
        distinct_firsts = np.unique(first)
    starts = first[order]
    return loop(first, last, size, by_size, interference, size_rank, order, ranks, class_ids,
                class_firsts, class_bounds, class_longest,
                np.searchsorted(distinct_firsts, first), np.searchsorted(distinct_firsts, last, "right"),
                np.int64(len(distinct_firsts)), np.searchsorted(starts, first),
                np.searchsorted(starts, last, "right"), np.int64(alignment))


def _lifetime_classes(first: np.ndarray, last: np.ndarray):
    """`lifetime_classes` as flat arrays: the records class after class (each class by
    first operator), their first operators, where each class begins, its longest lifetime."""
    classes = lifetime_classes(first, last)
    class_ids = np.concatenate([c[0] for c in classes]).astype(np.int64)
    class_firsts = np.concatenate([c[1] for c in classes]).astype(np.int64)
    class_bounds = np.zeros(len(classes) + 1, np.int64)
    class_bounds[1:] = np.cumsum([len(c[0]) for c in classes])
    class_longest = np.array([c[2] for c in classes], np.int64)
    return class_ids, class_firsts, class_bounds, class_longest


def lifetime_classes(first: np.ndarray, last: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """The records split by lifetime, in classes a factor of 8 apart: (the class's records in
    first-operator order, their first operators, its longest lifetime). The kernel looks back
    into each class by its own longest lifetime only, so one record alive through the whole
    model does not make every query slice every record."""
    by_first = np.argsort(first, kind="stable")
    sorted_first = first[by_first]
    span = (last - first)[by_first]
    lifetime_class = np.zeros(len(span), np.int64)
    long = span > 0
    lifetime_class[long] = (np.floor(np.log2(span[long])).astype(np.int64) + 1) // 3
    classes = []
    for c in np.unique(lifetime_class):
        where = lifetime_class == c
        classes.append((by_first[where], sorted_first[where], int(span[where].max())))
    return classes



def _meeting_counts(own_first: np.ndarray, own_last: np.ndarray) -> np.ndarray:
    """For each record, how many others are alive at some common operator: those that start at
    or before its last operator, less those that end before its first (and itself)."""
    firsts, lasts = np.sort(own_first), np.sort(own_last)
    # Others that start at or before the record's last op and end at or after its first op.
    started = np.searchsorted(firsts, own_last, side="right")
    ended_before = np.searchsorted(lasts, own_first, side="left")
    return started - ended_before - 1
