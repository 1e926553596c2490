"""Greedy by size improved (greedy_by_size_improved.py) from FAST_FROM records on: the same
stages and the same pairs in the same order, found near n log n instead of by scanning a stage
for every pair. Tests hold it to greedy_by_size_improved.plan().

How it stays near n log n: a record compatible with an object lies in a free slot between two
consecutive members of it, and its gap to the object is its distance to one of those two members.
So the best pair is the best "side" candidate: for each member and side (left, right), the nearest
waiting record of the stage that fits in the slot on that side (ties: earlier in the stage). A heap
holds one candidate per side; a side's candidate only gets worse (its record is taken, or a new
member shrinks its slot), so candidates are recomputed when they come to the top and are found
out of date. The candidates are found by walking the stage's records sorted by first (or last)
operator, skipping taken records in near-constant time (pointer jumping, inline in the walks,
halving the paths it follows).

What keeps the constant small (100,000 records of the branching shape in under a second): each
object's members are chained to their neighbours in time (a record joins beside the member whose
side found it: no sorted lists to search or insert into); an entry at the top is known up to date,
without a search, while its record waits and still fits the slot on its member's side (a new
neighbour there shrinks the slot, but the first waiting record that fits stays the first); a
record joining beside a member needs a candidate on its outer side only; a side's walk resumes
where its last candidate was found; the candidates of the members placed before a stage are found
by vector operations and sorted once, so that they leave from the front of a list, not through
the heap (which then holds only the candidates found during the stage: on the branching shape an
average of about 3,000 entries instead of about 15,000); and a candidate just found that is less
than every queued one is the next pair, taken without a trip through the heap (nearly every pair
on the chain, residual and transformer shapes, a quarter of them on the branching shape).
"""

from __future__ import annotations

import bisect
import heapq
from typing import Sequence

import numpy as np

from packager.plan.objects._common import by_size_desc, make_plan
from packager.plan.records import ObjectPlan, Records, UsageRecord, positional_maxima

NAME = "greedy_by_size_improved"

_LEFT, _RIGHT = 0, 1


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    objects = _Objects(records)
    assignment = [-1] * len(records)
    for stage in _stages(records):
        _fill_stage(records, stage, objects, assignment)
    return make_plan(NAME, assignment, objects.grown_sizes(assignment))


def _columns(records: Sequence[UsageRecord]):
    """The records' int64 columns when the vector forms apply (more than 64 records), else None."""
    return Records.of(records) if len(records) > 64 else None


def _stages(records: Sequence[UsageRecord]) -> list:
    """Record positions by stage, each stage largest first (ties: earlier position): int64
    arrays in the vector form, lists otherwise."""
    maxima = positional_maxima(records)
    cols = Records.of(records) if len(records) > 64 else None
    if cols is not None:  # the same stages by vector operations
        order = np.argsort(-cols.size, kind="stable")
        stage_of = np.searchsorted(-np.asarray(maxima, np.int64), -cols.size[order], side="right") - 1
        grouped = order[np.argsort(stage_of, kind="stable")]
        ends = np.cumsum(np.bincount(stage_of, minlength=len(maxima)))
        return [part for part in np.split(grouped, ends[:-1]) if len(part)]
    descending = [-m for m in maxima]  # ascending, for bisect
    stages: list[list[int]] = [[] for _ in range(len(descending))]
    for pos in by_size_desc(records):
        # the last maximum at least this size; every size is at most maxima[0]
        stages[bisect.bisect_right(descending, -records[pos].size) - 1].append(pos)
    return [s for s in stages if s]


class _Objects:
    """The objects built so far: the sizes of the records that opened them and, per record
    placed, its neighbours in its object
    (members of one object never overlap, so they form a chain in time): a record joins an object
    in the free slot beside the member it was found next to, so no search of the members is
    needed to place it or to find the slots beside it (_fill_stage links it in, inline: it runs
    once per record)."""

    def __init__(self, records: Sequence[UsageRecord]) -> None:
        self.sizes: list[int] = []
        self.cols = _columns(records)
        if self.cols is not None:  # the same values from the columns, without a walk of the records
            self.first, self.last = self.cols.first.tolist(), self.cols.last.tolist()
            self.record_sizes = self.cols.size
        else:
            self.first = [r.first_op for r in records]
            self.last = [r.last_op for r in records]
            self.record_sizes = [r.size for r in records]
        self.before = [-1] * len(records)  # the previous member of the record's object, or -1
        self.after = [-1] * len(records)  # the next one, or -1
        self.placed: list[int] = []  # every record placed so far
        # above every gap between two records
        if self.cols is not None:
            self.gap_limit = int(self.cols.last.max()) - int(self.cols.first.min()) + 1
        else:
            self.gap_limit = max(self.last, default=0) - min(self.first, default=0) + 1

    def open(self, pos: int) -> int:
        """Record `pos` alone in a new object; its id."""
        self.sizes.append(int(self.record_sizes[pos]))
        return len(self.sizes) - 1

    def grown_sizes(self, assignment: list[int]) -> list[int]:
        """Each object's size once every record is placed: its largest member's (the stages
        decide by time alone, so the sizes wait until the end)."""
        if self.cols is not None:
            grown = np.asarray(self.sizes, np.int64)
            np.maximum.at(grown, np.asarray(assignment, np.int64), self.cols.size)
            return grown.tolist()
        grown = list(self.sizes)
        for size, obj in zip(self.record_sizes, assignment):
            if size > grown[obj]:
                grown[obj] = size
        return grown


_END = 1 << 62  # past every operator


class _Stage:
    """The waiting records of one stage, sorted by first operator (ties: stage order) and by last
    operator (ties: stage order, reversed), with pointer jumping over the records already taken,
    and where the walks of each record's sides start (above 64 records; below, bisect finds them
    when they are needed)."""

    def __init__(self, first, last) -> None:
        """`first`, `last`: the stage's operators, as lists or int64 arrays."""
        n = len(first)
        if n > 64:  # the same orders and their inverses by vector operations
            first, last = np.asarray(first, np.int64), np.asarray(last, np.int64)
            by_first = np.argsort(first, kind="stable")
            by_last = np.lexsort((-np.arange(n), last))
            rank = np.arange(n)
            at_first, at_last = np.empty(n, np.int64), np.empty(n, np.int64)
            at_first[by_first], at_last[by_last] = rank, rank
            self.firsts, self.lasts = first[by_first].tolist(), last[by_last].tolist()
            self.by_first, self.by_last = by_first.tolist(), by_last.tolist()
            self.at_first, self.at_last = at_first.tolist(), at_last.tolist()
            sorted_firsts, sorted_lasts = first[by_first], last[by_last]
            self.right_start = np.searchsorted(sorted_firsts, last, side="right").tolist()
            self.left_start = (np.searchsorted(sorted_lasts, first, side="left") - 1).tolist()
            self.first_column, self.last_column = first, last
            first, last = first.tolist(), last.tolist()
        else:
            self.by_first = sorted(range(n), key=lambda k: (first[k], k))
            self.by_last = sorted(range(n), key=lambda k: (last[k], -k))
            self.firsts = [first[k] for k in self.by_first]
            self.lasts = [last[k] for k in self.by_last]
            self.at_first = [0] * n
            for i, k in enumerate(self.by_first):
                self.at_first[k] = i
            self.at_last = [0] * n
            for i, k in enumerate(self.by_last):
                self.at_last[k] = i
            # a few records: each walk's start by bisect when it is needed (fewer searches)
            self.right_start = self.left_start = None
        self.first, self.last = first, last
        self.next = list(range(n + 1))  # next[i]: some position >= i still waiting (n: none)
        self.prev = list(range(n + 1))  # prev[i + 1]: some position <= i still waiting (0: none)
        self.waiting = [True] * n


def _fill_stage(records: Sequence[UsageRecord], stage: list[int], objects: _Objects,
                assignment: list[int]) -> None:
    first_op, last_op, before, after = objects.first, objects.last, objects.before, objects.after
    if isinstance(stage, np.ndarray):  # the vector form: the stage's columns by fancy indexing
        waiting = _Stage(objects.cols.first[stage], objects.cols.last[stage])
        stage = stage.tolist()
    else:
        waiting = _Stage([first_op[p] for p in stage], [last_op[p] for p in stage])
    first, last = waiting.first, waiting.last
    still, nxt, prv = waiting.waiting, waiting.next, waiting.prev
    firsts, by_first, lasts, by_last = waiting.firsts, waiting.by_first, waiting.lasts, waiting.by_last
    at_first, at_last = waiting.at_first, waiting.at_last
    right_start, left_start = waiting.right_start, waiting.left_start
    bisect_left, bisect_right = bisect.bisect_left, bisect.bisect_right
    n = len(stage)
    first_waiting = 0  # in stage order
    heappop, heappush, heapreplace = heapq.heappop, heapq.heappush, heapq.heapreplace

    # A side's entry: (gap, k, object, member's first op, side, member, the record's place in
    # the side's sorted order). The first five order the pairs as the strategy ranks them and are
    # unique (one entry per side of a member). A side's walk may resume from its entry's place:
    # the records it passed stay taken or too long (its slot only shrinks).
    def right(member: int, i: int):
        """The waiting record starting nearest after `member` that ends before its next member,
        from place `i` of the by-first order on (no nearer one before it)."""
        nb = after[member]
        end, bound = last_op[member], (first_op[nb] if nb >= 0 else _END)
        while nxt[i] != i:  # to the next waiting place, halving the path
            nxt[i] = i = nxt[nxt[i]]
        while i < n and firsts[i] < bound:
            k = by_first[i]
            if last[k] < bound:
                return firsts[i] - end, k, assignment[member], first_op[member], _RIGHT, member, i
            i += 1
            while nxt[i] != i:
                nxt[i] = i = nxt[nxt[i]]
        return None

    def left(member: int, i: int):
        """The waiting record ending nearest before `member` that starts after its previous one,
        from place `i` of the by-last order down (no nearer one after it)."""
        nb = before[member]
        start, bound = first_op[member], (last_op[nb] if nb >= 0 else -1)
        i += 1  # prv is one place up
        while prv[i] != i:  # to the last waiting place, halving the path
            prv[i] = i = prv[prv[i]]
        i -= 1
        while i >= 0 and lasts[i] > bound:
            k = by_last[i]
            if first[k] > bound:
                return start - lasts[i], k, assignment[member], start, _LEFT, member, i
            while prv[i] != i:
                prv[i] = i = prv[prv[i]]
            i -= 1
        return None

    # The entries wait in two queues: the opening ones, sorted once (they only leave from the
    # front: an entry leaves or changes only when it is the least), and a heap of the others.
    # The least of the two fronts is the least entry.
    if len(objects.placed) > 64:
        opening, heap = _opening_entries(objects, waiting, assignment, left, right)
    else:
        opening, heap = [], [e for member in objects.placed
                             for e in (left(member, bisect.bisect_left(lasts, first_op[member]) - 1),
                                       right(member, bisect.bisect_right(firsts, last_op[member])))
                             if e is not None]
    heapq.heapify(heap)  # the pairs pop in the same order whatever the heap's layout: all differ
    none = (objects.gap_limit,)  # after every entry: no entry left
    opening.append(none)
    front, least_opening = 0, opening[0]  # the least opening entry left, at opening[front]
    # The entry found last, outside both queues, when it is less than every entry in them: it
    # is up to date (nothing changed since its search), so it is the next pair to take.
    held = None
    for _ in range(n):
        if held is not None:
            top, held = held, None
            gap, k, obj, _, side, member, i = top
            in_heap = False
        else:
            while True:
                top = least_opening
                if heap and heap[0] < top:
                    top = heap[0]
                elif top is none:
                    break
                gap, k, obj, _, side, member, i = top
                # Up to date while its record waits and still fits the side's slot: the slot
                # only shrinks and the waiting records only leave, so the first that fits stays
                # first.
                if side == _LEFT:
                    if still[k]:
                        nb = before[member]
                        if nb < 0 or first[k] > last_op[nb]:
                            break
                    now = left(member, i)
                else:
                    if still[k]:
                        nb = after[member]
                        if nb < 0 or last[k] < first_op[nb]:
                            break
                    now = right(member, i)
                # Out of date (its record taken, or its slot shrunk): the side's candidate now.
                if now is not None and now[0] == gap and now[1] == k:
                    break
                if top is least_opening:
                    front += 1
                    least_opening = opening[front]
                    if now is not None:
                        heappush(heap, now)
                elif now is None:
                    heappop(heap)
                else:
                    heapreplace(heap, now)
            in_heap = top is not least_opening
        if top is not none:  # the top entry's record joins its member's object (linked in below)
            pos = stage[k]
        else:  # no pair left: a new object for the first waiting record
            while not still[first_waiting]:
                first_waiting += 1
            k = first_waiting
            pos = stage[k]
            obj = objects.open(pos)
            side = -1
        assignment[pos] = obj
        # k is taken: the walks over the sorted records skip it from now on
        still[k] = False
        i = at_first[k]
        nxt[i] = i + 1
        j = at_last[k]
        prv[j + 1] = j
        # Beside a member, only the side away from it can hold a waiting record: one between the
        # two would have been nearer to the member than this one (the member's side's best).
        if side == _RIGHT:
            nb = after[member]
            before[pos], after[pos], after[member] = member, nb, pos
            if nb >= 0:
                before[nb] = pos
            entry = right(pos, right_start[k] if right_start else bisect_right(firsts, last[k]))
        elif side == _LEFT:
            nb = before[member]
            before[pos], after[pos], before[member] = nb, member, pos
            if nb >= 0:
                after[nb] = pos
            entry = left(pos, left_start[k] if left_start else bisect_left(lasts, first[k]) - 1)
        else:
            entry = left(pos, left_start[k] if left_start else bisect_left(lasts, first[k]) - 1)
            if entry is not None:
                heappush(heap, entry)
            entry = right(pos, right_start[k] if right_start else bisect_right(firsts, last[k]))
            if entry is not None:
                heappush(heap, entry)
            continue
        if in_heap:  # the entry just used gives way to the new one in one step of the heap
            if entry is None:
                heappop(heap)
            elif len(heap) == 1 and entry < least_opening:
                heap.pop()
                held = entry
            elif len(heap) > 2 and entry < heap[1] and entry < heap[2]:
                heap[0] = entry  # still the least of the heap: in place, without a sift to a leaf
            else:
                heapreplace(heap, entry)
        else:
            if top is least_opening:
                front += 1
                least_opening = opening[front]
            if entry is not None:
                if entry < least_opening and (not heap or entry < heap[0]):
                    held = entry
                else:
                    heappush(heap, entry)
    objects.placed.extend(stage)  # the whole stage is placed now


# Rounds of the vector walk in _opening_entries; the few sides still walking after them finish
# one by one.
_VECTOR_ROUNDS = 8
# Opening entries found by the vector walk from which they are sorted into their own queue.
_SORTED_FROM = 128


def _opening_entries(objects: _Objects, waiting: _Stage, assignment: list[int], left,
                     right) -> tuple[list, list]:
    """The entries of both sides of every member placed before the stage, as `left` and `right`
    give them, by vector operations (no record of the stage is taken yet, so the walks over the
    sorted records skip none): those found by the vector walk, sorted (none when they are few),
    and the others (the few found one by one after it, or all when they are few)."""
    placed = objects.placed
    members = np.asarray(placed, np.int64)
    cols = objects.cols
    if cols is not None:  # the same values from the records' columns, not converted again
        first_op, last_op = cols.first, cols.last
    else:
        first_op, last_op = np.asarray(objects.first, np.int64), np.asarray(objects.last, np.int64)
    if getattr(waiting, "first_column", None) is not None:
        stage_first, stage_last = waiting.first_column, waiting.last_column
    else:
        stage_first, stage_last = np.asarray(waiting.first, np.int64), np.asarray(waiting.last, np.int64)
    by_first, by_last = np.asarray(waiting.by_first, np.int64), np.asarray(waiting.by_last, np.int64)
    firsts, lasts = stage_first[by_first], stage_last[by_last]
    n = len(firsts)
    objects_of = np.fromiter(map(assignment.__getitem__, placed), np.int64, len(placed))
    columns: list = []  # per side: gap, k, object, member's first op, side, member, place
    entries: list = []
    for side in (_LEFT, _RIGHT):
        # the members' neighbours on this side (only the members', not the whole list's)
        neighbour = objects.before if side == _LEFT else objects.after
        nb = np.fromiter(map(neighbour.__getitem__, placed), np.int64, len(placed))
        if side == _LEFT:
            start = first_op[members]
            bound = np.where(nb >= 0, last_op[nb], -1)
            at = np.searchsorted(lasts, start, side="left") - 1
        else:
            start = last_op[members]
            bound = np.where(nb >= 0, first_op[nb], _END)
            at = np.searchsorted(firsts, start, side="right")
        walking = np.arange(len(members))
        found_rows, found_k, found_gap, found_at = [], [], [], []
        for _ in range(_VECTOR_ROUNDS):
            i = at[walking]
            if side == _LEFT:
                inside = i >= 0
                j = np.where(inside, i, 0)
                inside &= lasts[j] > bound[walking]
                k = by_last[j]
                hit = inside & (stage_first[k] > bound[walking])
                gap = start[walking] - lasts[j]
            else:
                inside = i < n
                j = np.where(inside, i, 0)
                inside &= firsts[j] < bound[walking]
                k = by_first[j]
                hit = inside & (stage_last[k] < bound[walking])
                gap = firsts[j] - start[walking]
            found_rows.append(walking[hit])
            found_k.append(k[hit])
            found_gap.append(gap[hit])
            found_at.append(j[hit])
            walking = walking[inside & ~hit]
            at[walking] += 1 if side == _RIGHT else -1
            if not len(walking):
                break
        rows = np.concatenate(found_rows)
        m = members[rows]
        columns.append((np.concatenate(found_gap), np.concatenate(found_k), objects_of[rows],
                        first_op[m], np.full(len(rows), side, np.int64), m, np.concatenate(found_at)))
        search = left if side == _LEFT else right
        # still walking: the walk goes on one by one from where it is
        for member, i in zip(members[walking].tolist(), at[walking].tolist()):
            entry = search(member, i)
            if entry is not None:
                entries.append(entry)
    if sum(len(c[0]) for c in columns) < _SORTED_FROM:  # a few: to the heap, not worth a sort
        for c in columns:
            entries.extend(zip(*(column.tolist() for column in c)))
        return [], entries
    gap, k, obj, member_first, side, member, at = (np.concatenate(c) for c in zip(*columns))
    order = np.lexsort((side, member_first, obj, k, gap))  # as the tuples order
    found = list(zip(*(c[order].tolist() for c in (gap, k, obj, member_first, side, member, at))))
    return found, entries
