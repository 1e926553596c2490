"""Strip packing, best-fit skyline (Sekiyama et al. 2018).

Time runs along the x axis, bytes up the y axis. The skyline is a row of time segments, each with
the height of the highest byte used so far over it. Repeatedly take the lowest segment (the
leftmost of equal ones) and put there, at its height, the longest-lived unplaced record that fits
inside it in time (then the largest, then the lowest position). When none fits, the segment can
never be used at its height: raise it to its lower neighbour and merge with it.

Every step places a record or removes a segment, so the loop ends after at most ~3n steps.

`plan` below is that loop as written, each step a scan of the segments and of the unplaced
records (quadratic). From `kernels.COMPILE_FROM` records on, and under a StopRule (`start`), the
loop runs as its kernel `kernels.skyline.skyline` (the records grouped by first operator under a
tree of their best keys): compiled, or uncompiled under a StopRule until resumed.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from packager.plan import kernels
from packager.plan.kernels import skyline as skyline_kernel
from packager.plan.offsets._gaps import offset_plan
from packager.plan.offsets._placement_kernel import INT64_SAFE as _INT64_SAFE
from packager.plan.offsets._stop import Paused, StopRule
from packager.plan.records import OffsetPlan, Records, UsageRecord, align_up

NAME = "strip_packing"
# Under a StopRule, the records living at most this many ranks (and the segments at most this
# wide) are counted in the "still to place here" test: its cost per step stays bounded.
NEAR = 64


class _Unplaced:
    """The records not placed yet, grouped by first operator, each group best-first:
    longest-lived, then largest, then lowest position.

    A record's rank is one integer, ordered as (-lifetime, -size, position): `key // per_life` is
    `longest - lifetime`, so "lives at most `room` operators" is "key >= (longest - room) *
    per_life", a binary search in its group. A segment tree over the first operators holds each
    group's best key (its head), so a wide query visits groups best head first and stops as soon
    as no head left can beat what it found: a head that does not fit in time is the only reason to
    look further.
    """

    def __init__(self, records: Sequence[UsageRecord], positions: Sequence[int]) -> None:
        cols = Records.of(records)
        in_columns = self._columns(cols, len(records), positions)
        if not in_columns:
            self._lists(records, positions)
        self.per_size = len(records) + 1  # key % per_size is the record's position
        size = 1
        while size < len(self._firsts):
            size *= 2
        self._size = size
        self._none = none = (self._longest + 1) * self._per_life  # above every key: an empty group
        if in_columns:  # every key fits in int64: the tree's levels by one vector minimum each
            heads = self._keys[np.asarray(self._bounds[:-1], dtype=np.int64)]
            tree_array = np.full(2 * size, none, dtype=np.int64)
            tree_array[size:size + len(heads)] = heads
            width = size
            while width > 1:
                tree_array[width // 2:width] = np.minimum(tree_array[width:2 * width:2],
                                                          tree_array[width + 1:2 * width:2])
                width //= 2
            self._tree = tree_array
            return
        heads = [self._keys[a] for a in self._bounds[:-1]]
        tree = [none] * (2 * size)
        tree[size:size + len(heads)] = heads
        for node in range(size - 1, 0, -1):
            tree[node] = min(tree[2 * node], tree[2 * node + 1])
        self._tree = tree

    def _lists(self, records: Sequence[UsageRecord], positions: Sequence[int]) -> None:
        """The groups, by pure Python (any integers)."""
        lifetimes = {i: records[i].last_op - records[i].first_op for i in positions}
        self._longest = max(lifetimes.values(), default=0)
        sizes = sorted({records[i].size for i in positions})
        size_rank = {size: k for k, size in enumerate(sizes)}
        self._per_life = per_life = len(sizes) * (len(records) + 1)
        per_size = len(records) + 1
        groups: dict[int, list[int]] = {}
        for i in positions:
            key = ((self._longest - lifetimes[i]) * per_life
                   + (len(sizes) - 1 - size_rank[records[i].size]) * per_size + i)
            groups.setdefault(records[i].first_op, []).append(key)
        self._firsts = self.firsts = sorted(groups)  # every first operator with records, fixed
        self._keys, self._bounds = [], [0]
        for f in self._firsts:
            self._keys += sorted(groups[f])
            self._bounds.append(len(self._keys))

    def _columns(self, cols, n: int, positions: Sequence[int]) -> bool:
        """The same groups from the records' int64 columns (one sort instead of a dict of lists);
        False when the keys would not fit in int64."""
        at = np.asarray(positions, dtype=np.int64)
        first, lifetime, size = cols.first[at], (cols.last - cols.first)[at], cols.size[at]
        longest = int(lifetime.max()) if len(at) else 0
        sizes = _distinct(size)
        per_life, per_size = len(sizes) * (n + 1), n + 1
        if (longest + 1) * per_life >= 1 << 62:
            return False
        self._longest, self._per_life = longest, per_life
        keys = ((longest - lifetime) * per_life
                + (len(sizes) - 1 - np.searchsorted(sizes, size)) * per_size + at)
        order = np.lexsort((keys, first))
        first, keys = first[order], keys[order]
        starts = np.flatnonzero(np.concatenate(([True], first[1:] != first[:-1]))) if len(at) else at
        self._firsts = self.firsts = first[starts].tolist()
        self._keys, self._bounds = keys, starts.tolist() + [len(keys)]
        return True

def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (by one sort: np.unique is several times slower here)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def _first_group_at(firsts: list[int], points: list[int]) -> list[int]:
    """For each boundary point, the first group (by first operator) at or after it."""
    return np.searchsorted(np.array(firsts, dtype=np.int64), np.array(points, dtype=np.int64)).tolist()


def _ranks(records: Sequence[UsageRecord], points: list[int]) -> tuple[list[int], list[int]]:
    """Each record's first operator and the operator after its last, as ranks among `points`
    (those of empty records are never read)."""
    cols = Records.of(records)
    if len(points) > 1:
        at = np.array(points, dtype=np.int64)
        return (np.searchsorted(at, cols.first).tolist(),
                np.searchsorted(at, cols.last + 1).tolist())
    rank = {t: k for k, t in enumerate(points)}
    return ([rank.get(r.first_op, 0) for r in records], [rank.get(r.last_op + 1, 0) for r in records])


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    """The skyline loop of the docstring; empty records stay at 0."""
    if kernels.use_kernel(len(records)):
        return start(records, alignment)  # the same loop, by its kernel
    todo = [i for i, r in enumerate(records) if r.size > 0]
    # Time is cut at 0 and at the records' first operators and ends: a segment spans
    # [points[a], points[b]) as the ranks [a, b).
    points = sorted({0, *(records[i].first_op for i in todo), *(records[i].last_op + 1 for i in todo)})
    rank = {p: k for k, p in enumerate(points)}
    segments = [[0, max(1, len(points) - 1), 0]]  # [start rank, stop rank, height], left to right
    # Longest-lived first, then largest, then lowest position.
    unplaced = sorted(todo, key=lambda i: (records[i].first_op - records[i].last_op, -records[i].size, i))
    offsets = [0] * len(records)
    while unplaced:
        s = min(range(len(segments)), key=lambda k: segments[k][2])  # the lowest, leftmost
        a, b, height = segments[s]
        fits = (i for i in unplaced
                if a <= rank[records[i].first_op] and rank[records[i].last_op + 1] <= b)
        i = next(fits, None)
        if i is None:  # raise the segment to its lower neighbour
            segments[s][2] = min(segments[k][2] for k in (s - 1, s + 1) if 0 <= k < len(segments))
        else:
            unplaced.remove(i)
            offsets[i] = align_up(height, alignment)
            f, e = rank[records[i].first_op], rank[records[i].last_op + 1]
            pieces = [[f, e, offsets[i] + records[i].size]]
            if e < b:
                pieces.append([e, b, height])
            if a < f:
                pieces.insert(0, [a, f, height])
            segments[s:s + 1] = pieces
            s += a < f  # the placed record's segment
        # Adjacent segments never have equal heights: merge s with its equal neighbours.
        if s + 1 < len(segments) and segments[s + 1][2] == segments[s][2]:
            segments[s][1] = segments.pop(s + 1)[1]
        if s > 0 and segments[s - 1][2] == segments[s][2]:
            segments[s - 1][1] = segments.pop(s)[1]
    return offset_plan(NAME, records, offsets, alignment)


def start(records: Sequence[UsageRecord], alignment: int = 1,
          stop: StopRule | None = None) -> OffsetPlan | Paused:
    """The plan, or Paused once a record placed ends above `stop`'s limit."""
    cols = Records.of(records) if kernels.use_kernel(len(records)) else None
    # Under a StopRule the loop starts as Python: compiled only if resumed (see `_Loop.run`).
    loop = _compiled_loop(records, cols, alignment) if cols is not None and stop is None else None
    if loop is None:
        loop = _python_loop(records, alignment, cols)
    if loop.run(stop):
        return Paused(NAME, loop.placed, loop.to_place,
                      lambda: loop.run(None) or offset_plan(NAME, records, loop.offsets(), alignment))
    return offset_plan(NAME, records, loop.offsets(), alignment)


class _Loop:
    """`skyline_kernel.skyline` with its inputs and state kept: `run(stop)` places records until done
    (returns 0) or until `stop` stops it (returns how many are left); `run` again resumes."""

    def __init__(self, kernel, records: Sequence[UsageRecord], head: tuple, remaining: int,
                 tail: tuple, sizes, compiled: bool, cols=None) -> None:
        self._kernel, self._records, self._head, self._tail = kernel, records, head, tail
        self._sizes, self._compiled = sizes, compiled
        self.to_place = self._remaining = remaining
        self._cols = cols  # a Python loop's int64 columns: it may go on compiled

    def _compile(self) -> None:
        """Go on compiled from where the Python loop stopped (the same state as arrays), where
        `_compiled_loop` would have run it compiled from the start."""
        head, tail, cols = self._head, self._tail, self._cols
        highest = int(cols.size.sum()) + len(self._records) * max(head[4], 1)
        if (not isinstance(head[9], list) or highest * (head[0] + 1) >= _INT64_SAFE
                or head[17] * 2 * head[13] >= _INT64_SAFE):
            return
        compiled = kernels.compiled(skyline_kernel)
        ints = lambda values: np.asarray(values, dtype=np.int64)
        self._head = (head[0], ints(head[1]), ints(head[2]), cols.size, head[4],
                      *(ints(a) for a in head[5:13]), *head[13:])
        self._tail = (ints(tail[0]), np.asarray(tail[1], dtype=np.bool_), ints(tail[2]), ints(tail[3]),
                      ints(tail[4]), np.asarray(tail[5], dtype=np.bool_))
        self._kernel, self._sizes, self._compiled = compiled.skyline, cols.size, True

    @property
    def placed(self) -> int:
        return self.to_place - self._remaining

    def offsets(self) -> list[int]:
        out = self._tail[0]
        return out.tolist() if self._compiled else out

    def run(self, stop: StopRule | None) -> int:
        if stop is None and self._cols is not None and not self._compiled and self.placed:
            self._compile()
        watch, limit, by_watch = self._sizes, -1, self._sizes[:0]  # never read without a limit
        pending = np.zeros(0, dtype=np.int64)  # written by the loop: not the read-only sizes
        if stop is not None and not (self._compiled and stop.limit >= _INT64_SAFE):
            watch, limit = stop.watched_sizes(self._records), stop.limit
            # The watched records the loop places (not the empty ones), largest first.
            watched = [i for i, (w, r) in enumerate(zip(watch, self._records)) if w >= 0 and r.size > 0]
            by_watch = sorted(watched, key=lambda i: -watch[i])
            pending = self._pending(watch, watched)
            if self._compiled:
                watch, by_watch = np.asarray(watch, dtype=np.int64), np.asarray(by_watch, dtype=np.int64)
                pending = np.asarray(pending, dtype=np.int64)
        self._remaining = int(self._kernel(*self._head, self._remaining, *self._tail, watch, limit,
                                           by_watch, pending, NEAR))
        return self._remaining

    def _pending(self, watch: list[int], watched: list[int]) -> list[int]:
        """Per rank, the bytes of the watched records not placed yet that live there, counting
        those living at most NEAR ranks (as the loop counts them down)."""
        first_rank, end_rank, placed = self._head[1], self._head[2], self._tail[5]
        delta = [0] * (self._head[0] + 2)
        for i in watched:
            f, e = int(first_rank[i]), int(end_rank[i])
            if not placed[i] and e - f <= NEAR:
                delta[f] += watch[i]
                delta[e] -= watch[i]
        out, running = [], 0
        for d in delta[:-1]:
            running += d
            out.append(running)
        return out


def _python_loop(records: Sequence[UsageRecord], alignment: int, cols=None) -> _Loop:
    """The skyline loop as Python over lists (any integers); `cols`: the records' int64 columns
    when the input is large enough to go on compiled if resumed."""
    n = len(records)
    todo = [i for i, r in enumerate(records) if r.size > 0]  # empty records stay at 0
    unplaced = _Unplaced(records, todo)
    # Segments only ever begin or end at 0, at a record's first operator or just after its last:
    # the skyline works on those points' ranks (operator numbers may be sparse and huge).
    points = sorted({0, *(records[i].first_op for i in todo), *(records[i].last_op + 1 for i in todo)})
    first_rank, end_rank = _ranks(records, points)
    n_ops = len(points) - 1 if todo else 1  # the rank of the end of time
    if not todo:
        points = [0, 1]
    group_at = _first_group_at(unplaced.firsts, points)
    last_rank = len(points) - 1  # an empty record's rank may be past the points: never read
    group_of = [group_at[min(r, last_rank)] for r in first_rank]
    # The skyline starts as one segment [0, n_ops) at height 0 (see `skyline_kernel.skyline`).
    width = n_ops + 1
    begins, stop_of, left_of = [False] * width, [0] * width, [-1] * width
    begins[0], stop_of[0] = True, n_ops
    keys, bounds, tree = unplaced._keys, unplaced._bounds, unplaced._tree
    sizes = [r.size for r in records]
    head = (n_ops, first_rank, end_rank, sizes, alignment, points,
            group_at, group_of, unplaced.firsts,
            keys.tolist() if isinstance(keys, np.ndarray) else keys, bounds[:-1], bounds[1:],
            tree.tolist() if isinstance(tree, np.ndarray) else tree, unplaced._size,
            unplaced._longest, unplaced._per_life, unplaced.per_size, unplaced._none)
    tail = ([0] * n, begins, stop_of, [0] * width, left_of, [False] * n)
    in_columns = cols is not None and isinstance(tree, np.ndarray) and bool(todo)
    return _Loop(skyline_kernel.skyline, records, head, len(todo), tail, sizes, compiled=False,
                 cols=cols if in_columns else None)


def _compiled_loop(records: Sequence[UsageRecord], cols, alignment: int) -> _Loop | None:
    """The same loop compiled, its inputs built from the records' int64 columns; None when a key,
    a height or a heap entry would not fit in int64 ."""
    n = len(records)
    todo = np.flatnonzero(cols.size > 0)
    if not len(todo):
        return None
    unplaced = _Unplaced(records, todo.tolist())
    if not isinstance(unplaced._tree, np.ndarray):
        return None
    points = _distinct(np.concatenate(([0], cols.first[todo], cols.last[todo] + 1)))
    n_ops = len(points) - 1
    width = n_ops + 1
    highest = int(cols.size.sum()) + n * max(alignment, 1)
    if highest * width >= _INT64_SAFE or unplaced._none * 2 * unplaced._size >= _INT64_SAFE:
        return None
    compiled = kernels.compiled(skyline_kernel)
    first_rank = np.searchsorted(points, cols.first)
    end_rank = np.searchsorted(points, cols.last + 1)
    group_at = np.searchsorted(np.asarray(unplaced.firsts, dtype=np.int64), points)
    group_of = group_at[np.minimum(first_rank, n_ops)]  # an empty record's is never read
    begins = np.zeros(width, dtype=np.bool_)
    stop_of = np.zeros(width, dtype=np.int64)
    left_of = np.full(width, -1, dtype=np.int64)
    begins[0], stop_of[0] = True, n_ops
    bounds = np.asarray(unplaced._bounds, dtype=np.int64)
    head = (n_ops, first_rank, end_rank, cols.size, alignment, points, group_at, group_of,
            np.asarray(unplaced.firsts, dtype=np.int64), unplaced._keys, bounds[:-1].copy(),
            bounds[1:].copy(), unplaced._tree, unplaced._size, unplaced._longest,
            unplaced._per_life, unplaced.per_size, unplaced._none)
    tail = (np.zeros(n, dtype=np.int64), begins, stop_of, np.zeros(width, dtype=np.int64), left_of,
            np.zeros(n, dtype=np.bool_))
    return _Loop(compiled.skyline, records, head, len(todo), tail, cols.size, compiled=True)
