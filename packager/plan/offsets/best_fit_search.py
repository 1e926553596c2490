"""Skyline best-fit search: the strip-packing best-fit heuristic turned into a bounded tree search.

The heuristic (Sekiyama et al. 2018) keeps a skyline over time: the height of the placed records
at each instant. It takes the lowest segment of the skyline and puts there a record whose lifetime
fits inside the segment; when no record fits, it raises the segment to its lower neighbour,
wasting that space. Every record then rests on the records below it, as in MiniMalloc's
"canonical" solutions, so the search never looks at offsets that leave a record floating.

Each choice at the lowest segment becomes a branch:
- records that start where the segment starts come first, and when there are any, only they are
  tried: unless that instant is wasted, what covers it must start there, and trying records further
  right first mostly reaches the same states in another order (this drops some packings: the
  search is a heuristic, not a complete method);
- then records that also end where the segment ends, then longer lifetimes, then larger sizes;
- raising the segment (waste) is the last branch.

Pruning with a capacity `cap` (one byte below the best arena so far):
- at every instant, the skyline height plus the sizes still to place there must fit under `cap`
  (placing a record at its segment's height leaves that sum unchanged, so only a raise is checked);
- the lowest segment, up to its lower wall, can only be filled by records that fit inside it in
  time; where those cannot fill it, the shortfall is waste that must fit under `cap` too.

Depth-first search with chronological backtracking gets stuck in the first bad subtree, so the
driver restarts: each descent may expand NODES_PER_RECORD nodes per record; half the descents
follow the best solution's choices down to a random depth and then deviate from it (a large
neighbourhood around the incumbent), the others start afresh; both shuffle the candidates a little
(seeded). A descent that succeeds lowers `cap`. The search stops at the lower bound, the node
budget or the time budget. A node is one placement or one raise. The first (greedy) descent has
no cap and never backtracks; it always runs to the end, whatever the budgets, so that there is a
plan: it needs only the first candidate at each step, and skyline_greedy.py finds it by index (the
same choices in n log n: about 0.15 s for 10,000 records here, 1.4-3.4 s for 100,000).

Time is compressed to the ranks of the records' interval ends, so costs depend on the number of
records, not on operator numbers (MiniMalloc's times run to a million). Complete search is out of
reach in Python at these sizes; this finds plans within a few percent of the optimum on the
MiniMalloc instances, not proofs.
"""

from __future__ import annotations

import random
import time
from itertools import chain
from heapq import heappop, heappush
from typing import Callable, Sequence

from packager.plan.offsets.skyline_greedy import greedy_descent
from packager.plan.records import OffsetPlan, UsageRecord, align_up, arena_of

NAME = "best_fit_search"

# Nodes one descent may expand, per record: enough to back out of a few bad choices near the
# leaves, few enough that restarts (which are what explore) stay frequent.
NODES_PER_RECORD = 8
# Each adjacent pair of candidates is swapped with this probability (mild: the order stays a guide).
SHUFFLE = 0.3
# Share of descents that follow the incumbent's choices before deviating.
FOLLOW_INCUMBENT = 0.5
# One iteration of the `max_iterations` budget is this many nodes (about 0.1-0.2 ms here).
NODES_PER_ITERATION = 8

RAISE = -1  # the action "raise the segment" (records are numbered from 0)


class SkylineSearch:
    """The records in compressed time, and descents of the search tree over them."""

    def __init__(self, records: Sequence[UsageRecord], alignment: int = 1) -> None:
        self.alignment = max(1, alignment)
        self.ids = [i for i, r in enumerate(records) if r.size > 0]  # zero-size records take no space
        ends = sorted({records[i].first_op for i in self.ids} | {records[i].last_op + 1 for i in self.ids})
        cell = {t: k for k, t in enumerate(ends)}
        self.cells = max(0, len(ends) - 1)
        self.first = [cell[records[i].first_op] for i in self.ids]
        self.last = [cell[records[i].last_op + 1] - 1 for i in self.ids]  # inclusive
        self.size = [records[i].size for i in self.ids]
        # Static part of the candidate order: longer lifetimes, then larger sizes.
        by_preference = sorted(range(len(self.ids)),
                               key=lambda k: (self.first[k] - self.last[k], -self.size[k], k))
        self.by_preference = by_preference
        self.rank = [0] * len(self.ids)
        for position, k in enumerate(by_preference):
            self.rank[k] = position
        self.starting_at: list[list[int]] = [[] for _ in range(self.cells)]
        for k in by_preference:
            self.starting_at[self.first[k]].append(k)
        self.load = [0] * self.cells  # bytes alive in each cell
        for k in range(len(self.ids)):
            for c in range(self.first[k], self.last[k] + 1):
                self.load[c] += self.size[k]
        self._crossing: tuple[list[list[int]], list[list[int]]] | None = None
        self.nodes = 0  # nodes expanded by all descents so far
        self.exhausted = False  # the last descent under a cap searched its whole tree

    def crossing(self) -> tuple[list[list[int]], list[list[int]]]:
        """The records over both cell c - 1 and cell c, for each c: by last cell, and by first
        (built once, for the bounded descents)."""
        if self._crossing is None:
            by_last: list[list[int]] = [[] for _ in range(self.cells)]
            for k in range(len(self.ids)):
                for c in range(self.first[k] + 1, self.last[k] + 1):
                    by_last[c].append(k)
            by_first = [sorted(ks, key=self.first.__getitem__) for ks in by_last]
            for ks in by_last:
                ks.sort(key=self.last.__getitem__)
            self._crossing = by_last, by_first
        return self._crossing

    @property
    def lower_bound(self) -> int:
        return max(self.load, default=0)

    def descend(self, cap: float, node_limit: int, rng: random.Random | None,
                stop: Callable[[], bool] = lambda: False, guide: Sequence[int] = (),
                follow: int = -1) -> tuple[list[int], list[int]] | None:
        """One depth-first descent under `cap`: (offsets of the kept records, actions) or None.

        `rng` None keeps the heuristic's order. `guide` is the action path of an earlier solution:
        frames above depth `follow` try its action first, the frame at `follow` tries it last.
        `stop` is polled every 256 nodes and ends the descent (None) when it says so.
        """
        self.exhausted = False
        if cap == float("inf") and rng is None and follow < 0:
            # The greedy descent (never backtracks): the same choices, found by index.
            offsets, actions, nodes = greedy_descent(self.first, self.last, self.size, self.by_preference,
                                                     self.cells, self.alignment, node_limit, stop)
            self.nodes += nodes
            return None if offsets is None else (offsets, actions)
        n, cells, align = len(self.ids), self.cells, self.alignment
        first, last, size, rank, starting_at = self.first, self.last, self.size, self.rank, self.starting_at
        if n == 0:
            return [], []
        if self.lower_bound > cap:
            return None
        bounded = cap != float("inf")
        crossing_by_last, crossing_by_first = self.crossing() if bounded else ([], [])
        height = [0] * cells
        left = self.load[:]  # bytes still to place in each cell
        placed = [False] * n
        offset = [0] * n
        to_place = n
        nodes = 0
        # The skyline's runs (maximal stretches of cells at one height): run_end[s] is the last
        # cell of the run starting at s, run_start[e] the first of the run ending at e (entries
        # at other cells are stale). The heap holds (height, start) of every run, and stale
        # entries, skipped: its least run is the lowest segment (leftmost on ties), whose end is
        # then at hand, without a walk along the skyline.
        run_end, run_start = [0] * cells, [0] * cells
        run_end[0], run_start[cells - 1] = cells - 1, 0
        lowest = [(0, 0)]
        # frames: [height, start, end, actions, next action, applied action, the run before the
        # segment's start, the run after's end, the lower wall]
        stack: list[list] = []

        def raise_cells(h: int, a: int, z: int, x: int, y: int, level: int) -> None:
            """Raise cells x..y of the segment a..z (at h) to `level`: split the segment's run
            around them, joining them with a neighbouring run at `level`."""
            height[x:y + 1] = [level] * (y + 1 - x)
            s = run_start[a - 1] if x == a and a > 0 and height[a - 1] == level else x
            e = run_end[z + 1] if y == z and z + 1 < cells and height[z + 1] == level else y
            run_end[s], run_start[e] = e, s
            if s == x:  # a new run (a run joined keeps its heap entry)
                heappush(lowest, (level, s))
            if x > a:
                run_end[a], run_start[x - 1] = x - 1, a
            if y < z:
                run_end[y + 1], run_start[z] = z, y + 1
                heappush(lowest, (h, y + 1))

        def lower_cells(frame: list, x: int, y: int) -> None:
            """Undo the frame's raise of cells x..y: its segment is one run again, between its
            old neighbours."""
            h, a, z, before, after = frame[0], frame[1], frame[2], frame[6], frame[7]
            if x == a:  # a starts a run at h again
                heappush(lowest, (h, a))
            if y == z and z + 1 < cells and height[z + 1] == height[z]:
                heappush(lowest, (height[z + 1], z + 1))  # the run after, which the cells had joined
            height[x:y + 1] = [h] * (y + 1 - x)
            run_end[a], run_start[z] = z, a
            if a > 0:
                run_end[before], run_start[a - 1] = a - 1, before
            if z + 1 < cells:
                run_end[z + 1], run_start[after] = after, z + 1

        def open_frame(depth: int) -> list:
            """The frame at the lowest segment: its actions in the order they are tried (none
            when the cap rules the segment out)."""
            while True:
                h, a = lowest[0]  # a run starting at a, at height h, if the entry is not stale
                if height[a] == h and (a == 0 or height[a - 1] != h):
                    break
                heappop(lowest)
            z = run_end[a]
            before = run_start[a - 1] if a > 0 else -1
            after = run_end[z + 1] if z + 1 < cells else -1
            # The lower wall: the segment's raise lifts it to there (None: no wall to rise to).
            wall = height[a - 1] if a > 0 else None
            if z + 1 < cells and (wall is None or height[z + 1] < wall):
                wall = height[z + 1]
            if bounded and wall is not None and not fillable(h, a, z, wall - h):
                return [h, a, z, [], 0, None, before, after, wall]
            cands = [k for k in starting_at[a] if not placed[k] and last[k] <= z]  # snug
            if not cands:
                cands = inside(a, z)
            if len(cands) > 1:  # (mostly there is one, or none)
                cands.sort(key=lambda k: (last[k] != z, rank[k]))
            if rng is not None and depth > follow:
                for j in range(len(cands) - 1):
                    if rng.random() < SHUFFLE:
                        cands[j], cands[j + 1] = cands[j + 1], cands[j]
            actions = cands + [RAISE] if wall is not None else cands
            if depth <= follow and depth < len(guide) and guide[depth] in actions:
                actions.remove(guide[depth])
                actions.insert(0 if depth < follow else len(actions), guide[depth])
            return [h, a, z, actions, 0, None, before, after, wall]

        def inside(a: int, z: int) -> list[int]:
            """The unplaced records whose lifetime lies within cells [a, z]."""
            return [k for c in range(a, z + 1) for k in starting_at[c] if not placed[k] and last[k] <= z]

        def fillable(h: int, a: int, z: int, depth: int) -> bool:
            """False when the waste the segment [a, z] is bound to keep breaks the cap.

            Filling a cell c up to the lower wall (`depth` above h) with the records inside the
            segment, each counted up to `depth`, leaves `short` bytes unfilled; the cap breaks
            where h + left[c] + short > cap. A record inside as tall as `depth` fills c alone;
            otherwise the records inside count whole, and left[c] minus them is `outside`: the
            unplaced records over c that cross the segment's edges. So the cap breaks exactly
            where the records inside stay under `depth` and h + depth + outside > cap: only
            cells under a record crossing an edge can break it, and only those are looked at;
            none can when the crossing records together stay under cap - h - depth (`spare`),
            which holds in particular when all the bytes still to place over the two wall cells
            do (the usual case, told without listing any record).
            """
            spare = cap - h - depth
            if spare >= 0 and (left[a - 1] if a > 0 else 0) + (left[z + 1] if z + 1 < cells else 0) <= spare:
                return True
            # The unplaced records crossing the left edge (by last cell), and those crossing
            # the right edge only (by first cell; one crossing both is counted with the left).
            lefts = [k for k in crossing_by_last[a] if not placed[k]] if a > 0 else []
            rights = ([k for k in crossing_by_first[z + 1] if not placed[k] and first[k] >= a]
                      if z + 1 < cells else [])
            outside = sum(size[k] for k in lefts)  # the left ones over cell c, plus the right ones
            if spare >= 0 and outside + sum(size[k] for k in rights) <= spare:
                return True
            if spare < 0:  # (never: heights stay under the cap) every cell may break it
                cells_to_check = range(a, z + 1)
            else:
                left_end = min(last[lefts[-1]], z) if lefts else a - 1
                right_start = max(first[rights[0]], left_end + 1) if rights else z + 1
                cells_to_check = chain(range(a, left_end + 1), range(right_start, z + 1))
            li = ri = 0
            for c in cells_to_check:
                while li < len(lefts) and last[lefts[li]] < c:
                    outside -= size[lefts[li]]
                    li += 1
                while ri < len(rights) and first[rights[ri]] <= c:
                    outside += size[rights[ri]]
                    ri += 1
                if outside > spare and left[c] - outside < depth:
                    return False
            return True

        stack.append(open_frame(0))
        while stack:
            frame = stack[-1]
            h, a, z, actions, nxt, applied, _, _, wall = frame
            if applied is not None:  # undo the action this frame tried last
                if applied >= 0:
                    placed[applied] = False
                    to_place += 1
                    s = size[applied]
                    for c in range(first[applied], last[applied] + 1):
                        left[c] += s
                    lower_cells(frame, first[applied], last[applied])
                else:
                    lower_cells(frame, a, z)
                frame[5] = None
            start = align_up(h, align)
            while nxt < len(actions):
                k = actions[nxt]
                nxt += 1
                if k >= 0:
                    top = start + size[k]
                    if top > cap:
                        continue
                    placed[k] = True
                    offset[k] = start
                    to_place -= 1
                    s = size[k]
                    for c in range(first[k], last[k] + 1):
                        left[c] -= s
                    raise_cells(h, a, z, first[k], last[k], top)
                else:
                    if bounded and wall + max(left[a:z + 1]) > cap:
                        continue
                    raise_cells(h, a, z, a, z, wall)
                frame[5] = k
                break
            frame[4] = nxt
            if frame[5] is None:  # every branch of this frame failed: backtrack
                stack.pop()
                continue
            nodes += 1
            self.nodes += 1
            if to_place == 0:
                return offset, [f[5] for f in stack]
            if nodes >= node_limit or (nodes & 255 == 0 and stop()):
                return None
            stack.append(open_frame(len(stack)))
        self.exhausted = True  # every placement under `cap` tried: none fits, in any order
        return None

    def offsets_for(self, kept: Sequence[int], total: int) -> list[int]:
        """Spread offsets of the kept records back over all positions (zero-size ones at 0)."""
        out = [0] * total
        for k, i in enumerate(self.ids):
            out[i] = kept[k]
        return out


def plan(
    records: Sequence[UsageRecord],
    alignment: int = 1,
    initial: OffsetPlan | None = None,
    time_budget: float | None = 2.0,
    seed: int = 0,
    lower_bound: int | None = None,
    max_iterations: int | None = None,
) -> OffsetPlan:
    """The best plan the search finds within the budgets; never worse than `initial`.

    An iteration is NODES_PER_ITERATION nodes of the search tree. With `max_iterations` set (and a
    time budget that does not run out first) the plan depends only on the input and the seed;
    stopped by `time_budget` (CPU seconds of this process) alone, it depends on the machine's speed (and the plan says so).
    """
    alignment = max(1, alignment)
    search = SkylineSearch(records, alignment)
    deadline = None if time_budget is None else time.process_time() + time_budget
    node_budget = None if max_iterations is None else max_iterations * NODES_PER_ITERATION
    to_beat = float("inf") if initial is None else initial.arena
    timed_out = [False]
    offsets, arena = run(search, records, deadline, node_budget, seed, lower_bound, to_beat, timed_out)
    if initial is not None and initial.arena <= arena:
        return OffsetPlan(NAME, tuple(initial.offsets), initial.arena, alignment,
                          time_limit_hit=timed_out[0])
    return OffsetPlan(NAME, tuple(offsets), arena, alignment, time_limit_hit=timed_out[0])


def search_plan(records: Sequence[UsageRecord], alignment: int, initial: OffsetPlan | None,
                iterations: int, time_limit: float | None, lower_bound: int | None) -> OffsetPlan:
    """The portfolio's entry: `iterations` iterations from `initial` with seed 0; the plan says
    when `time_limit` stopped it first."""
    return plan(records, alignment, initial=initial, time_budget=time_limit, seed=0,
                lower_bound=lower_bound, max_iterations=iterations)


def run(search: SkylineSearch, records: Sequence[UsageRecord], deadline: float | None,
        node_budget: int | None, seed: int, lower_bound: int | None = None,
        to_beat: float = float("inf"), timed_out: list[bool] | None = None) -> tuple[list[int], int]:
    """The greedy descent, then restarts under a shrinking cap until the bound or a budget.

    Returns (offsets over all records, arena) of the best plan found; after the greedy descent,
    only plans better than `to_beat` (a plan the caller already holds) are looked for.
    """
    bound = max(search.lower_bound, lower_bound or 0)
    spent_before = search.nodes

    def out_of_budget() -> bool:
        if node_budget is not None and search.nodes - spent_before >= node_budget:
            return True
        if deadline is not None and time.process_time() >= deadline:
            if timed_out is not None:
                timed_out[0] = True
            return True
        return False

    kept, path = search.descend(float("inf"), 1 << 62, None)
    offsets = search.offsets_for(kept, len(records))
    best = arena_of(records, offsets)
    rng = random.Random(seed)
    allowance = NODES_PER_RECORD * len(search.ids) + 64
    while min(best, to_beat) > bound and not out_of_budget():
        limit = allowance
        if node_budget is not None:
            limit = min(limit, node_budget - (search.nodes - spent_before))
        cap = min(best, to_beat) - 1
        if rng.random() < FOLLOW_INCUMBENT:
            found = search.descend(cap, limit, rng, out_of_budget, path, rng.randrange(len(path)))
        else:
            found = search.descend(cap, limit, rng, out_of_budget)
        if found is not None:
            offsets = search.offsets_for(found[0], len(records))
            best, path = arena_of(records, offsets), found[1]
        elif search.exhausted:
            break  # another order searches the same tree: restarts under this cap cannot find one
    return offsets, best
