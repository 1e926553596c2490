"""Skyline best-fit search: the strip-packing best-fit heuristic turned into a bounded tree search.

The heuristic (Sekiyama et al. 2018) keeps a skyline over time: the height of the placed records
at each instant. It takes the lowest segment of the skyline and puts there a record whose lifetime
fits inside the segment; when no record fits, it raises the segment to its lower neighbour,
wasting that space. Every record then rests on the records below it, the way MiniMalloc's
"canonical" solutions do, so searching over the choices made at the lowest segment covers good
packings without ever looking at offsets that leave a record floating.

The search turns each choice into a branch and prunes with a capacity `cap`: a branch dies when
some instant's skyline height plus the sizes still to place there exceeds `cap` (the same bound as
the largest operator breadth, applied to what is left). Placing a record at its segment's height
leaves that sum unchanged, so only raising a segment (waste) has to be checked.

Depth-first search with chronological backtracking gets stuck in the first bad subtree, so the
driver restarts: every descent has a node allowance proportional to the number of records and
shuffles the candidates' order a little (seeded), and each success lowers `cap` to one byte below
the arena it found. It stops at the lower bound, the node budget or the time budget.

Candidate order at a segment: records that touch one of its ends first (they leave no sliver of
time behind), then longer lifetimes, then larger sizes.

Time is compressed to the ranks of the records' interval ends, so costs depend on the number of
records, not on operator numbers (MiniMalloc's times run to a million).
"""

from __future__ import annotations

import random
import time
from typing import Callable, Sequence

from packager.plan.records import OffsetPlan, UsageRecord, align_up, arena_of

NAME = "best_fit_search"

# Nodes one descent may expand, per record: enough to backtrack out of a few bad choices near the
# leaves, small enough that restarts (which are what explore) stay frequent.
NODES_PER_RECORD = 8
# Each adjacent pair of candidates is swapped with this probability on a restart: mild enough to
# keep the heuristic's order as a guide, strong enough that restarts differ.
SHUFFLE = 0.3
# How many nodes make up one iteration of the `max_iterations` budget.
NODES_PER_ITERATION = 32
MODE = 0
BOUND = 0


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
        self.starting_at: list[list[int]] = [[] for _ in range(self.cells)]
        for k in range(len(self.ids)):
            self.starting_at[self.first[k]].append(k)
        self.load = [0] * self.cells  # bytes alive in each cell: what the bound starts from
        for k in range(len(self.ids)):
            for c in range(self.first[k], self.last[k] + 1):
                self.load[c] += self.size[k]
        self.nodes = 0  # nodes expanded by all descents so far

    @property
    def lower_bound(self) -> int:
        return max(self.load, default=0)

    def descend(self, cap: float, node_limit: int, rng: random.Random | None,
                stop: Callable[[], bool] = lambda: False, guide: Sequence[int] = (),
                follow: int = 0):
        """One depth-first descent under `cap`: (offsets per kept record, actions) or None.

        `rng` None keeps the heuristic's order (no shuffling). `guide` is the action path of an
        earlier solution: the first `follow` frames try its action first, frame `follow` tries it
        last. `stop` is polled now and then and ends the descent with None when it says so.
        """
        n, cells, align = len(self.ids), self.cells, self.alignment
        first, last, size = self.first, self.last, self.size
        if n == 0:
            return [], []
        if self.lower_bound > cap:
            return None
        height = [0] * cells
        left = self.load[:]  # bytes still to place in each cell
        placed = [False] * n
        offset = [0] * n
        to_place = n
        nodes = 0
        RAISE = -1
        # A frame: [segment height, segment start, segment end, actions, next action, applied]
        stack: list[list] = []

        def open_frame(depth: int) -> list:
            h = min(height)
            a = height.index(h)
            z = a
            while z + 1 < cells and height[z + 1] == h:
                z += 1
            cands = [k for c in range(a, z + 1) for k in self.starting_at[c]
                     if not placed[k] and last[k] <= z]
            if MODE == 0:
                cands.sort(key=lambda k: ((first[k] == a) + (last[k] == z), last[k] - first[k], size[k]),
                           reverse=True)
            else:
                cands.sort(key=lambda k: (first[k] == a, last[k] == z, last[k] - first[k], size[k]),
                           reverse=True)
            walls = [height[c] for c in (a - 1, z + 1) if 0 <= c < cells]
            if BOUND and walls and cap != float("inf"):
                depth_ = min(walls) - h
                avail = [0] * (z - a + 1)
                for k in cands:
                    fill = min(size[k], depth_)
                    for c in range(first[k] - a, last[k] - a + 1):
                        avail[c] += fill
                for c in range(a, z + 1):
                    short = depth_ - avail[c - a]
                    if short > 0 and h + left[c] + short > cap:
                        return [h, a, z, [], 0, None]
            if MODE == 2 and cands and first[cands[0]] == a:
                cands = [k for k in cands if first[k] == a]
            if rng is not None and depth >= follow:
                for j in range(len(cands) - 1):
                    if rng.random() < SHUFFLE:
                        cands[j], cands[j + 1] = cands[j + 1], cands[j]
            actions = cands + [RAISE] if walls else cands
            if depth < len(guide) and depth <= follow:
                g = guide[depth]
                if g in actions:
                    actions.remove(g)
                    if depth < follow:
                        actions.insert(0, g)
                    else:
                        actions.append(g)
            return [h, a, z, actions, 0, None]

        stack.append(open_frame(0))
        while stack:
            frame = stack[-1]
            h, a, z, actions, nxt, applied = frame
            if applied is not None:  # undo the action this frame tried last
                if applied >= 0:
                    placed[applied] = False
                    to_place += 1
                    s = size[applied]
                    for c in range(first[applied], last[applied] + 1):
                        height[c] = h
                        left[c] += s
                else:
                    for c in range(a, z + 1):
                        height[c] = h
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
                        height[c] = top
                        left[c] -= s
                else:
                    h2 = min(height[c] for c in (a - 1, z + 1) if 0 <= c < cells)
                    if any(h2 + left[c] > cap for c in range(a, z + 1)):
                        continue
                    for c in range(a, z + 1):
                        height[c] = h2
                frame[5] = k
                break
            frame[4] = nxt
            if frame[5] is None:
                stack.pop()
                continue
            nodes += 1
            self.nodes += 1
            if to_place == 0:
                return [offset[k] for k in range(n)], [f[5] for f in stack]
            if nodes >= node_limit or (nodes & 255 == 0 and stop()):
                return None
            stack.append(open_frame(len(stack)))
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
    """The best plan the search finds within the budgets (never worse than `initial`).

    An iteration is NODES_PER_ITERATION nodes of the search tree. With `max_iterations` set (and a
    time budget that does not run out first) the result depends only on the input and the seed;
    with only `time_budget` it depends on the machine's speed.
    """
    search = SkylineSearch(records, alignment)
    deadline = None if time_budget is None else time.perf_counter() + time_budget
    node_budget = None if max_iterations is None else max_iterations * NODES_PER_ITERATION
    result = run(search, records, alignment, deadline, node_budget, seed, lower_bound)
    if initial is not None and initial.arena <= result[1]:
        return OffsetPlan(NAME, tuple(initial.offsets), initial.arena, alignment)
    return OffsetPlan(NAME, tuple(result[0]), result[1], alignment)


def run(search: SkylineSearch, records: Sequence[UsageRecord], alignment: int,
        deadline: float | None, node_budget: int | None, seed: int,
        lower_bound: int | None = None, best_arena: float = float("inf")
        ) -> tuple[list[int], int]:
    """Greedy descent, then restarts under a shrinking cap until a budget runs out.

    Returns (offsets, arena) of the best plan found (offsets over all records). `best_arena` lets
    a caller that already holds a plan ask only for better ones; the greedy descent still runs.
    """
    bound = max(search.lower_bound, lower_bound or 0)
    start_nodes = search.nodes

    def out_of_budget() -> bool:
        if node_budget is not None and search.nodes - start_nodes >= node_budget:
            return True
        return deadline is not None and time.perf_counter() >= deadline

    greedy, path = search.descend(float("inf"), 1 << 62, None)
    offsets = search.offsets_for(greedy, len(records))
    arena = arena_of(records, offsets)
    best_offsets, best = offsets, arena
    rng = random.Random(seed)
    allowance = NODES_PER_RECORD * len(search.ids) + 64
    while min(best, best_arena) > bound and not out_of_budget():
        limit = allowance
        if node_budget is not None:
            limit = min(limit, node_budget - (search.nodes - start_nodes))
        found = search.descend(min(best, best_arena) - 1, limit, rng, out_of_budget)
        if found is not None:
            offsets = search.offsets_for(found[0], len(records))
            best_offsets, best = offsets, arena_of(records, offsets)
    return best_offsets, best
