"""Local search over placement orders, in the manner of Arm Vela's HillClimb allocator.

A solution is an ORDER of the records. The decoder places each record, in that order, at the lowest
aligned offset where it overlaps no already-placed record that conflicts with it in time (first
fit). Decoding the order "by increasing offset" of any valid plan never raises an offset (every
record's old place is still free when its turn comes), so the search can start from any plan.

Starting points: the order of `initial` (by offset, then larger first) and greedy by size (larger
first, then longer-lived); the better one is the incumbent. Each step perturbs the incumbent order:
- (60%) take a record that touches the peak (offset + size == arena), or, half of the time, one
  that conflicts with it (so is alive at some operator of the peak record's profile), and swap it
  with a random record placed earlier;
- (25%) swap two random records;
- (15%) move a block of up to LONGEST_BLOCK consecutive records elsewhere;
and keeps the change when the arena does not grow (equal is kept, to drift across plateaus).
Candidates are cheap: only records whose first fit can have changed are placed again (those that
moved, those in the changed stretch of the order that conflict with one that moved, and those
with a neighbour placed before them that changed offset; the others keep their offset), and
decoding stops as soon as one record ends above the current arena. One iteration is one step.

It stops at the lower bound (the largest operator breadth; with alignment, the aligned sizes
stacked under an unaligned top), after `max_iterations` steps, or at `time_budget` CPU seconds of this process.
Randomness comes from random.Random(seed) only: with `max_iterations` set and a time budget that
does not run out first, the plan depends only on the input and the seed; a run stopped by the time
budget depends on the machine's speed, and its plan says so (time_limit_hit).

Hill climbing alone stalls at 1.10x-1.18x of the optimum on MiniMalloc's challenging instances
after 10 s; the skyline tree search (best_fit_search), which the portfolio runs after this one,
is the stronger method there.
"""

from __future__ import annotations

import heapq
import random
import time
from typing import Sequence

from packager.plan.records import OffsetPlan, UsageRecord, align_up

NAME = "local_search"

# Probabilities of the three hill-climbing moves (the rest: move a block).
PEAK_MOVE, RANDOM_SWAP = 0.6, 0.25
LONGEST_BLOCK = 8


class OrderDecoder:
    """Conflict lists of the records and the first-fit decoder of orders."""

    def __init__(self, records: Sequence[UsageRecord], alignment: int) -> None:
        self.alignment = max(1, alignment)
        self.size = [r.size for r in records]
        self.neighbours = conflict_lists(records)
        self.ids = [i for i, r in enumerate(records) if r.size > 0]
        self.mark = [0] * len(records)  # per-record marks of redecode, told apart by stamp
        self.stamp = 0

    def decode(self, order: Sequence[int], offsets: list[int]) -> int:
        """Place the records of `order` (their offsets -1 before) one by one: the arena."""
        top = 0
        for i in order:
            offsets[i] = at = self.first_fit(i, offsets)
            top = max(top, at + self.size[i])
        return top

    def first_fit(self, i: int, offsets: list[int]) -> int:
        """The lowest aligned offset for record i among its placed (offset >= 0) neighbours."""
        size, align = self.size, self.alignment
        s = size[i]
        at = 0
        for lo, hi in sorted([(offsets[j], offsets[j] + size[j]) for j in self.neighbours[i]
                              if offsets[j] >= 0]):
            if lo >= at + s:
                break
            if hi > at:
                at = align_up(hi, align)
        return at

    def redecode(self, candidate: Sequence[int], lo: int, hi: int, moved: Sequence[int],
                 offsets: Sequence[int], limit: float) -> list[int] | None:
        """Offsets of `candidate`, an order equal to the one `offsets` decodes except in positions
        [lo, hi) where the records `moved` changed places; None as soon as a record ends above
        `limit`.

        A record keeps its old offset unless it moved, or (inside [lo, hi)) it conflicts with a
        moved record (so which of its neighbours come before it may have changed), or a
        neighbour before it changed offset: first fit depends on nothing else.
        """
        size, neighbours = self.size, self.neighbours
        trial = list(offsets)
        for r in candidate[lo:]:
            trial[r] = -1  # not placed yet: invisible to the first-fit searches
        self.stamp += 2
        dirty, suspect = self.stamp, self.stamp + 1  # marks of this call in self.mark
        mark = self.mark
        for r in moved:
            for j in neighbours[r]:
                mark[j] = suspect
        for r in moved:
            mark[r] = dirty
        for t in range(lo, len(candidate)):
            r = candidate[t]
            if mark[r] == dirty or (mark[r] == suspect and t < hi):
                at = self.first_fit(r, trial)
                if at + size[r] > limit:
                    return None
                trial[r] = at
                if at != offsets[r]:
                    for j in neighbours[r]:
                        mark[j] = dirty
            else:
                trial[r] = offsets[r]
        return trial


def conflict_lists(records: Sequence[UsageRecord]) -> list[list[int]]:
    """For each record, the records alive at some common operator (zero-size records: none)."""
    neighbours: list[list[int]] = [[] for _ in records]
    by_start = sorted((i for i, r in enumerate(records) if r.size > 0), key=lambda i: records[i].first_op)
    ending: list[tuple[int, int]] = []  # heap of (last_op, position) of the live records
    live: set[int] = set()
    for i in by_start:
        first = records[i].first_op
        while ending and ending[0][0] < first:
            live.discard(heapq.heappop(ending)[1])
        for j in live:
            neighbours[i].append(j)
            neighbours[j].append(i)
        live.add(i)
        heapq.heappush(ending, (records[i].last_op, i))
    return neighbours


def aligned_lower_bound(records: Sequence[UsageRecord], alignment: int) -> int:
    """At each operator the live records are stacked: every one but the top one takes at least its
    aligned size. (With alignment 1 this is the largest operator breadth.)"""
    events: list[tuple[int, int, int]] = []
    for r in records:
        if r.size > 0:
            events.append((r.first_op, 1, r.size))
            events.append((r.last_op + 1, 0, r.size))
    events.sort()
    best, total, slack = 0, 0, {}  # slack: count of live records by their rounding slack
    k = 0
    while k < len(events):
        t = events[k][0]
        while k < len(events) and events[k][0] == t:
            _, start, s = events[k]
            a = align_up(s, alignment)
            total += a if start else -a
            slack[a - s] = slack.get(a - s, 0) + (1 if start else -1)
            k += 1
        widest = max((d for d, c in slack.items() if c > 0), default=0)
        best = max(best, total - widest)
    return best


def greedy_by_size_order(records: Sequence[UsageRecord], ids: Sequence[int]) -> list[int]:
    return sorted(ids, key=lambda i: (-records[i].size, records[i].first_op - records[i].last_op,
                                      records[i].first_op, i))


def order_of(plan_offsets: Sequence[int], records: Sequence[UsageRecord], ids: Sequence[int]) -> list[int]:
    """The order that decodes to a plan no worse than `plan_offsets`: by offset, then larger."""
    return sorted(ids, key=lambda i: (plan_offsets[i], -records[i].size, i))


def plan(
    records: Sequence[UsageRecord],
    alignment: int = 1,
    initial: OffsetPlan | None = None,
    time_budget: float | None = 2.0,
    seed: int = 0,
    lower_bound: int | None = None,
    max_iterations: int | None = None,
) -> OffsetPlan:
    """The best order found, decoded; `initial` itself (relabelled) when nothing beats it."""
    alignment = max(1, alignment)
    deadline = None if time_budget is None else time.process_time() + time_budget
    decoder = OrderDecoder(records, alignment)
    n = len(records)
    bound = max(aligned_lower_bound(records, alignment), lower_bound or 0)

    starts = [greedy_by_size_order(records, decoder.ids)]
    if initial is not None and len(initial.offsets) == n:
        starts.insert(0, order_of(initial.offsets, records, decoder.ids))
    order, offsets, arena = [], [0] * n, float("inf")
    for start in starts:
        trial = [-1] * n
        top = decoder.decode(start, trial)
        if top < arena:
            order, offsets, arena = start, trial, top
    timed_out = [False]
    if arena > bound and len(order) > 1:
        order, offsets, arena = hill_climb(decoder, order, offsets, arena, bound,
                                           random.Random(seed), max_iterations, deadline, timed_out)
    if initial is not None and initial.arena <= arena:
        return OffsetPlan(NAME, tuple(initial.offsets), initial.arena, alignment,
                          time_limit_hit=timed_out[0])
    return OffsetPlan(NAME, tuple(max(0, o) for o in offsets), int(arena) if n else 0, alignment,
                      time_limit_hit=timed_out[0])


def search_plan(records: Sequence[UsageRecord], alignment: int, initial: OffsetPlan | None,
                iterations: int, time_limit: float | None, lower_bound: int | None) -> OffsetPlan:
    """The portfolio's entry: `iterations` steps from `initial` with seed 0; the plan says when
    `time_limit` stopped it first."""
    return plan(records, alignment, initial=initial, time_budget=time_limit, seed=0,
                lower_bound=lower_bound, max_iterations=iterations)


def hill_climb(decoder: OrderDecoder, order: list[int], offsets: list[int], arena: int, bound: int,
               rng: random.Random, iterations: int | None, deadline: float | None,
               timed_out: list[bool] | None = None) -> tuple[list[int], list[int], int]:
    """Accept-if-not-worse moves on the order until the bound or a budget is reached."""
    size, neighbours = decoder.size, decoder.neighbours
    m = len(order)
    position = {r: p for p, r in enumerate(order)}
    done = 0
    while arena > bound and (iterations is None or done < iterations):
        if deadline is not None and time.process_time() >= deadline:
            if timed_out is not None:
                timed_out[0] = True
            break
        done += 1
        move = rng.random()
        if move < PEAK_MOVE + RANDOM_SWAP:
            if move < PEAK_MOVE:  # a record at the peak, or one alive with it, moves earlier
                r = rng.choice([r for r in order if offsets[r] + size[r] == arena])
                if neighbours[r] and rng.random() < 0.5:
                    r = rng.choice(neighbours[r])
                p = position[r]
                if p == 0:
                    continue
                q = rng.randrange(p)
            else:
                p, q = rng.randrange(m), rng.randrange(m)
                if p == q:
                    continue
            candidate = order[:]
            candidate[p], candidate[q] = candidate[q], candidate[p]
            lo, hi, moved = min(p, q), max(p, q) + 1, (candidate[p], candidate[q])
        else:  # a block of records moves elsewhere
            a = rng.randrange(m)
            b = min(m, a + 1 + rng.randrange(LONGEST_BLOCK))
            rest = order[:a] + order[b:]
            k = rng.randrange(len(rest) + 1)
            if k == a:
                continue
            candidate = rest[:k] + order[a:b] + rest[k:]
            lo, hi, moved = min(a, k), max(b, k + b - a), order[a:b]
        trial = decoder.redecode(candidate, lo, hi, moved, offsets, arena)
        if trial is None:
            continue
        order, offsets = candidate, trial
        arena = max(offsets[r] + size[r] for r in order)
        position = {r: p for p, r in enumerate(order)}
    return order, offsets, arena
