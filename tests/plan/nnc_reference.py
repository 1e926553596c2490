"""NNC's allocation graph written straight from `packager.plan.offsets.nnc`'s docstring, with no
index of any kind: every choice is a scan over all records or all edges, every count is
recounted when it is read. Slow (cubic), for the tests only: the module's loops (Python and
compiled) must give the plans this gives."""

from __future__ import annotations

from typing import Sequence

from packager.plan.records import UsageRecord, align_up

SOURCE, SINK = "source", "sink"


def plan_offsets(records: Sequence[UsageRecord], alignment: int = 1) -> tuple[int, ...]:
    alignment = max(1, alignment)
    first = [r.first_op for r in records]
    last = [r.last_op for r in records]
    size = [r.size for r in records]
    offsets = [0] * len(records)
    unplaced = [i for i, r in enumerate(records) if r.size > 0]

    def meet(i: int, j: int) -> bool:
        return first[i] <= last[j] and first[j] <= last[i]

    def interference(i: int) -> int:  # the unplaced records it meets
        return sum(1 for j in unplaced if j != i and meet(i, j))

    def rank(i: int) -> tuple:  # largest, then most interfering, then lowest position
        return (size[i], interference(i), -i)

    # An edge: [before (a record whose last operator it follows, or SOURCE), after (a record whose
    # first operator it precedes, or SINK), lo, hi]; its id is its place in the list.
    edges: list[list] = []

    def ends(edge: list) -> tuple:
        b = -1 if edge[0] == SOURCE else last[edge[0]]
        a = None if edge[1] == SINK else first[edge[1]]
        return b, a

    def fits(edge: list, i: int, s: int) -> bool:
        b, a = ends(edge)
        inside = b < first[i] and (a is None or a > last[i])
        return inside and align_up(edge[2], alignment) + s <= edge[3]

    def edge_key(k: int, i: int) -> tuple:
        edge = edges[k]
        b, a = ends(edge)
        dummy = (edge[0] == SOURCE) + (edge[1] == SINK)
        hops = (0 if edge[0] == SOURCE else first[i] - b) + (0 if edge[1] == SINK else a - last[i])
        return (dummy, hops, edge[3] - edge[2], edge[2], k)

    def add(before, after, lo: int, hi: int) -> None:
        if hi > lo:
            edges.append([before, after, lo, hi])

    cannot_insert: set[int] = set()
    top = 0
    while unplaced:
        largest = max(size[i] for i in unplaced)
        tries = sorted((i for i in unplaced if size[i] == largest and i not in cannot_insert),
                       key=lambda i: (-interference(i), i))
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
        window_start = -1 if before == SOURCE else last[before]
        window_end = None if after == SINK else first[after]
        members = [chosen]
        while len(members) < 3:
            partners = [j for j in unplaced if j not in members and size[j] <= size[chosen]
                        and first[j] > window_start and (window_end is None or last[j] < window_end)
                        and not any(meet(j, m) for m in members)]
            if not partners:
                break
            members.append(max(partners, key=rank))
        members.sort(key=lambda i: first[i])
        slot = max(size[i] for i in members)
        for i in members:
            offsets[i] = at
            unplaced.remove(i)
        if edge is None:
            top = at + slot
            cannot_insert = {i for i in cannot_insert
                             if size[i] > slot or any(meet(i, m) for m in members)}
        else:
            edges[edge][2] = at + slot
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
    return tuple(offsets)
