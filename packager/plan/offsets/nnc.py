"""The NNC allocation graph of libccv (docs: "The NNC Tensor Allocation Algorithm").

Two structures:
- the interference graph: records that are alive at a common operator interfere and may not
  overlap; non-interfering records are ordered in time (one ends before the other starts);
- the allocation graph: a DAG from a source (the start of the buffer) to a sink (the buffer once
  freed) whose edge (u, v) says "these bytes, last used by u, are next used by v"; its weight is
  the space available between the two ends. A record may go onto an edge when it comes after u
  and before v in time (it then interferes with neither) and fits in the weight.

The loop: among the records not yet placed, take those of the largest size, most interfering
(with unplaced records) first. For each, look for an edge it fits, the one with the tightest time
window around it (edges from the source or to the sink last, as libccv's hop count does), then the
least weight, then the lowest offset. The first record that finds one forms a tuple with up to two
more unplaced records that fit the same edge and interfere with none of the tuple (largest first,
then most interfering): they share one slot (the same offset) of the tuple's largest size, and
the edges are rewired as libccv does: the source of the edge feeds each tuple member the bytes no
earlier member took, each member feeds the later members what they share, and the rest flows on
to the edge's end. When no record of the largest size fits any edge, the first of them (with its
partners) opens a new slot on top of the buffer, between source and sink.

A record that did not fit any edge cannot fit later either until a new slot opens (rewiring only
narrows edges in time and weight), so it is skipped until then, as libccv's
`tensor_block_cannot_insert` does.

Simplifications, against libccv:
- each edge carries its byte range (libccv's allocator also keeps the offset on the edge, in the
  edge's second channel), so a node's offset is read off its incoming edges rather than computed
  as a longest path from the source;
- all slots share one buffer (libccv opens a separate buffer per new group; the offsets here are
  those buffers stacked end to end);
- the time order between records comes from their intervals rather than from the graph's
  execution dependencies, so "hops" become operator distances;
- loops (libccv unrolls them into multi-view tensors so loop-carried tensors can share memory) are
  out of scope: records come from one straight-line schedule; sub-graphs are planned on their own.

`plan` below is the algorithm as written, every choice a scan over the records or the edges
(about quadratic: 0.4-0.7 s of CPU at 1,000 records, 2.0-3.5 s at 2,000, 8.5-18 s at 4,000 on
the synthetic shapes and perfect packings: `python -m benchmarks.bench_nnc --sizes
1000,2000,4000 --shapes chain,residual,branching,transformer,perfect`). From twice
`kernels.COMPILE_FROM` records on (`_nnc_kernel.COMPILE_TIMES`: its first compile takes 14-18 s) it
hands the work to its kernel, `kernels.nnc.run`, compiled: the same choices with indexes over
int64 arrays (`_nnc_kernel.py` builds its inputs), the same plans, in milliseconds.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Sequence

from packager.plan.offsets import _nnc_kernel
from packager.plan.records import OffsetPlan, UsageRecord, align_up

NAME = "nnc"

MAX_TUPLE = 3  # records sharing one slot
SOURCE, SINK = "source", "sink"  # the ends of the allocation graph


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    """The loop of the docstring above, over the records of non-zero size."""
    alignment = max(1, alignment)
    kernel = _nnc_kernel.compiled_loop(records, alignment)
    if kernel is not None:
        return _nnc_kernel.plan_by_loop(*kernel, alignment)
    first = [r.first_op for r in records]
    last = [r.last_op for r in records]
    size = [r.size for r in records]
    offsets = [0] * len(records)  # zero-size records take no space and keep offset 0
    unplaced = {i for i, r in enumerate(records) if r.size > 0}

    def meet(i: int, j: int) -> bool:
        return first[i] <= last[j] and first[j] <= last[i]

    # The unplaced records each one meets: all but those ending before it starts and those
    # starting after it ends (counted once, then kept as records are placed).
    lasts, firsts = sorted(last[i] for i in unplaced), sorted(first[i] for i in unplaced)
    interference = {i: len(unplaced) - 1 - bisect_left(lasts, first[i])
                    - (len(unplaced) - bisect_right(firsts, last[i])) for i in unplaced}

    def rank(i: int) -> tuple:  # largest, then most interfering, then lowest position
        return (size[i], interference[i], -i)

    # An edge: [before (a record whose last operator it follows, or SOURCE), after (a record
    # whose first operator it precedes, or SINK), lo, hi].
    edges: list[list] = []

    def window(before, after):  # the operators strictly between the edge's ends (None: no end)
        return (-1 if before == SOURCE else last[before]), (None if after == SINK else first[after])

    def fits(edge, i, s):
        b, a = window(edge[0], edge[1])
        inside = b < first[i] and (a is None or a > last[i])
        return inside and align_up(edge[2], alignment) + s <= edge[3]

    def edge_key(k, i):  # ends at the source or sink last, then the time gap, weight, offset
        edge = edges[k]
        b, a = window(edge[0], edge[1])
        dummy = (edge[0] == SOURCE) + (edge[1] == SINK)
        hops = (0 if edge[0] == SOURCE else first[i] - b) + (0 if edge[1] == SINK else a - last[i])
        return (dummy, hops, edge[3] - edge[2], edge[2], k)

    def add(before, after, lo, hi):
        if hi > lo:
            edges.append([before, after, lo, hi])

    cannot_insert = set()
    top = 0
    while unplaced:
        largest = max(size[i] for i in unplaced)
        tries = sorted((i for i in unplaced if size[i] == largest and i not in cannot_insert),
                       key=lambda i: (-interference[i], i))
        chosen, edge = None, None
        for i in tries:
            fitting = [k for k in range(len(edges)) if fits(edges[k], i, largest)]
            if fitting:
                chosen, edge = i, min(fitting, key=lambda k: edge_key(k, i))
                break
            cannot_insert.add(i)
        if edge is None:  # a new slot on top of the buffer, for the best unplaced record
            chosen = max(unplaced, key=rank)
            before, after, at = SOURCE, SINK, align_up(top, alignment)
        else:
            before, after = edges[edge][0], edges[edge][1]
            at = align_up(edges[edge][2], alignment)
        start, end = window(before, after)
        members = [chosen]
        while len(members) < MAX_TUPLE:  # up to two partners in the same slot, best first
            partners = [j for j in unplaced if j not in members and size[j] <= size[chosen]
                        and first[j] > start and (end is None or last[j] < end)
                        and not any(meet(j, m) for m in members)]
            if not partners:
                break
            members.append(max(partners, key=rank))
        members.sort(key=lambda i: first[i])
        slot = max(size[i] for i in members)
        for i in members:
            offsets[i] = at
            unplaced.remove(i)
        for i in members:
            for j in unplaced:
                if meet(i, j):
                    interference[j] -= 1
        if edge is None:
            top = at + slot
            cannot_insert = {i for i in cannot_insert
                             if size[i] > slot or any(meet(i, m) for m in members)}
        else:
            edges[edge][2] = at + slot
            if edges[edge][2] == edges[edge][3]:
                del edges[edge]  # full: it fits nothing any more (the others keep their order)
        # The edge's start feeds each member the bytes no earlier member took; each member feeds
        # the later members what they share; the rest flows on to the edge's end.
        taken = 0
        for i in members:
            if size[i] > taken:
                add(before, i, at + taken, at + size[i])
                taken = size[i]
        for k, i in enumerate(members):
            passed = 0
            for j in members[k + 1:]:
                shared = min(size[i], size[j])
                if shared > passed:
                    add(i, j, at + passed, at + shared)
                    passed = shared
                if passed == size[i]:
                    break
            if size[i] > passed:
                add(i, after, at + passed, at + size[i])
    arena = max((offsets[i] + size[i] for i in range(len(records)) if size[i] > 0), default=0)
    return OffsetPlan(NAME, tuple(offsets), arena, alignment)
