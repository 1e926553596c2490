"""The TFLite GPU delegate's MINCOSTFLOW, with the delegate's own graph and search, so its plan.

The graph (records in the order given, which the delegate's callers sort by first task): a
source, a sink, and two vertices per record, one on the left ("the object this record passes
on") and one on the right ("the object this record takes"). Each record i gets, in this order:
an edge source -> left i, an edge right i -> sink, an edge source -> right i costing its size (a
new object), and one edge left j -> right i for every record j that ended before i starts, in the
order they ended (last task, then record), costing the growth max(0, size i - size j). Every
edge has capacity 1 and a reverse edge.

The flow: repeatedly, the cheapest path from source to sink over edges with capacity left, by
the delegate's search (Bellman-Ford in rounds: every vertex improved in a round is visited in the
next, in the order it was improved, each edge in the order it was added), then one unit along it.
Which of several cheapest paths it finds decides the plan, so the order above is the rule.
The objects: for each record, in order, whose new-object edge carries flow, an object holding it
and, depth first along the edges left j -> right i that carry flow, the records that reuse it;
its size is their largest.

The search visits every edge many times: the delegate's own code takes over 13 s on 1,000
records, and this Python form far longer (minutes), so it serves a few hundred records.
min_cost_flow.py is ours: another optimal flow of the same cost, found in near n log n per step.
"""

from __future__ import annotations

import heapq
from typing import Sequence

from packager.errors import SolverLimitError
from packager.plan.objects._common import make_plan
from packager.plan.records import ObjectPlan, UsageRecord

NAME = "MINCOSTFLOW"
MAX_RECORDS = 400  # about a minute here; the delegate's own code takes 20 s at 1,000


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    if len(records) > MAX_RECORDS:
        raise SolverLimitError(f"{NAME} (the GPU delegate's search, reproduced) takes at most {MAX_RECORDS} "
                               f"records, not {len(records):,}: min_cost_flow finds a flow of the same cost")
    graph = _Graph(records)
    while graph.augment():
        pass
    return graph.assignment()


class _Graph:
    def __init__(self, records: Sequence[UsageRecord]) -> None:
        n = len(records)
        self.records = records
        self.n = n
        self.source, self.sink = 2 * n, 2 * n + 1
        self.dst: list[int] = []
        self.cap: list[int] = []
        self.cost: list[int] = []
        self.out: list[list[int]] = [[] for _ in range(2 * n + 2)]
        ended: list[int] = []  # records that have ended, in the order they ended
        held: list[tuple[int, int]] = []  # heap of (last_op, record)
        for i, record in enumerate(records):
            while held and held[0][0] < record.first_op:
                ended.append(heapq.heappop(held)[1])
            heapq.heappush(held, (record.last_op, i))
            self._edge(self.source, i, 0)
            self._edge(n + i, self.sink, 0)
            self._edge(self.source, n + i, record.size)
            for j in ended:
                self._edge(j, n + i, max(0, record.size - records[j].size))

    def _edge(self, src: int, dst: int, cost: int) -> None:
        """An edge of capacity 1 and its reverse: edge k's reverse is k ^ 1."""
        for a, b, c, w in ((src, dst, 1, cost), (dst, src, 0, -cost)):
            self.out[a].append(len(self.dst))
            self.dst.append(b)
            self.cap.append(c)
            self.cost.append(w)

    def augment(self) -> bool:
        """One unit of flow along the cheapest path the delegate's search finds; False when the
        sink cannot be reached."""
        size = 2 * self.n + 2
        dist = [None] * size
        via = [0] * size  # the edge each vertex was last improved by
        dist[self.source] = 0
        current, rnd = [self.source], 0
        queued_in = [-1] * size  # the round a vertex was last queued for
        dst, cap, cost, out = self.dst, self.cap, self.cost, self.out
        while current:
            rnd += 1
            following = []
            for v in current:
                dv = dist[v]
                for e in out[v]:
                    if cap[e] > 0:
                        u = dst[e]
                        d = dv + cost[e]
                        if dist[u] is None or d < dist[u]:
                            dist[u] = d
                            via[u] = e
                            if queued_in[u] != rnd:
                                following.append(u)
                                queued_in[u] = rnd
            current = following
        if dist[self.sink] is None:
            return False
        v = self.sink
        while v != self.source:
            e = via[v]
            cap[e] -= 1
            cap[e ^ 1] += 1
            v = dst[e ^ 1]
        return True

    def assignment(self) -> ObjectPlan:
        n = self.n
        assignment = [0] * n
        sizes: list[int] = []
        done = [False] * n
        for e in self.out[self.source]:
            right = self.dst[e]
            if self.cap[e] == 0 and n <= right < 2 * n:
                sizes.append(self._chain(right - n, len(sizes), assignment, done))
        return make_plan(NAME, assignment, sizes)

    def _chain(self, first: int, obj: int, assignment: list[int], done: list[bool]) -> int:
        """Put `first` and the records reusing its object, one after another, into object `obj`;
        return the largest size among them. A record passes its object on at most once (one unit
        flows into its left vertex), so the records form a chain."""
        n, largest, rec = self.n, 0, first
        while rec is not None and not done[rec]:
            done[rec] = True
            assignment[rec] = obj
            largest = max(largest, self.records[rec].size)
            rec = next((self.dst[e] - n for e in self.out[rec]
                        if self.cap[e] == 0 and n <= self.dst[e] < 2 * n), None)
        return largest
