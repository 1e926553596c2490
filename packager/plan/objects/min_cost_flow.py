"""Min-cost flow (Lee et al. 2019): a bipartite graph where each record needs one unit of flow,
either from "a new object" (cost: its size) or from an earlier record that has ended, whose object
it then reuses (cost: the size increase, max(0, its size - that record's size)); every record passes
its object on at most once. The min-cost flow is found by successive shortest paths, written here as
the shortest-augmenting-path assignment algorithm with potentials: one Dijkstra per record over the
columns "reuse the object of record i", plus its own "new object" column. Chains of reuse are the
objects; an object's size is the largest record of its chain.

plan() and _reused_records below are the algorithm, each Dijkstra step a few numpy operations over
the columns: what runs below kernels.COMPILE_FROM records (every real model; 1,000 records take
0.1-0.3 s). From kernels.COMPILE_FROM records on, the same steps with the same ties run as one
compiled loop (kernels/min_cost_flow.py), so the same plans: 3,000 records 0.02-0.07 s, 10,000
0.15-1.0 s, 20,000 0.5-4.8 s (benchmarks/bench_min_cost_flow.py). Its work grows about as the
square of the count, so it serves up to LOOP_RECORDS records.

Above LOOP_RECORDS the same successive shortest paths run over a range tree of the columns
(kernels/min_cost_flow_range.py): each Dijkstra run visits only the columns it settles. Both
solvers are exact, so their flow costs are equal; they break ties otherwise, so the plans may
differ. At 100,000 records of benchmarks/synthetic.py's shapes it takes 0.5-5 s; its work is
budgeted (WORK_LIMIT), and past the budget, or above MAX_RECORDS records, it refuses
(SolverLimitError) rather than hand in another strategy's plan under its name; `best` then lists
it as left out. It refuses as soon as its work is on a pace to pass the budget (EARLY_PART): on
random records of 100,000 after about 1.5 s, not after the whole budget (12 s).
"""
from __future__ import annotations

import heapq
from typing import Sequence

import numpy as np

from packager.errors import SolverLimitError
from packager.plan import kernels
from packager.plan.kernels import min_cost_flow as loop_kernel, min_cost_flow_range as range_kernel
from packager.plan.objects._common import by_first_op, make_plan
from packager.plan.records import ObjectPlan, UsageRecord

NAME = "min_cost_flow"
LOOP_RECORDS = 20_000  # up to here the loop (its plans pinned); above, the range-tree solver (compiled)
MAX_RECORDS = 250_000


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    if len(records) > MAX_RECORDS:
        raise SolverLimitError(f"{NAME} takes at most {MAX_RECORDS:,} records, not {len(records):,} "
                               "(its solve grows faster than the count): choose a greedy strategy")
    if len(records) > LOOP_RECORDS:
        return plan_of_chains(records, _range_reused_records(records))
    if kernels.use_kernel(len(records)):
        return plan_of_chains(records, _compiled_reused_records(records, _Graph(records)))
    return plan_of_chains(records, _reused_records(records, _Graph(records)))


def plan_of_chains(records: Sequence[UsageRecord], reused: Sequence[int]) -> ObjectPlan:
    """The plan whose objects are the chains of reuse: record j takes the object of reused[j]."""
    assignment = [0] * len(records)
    sizes: list[int] = []
    # A reused record ended before its successor started, so it is met first in this order.
    for pos in by_first_op(records):
        if reused[pos] < 0:
            assignment[pos] = len(sizes)
            sizes.append(records[pos].size)
        else:
            assignment[pos] = assignment[reused[pos]]
            sizes[assignment[pos]] = max(sizes[assignment[pos]], records[pos].size)
    return make_plan(NAME, assignment, sizes)


def _reused_records(records: Sequence[UsageRecord], graph: "_Graph") -> list[int]:
    """For each record, the earlier record whose object it takes over, or -1 for a new object.

    Rows are records needing an object; column c means "reuse the object of the c-th record in
    order of last_op", and each row also has a private "new object" column. Potentials keep the
    reduced costs non-negative, so each row joins by one Dijkstra run (successive shortest paths).
    Rows join in order of first_op, so every row met during a run may reuse only records that ended
    before the joining row starts: a prefix of the columns. A row that took a new object is never
    revisited (only its own row reaches that column), so the private columns need no arrays and
    their potentials stay 0.
    """
    owner = np.full(len(records), -1, dtype=np.int64)  # the row holding each column
    held = [-1] * len(records)  # the column each row holds; -1 for none or a new object
    for root in by_first_op(records):
        search = _Search(int(graph.usable[root]))
        rows, reach = np.array([root]), 0.0
        while True:
            search.relax(graph, rows, reach)
            nearest, plateau = search.nearest()
            free = plateau[owner[plateau] < 0]
            if len(free) and nearest <= search.new_cost:
                sink_row, sink_col, final = int(search.came_from[free[0]]), int(free[0]), nearest
                break
            if search.new_cost <= nearest:
                sink_row, sink_col, final = search.new_row, -1, search.new_cost
                break
            # Dijkstra may settle every column at the least distance at once; with integer sizes
            # such ties are common and this saves most of the steps.
            search.settle(plateau, nearest)
            rows, reach = owner[plateau], nearest
        graph.row_potential[root] += final
        settled, settled_dist = search.settled()
        graph.row_potential[owner[settled]] += final - settled_dist
        graph.col_potential[settled] -= final - settled_dist
        # Flip the path: each row on it takes the column that reached it from the next one.
        row, col = sink_row, sink_col
        while True:
            previous = held[row]
            held[row] = col
            if col >= 0:
                owner[col] = row
            if row == root:
                break
            row, col = int(search.came_from[previous]), previous
    return [graph.by_last[c] if c >= 0 else -1 for c in held]


class _Graph:
    """Sizes, usable column prefixes and potentials of the assignment problem."""

    def __init__(self, records: Sequence[UsageRecord]) -> None:
        n = len(records)
        self.by_last = sorted(range(n), key=lambda i: (records[i].last_op, i))  # column -> record
        col_last = np.array([records[i].last_op for i in self.by_last], dtype=np.int64)
        # Sizes as floats so that inf can mark a missing edge; integers stay exact below 2**53.
        self.col_size = np.array([records[i].size for i in self.by_last], dtype=np.float64)
        self.row_size = np.array([r.size for r in records], dtype=np.float64)
        # usable[row]: the columns [0, usable[row]) ended before the row starts
        self.usable = np.searchsorted(col_last, [r.first_op for r in records], side="left")
        self.row_potential = np.zeros(n)
        self.col_potential = np.zeros(n)

    def reduced_costs(self, rows: np.ndarray, reach: float, width: int) -> np.ndarray:
        """Distances through each of `rows` (reached at `reach`) to the columns [0, width)."""
        cost = (np.maximum(self.row_size[rows][:, None] - self.col_size[None, :width], 0.0)
                + (reach - self.row_potential[rows])[:, None] - self.col_potential[None, :width])
        cost[np.arange(width)[None, :] >= self.usable[rows][:, None]] = np.inf
        return cost


class _Search:
    """One Dijkstra run over the reuse columns [0, width), plus the private "new object" columns."""

    _CHUNK = 128  # rows relaxed together, to bound the cost matrix in memory

    def __init__(self, width: int) -> None:
        self.dist = np.full(width, np.inf)  # reduced distance of each unsettled column
        self.came_from = np.full(width, -1, dtype=np.int64)  # the row that reached each column
        self.is_settled = np.zeros(width, dtype=bool)
        self._settled: list[np.ndarray] = []
        self._settled_dist: list[np.ndarray] = []
        self.new_cost, self.new_row = np.inf, -1  # the cheapest "new object" column reached

    def relax(self, graph: _Graph, rows: np.ndarray, reach: float) -> None:
        """Update the distances through `rows`, all reached at distance `reach`."""
        new_costs = reach + graph.row_size[rows] - graph.row_potential[rows]
        best = int(np.argmin(new_costs))
        if new_costs[best] < self.new_cost:
            self.new_cost, self.new_row = float(new_costs[best]), int(rows[best])
        width = len(self.dist)
        if not width:
            return
        for start in range(0, len(rows), self._CHUNK):
            chunk = rows[start:start + self._CHUNK]
            cost = graph.reduced_costs(chunk, reach, width)
            via = np.argmin(cost, axis=0)
            reduced = cost[via, np.arange(width)]
            closer = (reduced < self.dist) & ~self.is_settled
            self.dist[closer] = reduced[closer]
            self.came_from[closer] = chunk[via[closer]]

    def nearest(self) -> tuple[float, np.ndarray]:
        """The least distance of an unsettled column, and every column at it."""
        least = float(self.dist.min()) if len(self.dist) else np.inf
        if least == np.inf:
            return least, np.zeros(0, dtype=np.int64)
        return least, np.flatnonzero(self.dist == least)

    def settle(self, cols: np.ndarray, dist: float) -> None:
        self.is_settled[cols] = True
        self.dist[cols] = np.inf
        self._settled.append(cols)
        self._settled_dist.append(np.full(len(cols), dist))

    def settled(self) -> tuple[np.ndarray, np.ndarray]:
        """The settled columns and their distances."""
        if not self._settled:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        return np.concatenate(self._settled), np.concatenate(self._settled_dist)


# ---------------------------------------------------------------- the compiled solvers (large inputs)

# Tree steps (a node met by a query or an update) the range-tree solver may take, both solves
# together (see _range_reused_records): about 13 s of CPU. At 100,000 records the shapes of
# benchmarks/synthetic.py take 3.6-77 million; random records 30,000 records about 190 million.
WORK_LIMIT = 200_000_000
# Steps a record that the first solve (rows largest first) may take: 770 on branching graphs of
# 100,000 records, under 40 on the other shapes.
SIZE_ORDER_WORK = 1_000
# Both solves stop early when their work is on a pace to pass its budget (a refusal within about a
# second, not after the whole budget): the first (rows largest first) once the first 1/EARLY_PART
# of its rows take more than 1/EARLY_SHARE of its budget (on branching graphs of 20,000-100,000
# records they take 1/50-1/30, on the other shapes 1/900, on random records of 30,000 or more
# over 1/9); the second (order of first_op), from 1/EARLY_PART of its rows on, once its steps so
# far times the count of rows over the rows joined pass its budget (its runs grow with the rows
# before them).
EARLY_PART = 32
EARLY_SHARE = 16


def _compiled_reused_records(records: Sequence[UsageRecord], graph: "_Graph", kernel=None) -> list[int]:
    """_reused_records by the compiled loop (or by `kernel`, the same loop uncompiled): the same
    predecessors, step for step."""
    if kernel is None:
        kernel = kernels.compiled(loop_kernel).assign
    held = kernel(np.array(by_first_op(records), dtype=np.int64), graph.usable.astype(np.int64),
                  graph.row_size, graph.col_size)
    return [graph.by_last[c] if c >= 0 else -1 for c in held.tolist()]


def _range_reused_records(records: Sequence[UsageRecord], kernel=None,
                          work_limit: int | None = None) -> list[int]:
    """_reused_records by the range-tree solver (or by `kernel`, the same solver uncompiled): the
    same optimal flow cost as the loop, ties broken otherwise.

    Records of size 0 stay out of the solve: as rows they cost nothing whatever they take, and as
    columns they save nothing (reusing one costs a new object's price), so the least flow cost
    is the same without them. Each takes over the object of an earlier record of size 0 that has
    ended, where one is free (_chain_empty_records), so they add as few objects as can be.

    Successive shortest paths may add the rows in any order. Largest first, each row joins as the
    smallest so far, to which every column at least its size is free: on the shapes of real graphs
    its runs settle few columns. On records of unrelated sizes and lifetimes that order settles
    more than order of first_op does, so past SIZE_ORDER_WORK steps a record the solve starts
    again in that order, with what remains of the budget."""
    if kernel is None:
        kernel = kernels.compiled(range_kernel).assign
    sized = [i for i, r in enumerate(records) if r.size > 0]
    reused = _chain_empty_records(records)
    solved = [records[i] for i in sized]
    graph = _Graph(solved)
    limit = WORK_LIMIT if work_limit is None else work_limit
    sizes = np.array([r.size for r in solved], dtype=np.int64)
    first = by_first_op(solved)
    by_size = np.array(first, dtype=np.int64)[np.argsort(-sizes[first], kind="stable")]
    args = (graph.usable.astype(np.int64), sizes,
            np.array([solved[i].size for i in graph.by_last], dtype=np.int64))
    trial = min(limit, SIZE_ORDER_WORK * max(1, len(solved)))
    held, work = kernel(by_size, *args, len(solved) // EARLY_PART, trial // EARLY_SHARE,
                        len(solved) + 1, trial)
    if work < 0:
        held, work = kernel(np.array(first, dtype=np.int64), *args, 0, 0,
                            max(1, len(solved) // EARLY_PART), limit - trial)
    if work < 0:
        raise SolverLimitError(f"{NAME} would need more than its work budget ({limit:,} steps) on "
                               f"{len(records):,} records: choose a greedy strategy")
    for row, c in zip(sized, held.tolist()):
        reused[row] = sized[graph.by_last[c]] if c >= 0 else -1
    return reused


def _chain_empty_records(records: Sequence[UsageRecord]) -> list[int]:
    """For each record of size 0, an earlier one of size 0 that ended before it starts, each taken
    over at most once (the one that ended first), or -1; -1 for every other record."""
    reused = [-1] * len(records)
    ended: list[tuple[int, int]] = []  # (last_op, position) of the records whose object is free
    for pos in by_first_op(records):
        if records[pos].size:
            continue
        if ended and ended[0][0] < records[pos].first_op:
            reused[pos] = heapq.heappop(ended)[1]
        heapq.heappush(ended, (records[pos].last_op, pos))
    return reused
