"""The skyline tree search's first (greedy) descent in n log n: the same choices, found by index.

The tree search (best_fit_search) keeps its skyline as one height per cell of compressed time and
lists every record inside the lowest segment at every step: fine for the bounded descents, which
need every candidate, but quadratic for the greedy descent when the lowest segment is long (the
untouched right part of the timeline, where everything is still at height 0). The greedy descent
needs only the first candidate, so here:

- the skyline is a list of runs (maximal stretches of cells at one height), linked to their
  neighbours, with a heap that gives the lowest run (leftmost on ties);
- the unplaced records sit in two min-trees of their preference rank, one ordered by (first
  cell, rank) and one by (last cell, rank): each candidate class the search tries first (records
  starting at the segment's start, records ending at its end, records inside it) is then one or a
  few ranges of these orders, a minimum in log time.

A record starting inside the segment but ending beyond it (it crosses the higher cell after the
segment) does not fit: such records are skipped a whole (first cell) block at a time, and there
are never more of them than records alive at one instant.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from heapq import heappop, heappush
from typing import Callable, Sequence

RAISE = -1


class MinTree:
    """Minimum over ranges of a fixed array of ints; an entry can be removed (set to `none`)."""

    def __init__(self, values: Sequence[int], none: int) -> None:
        self.width = w = max(1, len(values))
        self.none = none
        tree = [none] * (2 * w)
        tree[w:w + len(values)] = values
        for i in range(w - 1, 0, -1):
            left, right = tree[2 * i], tree[2 * i + 1]
            tree[i] = left if left < right else right
        self.tree = tree

    def remove(self, position: int) -> None:
        tree = self.tree
        i = position + self.width
        tree[i] = self.none
        i >>= 1
        while i:
            left, right = tree[2 * i], tree[2 * i + 1]
            low = left if left < right else right
            if tree[i] == low:
                break  # nothing above changes
            tree[i] = low
            i >>= 1

    def least(self, lo: int, hi: int) -> int:
        """The minimum of positions [lo, hi), or `none`."""
        tree, out = self.tree, self.none
        lo += self.width
        hi += self.width
        while lo < hi:
            if lo & 1:
                v = tree[lo]
                if v < out:
                    out = v
                lo += 1
            if hi & 1:
                hi -= 1
                v = tree[hi]
                if v < out:
                    out = v
            lo >>= 1
            hi >>= 1
        return out


def greedy_descent(first: Sequence[int], last: Sequence[int], size: Sequence[int],
                   by_preference: Sequence[int], cells: int, alignment: int,
                   node_limit: int, stop: Callable[[], bool]
                   ) -> tuple[list[int], list[int], int] | tuple[None, None, int]:
    """The descent with no cap and the heuristic's own order: (offsets, actions, nodes).

    Records are numbered 0..n-1 (first/last are inclusive cells, sizes positive); `by_preference`
    lists them best first (longer lifetime, then larger size, then number). Offsets and actions
    are None when `node_limit` nodes or `stop` (polled every 256 nodes) end it first.
    """
    n = len(first)
    offset = [0] * n
    if n == 0:
        return offset, [], 0
    none = n  # ranks run 0..n-1
    rank = [0] * n
    for position, k in enumerate(by_preference):
        rank[k] = position
    # Order A: by first cell, then rank (within a first cell: longer, i.e. later last, first).
    order_a = sorted(range(n), key=lambda k: (first[k], rank[k]))
    minus_last_a = [-last[k] for k in order_a]
    block_a = _block_starts([first[k] for k in order_a], cells)
    # Order B: by last cell, then rank (within a last cell: earlier first first).
    order_b = sorted(range(n), key=lambda k: (last[k], rank[k]))
    first_b = [first[k] for k in order_b]
    block_b = _block_starts([last[k] for k in order_b], cells)
    at_a, at_b = [0] * n, [0] * n
    for i, k in enumerate(order_a):
        at_a[k] = i
    for i, k in enumerate(order_b):
        at_b[k] = i
    tree_a = MinTree([rank[k] for k in order_a], none)
    tree_b = MinTree([rank[k] for k in order_b], none)
    least_a, least_b = tree_a.least, tree_b.least

    def fitting_inside(a: int, z: int) -> int:
        """The best unplaced record within cells [a, z] (rank `none` if there is none)."""
        ranges = [(least_a(block_a[a], block_a[z + 1]), block_a[a], block_a[z + 1])]
        while ranges:
            v, lo, hi = heappop(ranges)
            if v == none:
                return none
            k = by_preference[v]
            if last[k] <= z:
                return v
            # k ends beyond z: so do the records before the first one of its block ending by z.
            c = first[k]
            fits = bisect_left(minus_last_a, -z, block_a[c], block_a[c + 1])
            for l2, h2 in ((lo, block_a[c]), (max(lo, fits), hi)):
                if l2 < h2:
                    v2 = least_a(l2, h2)
                    if v2 != none:
                        heappush(ranges, (v2, l2, h2))
        return none

    def choose(a: int, z: int) -> int:
        """The first candidate of the segment [a, z] in the search's order, or RAISE."""
        lo, hi = block_a[a], block_a[a + 1]
        if lo < hi:  # records starting at a, ending by z: ending at z first
            fits = bisect_left(minus_last_a, -z, lo, hi)
            if fits < hi:
                ends = bisect_right(minus_last_a, -z, fits, hi)
                v = least_a(fits, ends)
                if v == none:
                    v = least_a(ends, hi)
                if v != none:
                    return by_preference[v]
        lo, hi = block_b[z], block_b[z + 1]  # records inside, ending at z
        v = least_b(bisect_left(first_b, a, lo, hi), hi)
        if v == none:
            v = fitting_inside(a, z)
        return RAISE if v == none else by_preference[v]

    # The skyline as runs: a run starts at cell s (live[s]), ends at end[s], at height[s]; prev[s]
    # is the previous run's start (-1 for none). The heap holds (height, start) of runs, stale
    # entries skipped: its least live entry is the lowest segment, leftmost on ties.
    live = bytearray(cells)
    end, height, prev = [0] * cells, [0] * cells, [-1] * cells
    live[0], end[0] = 1, cells - 1
    lowest = [(0, 0)]

    def rewrite(a: int, z: int, runs: list[list[int]]) -> None:
        """Cells a..z (one run) now hold `runs` ([start, end, height], adjacent ones differing):
        merge them with the neighbouring runs where heights meet."""
        before = prev[a]
        live[a] = 0
        if before >= 0 and height[before] == runs[0][2]:
            runs[0][0] = before
            before = prev[before]
        after = z + 1
        if after < cells and height[after] == runs[-1][2]:
            runs[-1][1] = end[after]
            live[after] = 0
        for s, e, h in runs:
            live[s], end[s], height[s], prev[s] = 1, e, h, before
            heappush(lowest, (h, s))
            before = s
        if runs[-1][1] + 1 < cells:
            prev[runs[-1][1] + 1] = before

    actions: list[int] = []
    to_place, nodes = n, 0
    while True:
        while True:
            h, a = lowest[0]
            if live[a] and height[a] == h:
                break
            heappop(lowest)
        z = end[a]
        k = choose(a, z)
        if k == RAISE:
            walls = [height[c] for c in (prev[a], z + 1) if 0 <= c < cells]
            if not walls:
                raise AssertionError("no record fits a segment that spans the whole timeline")
            rewrite(a, z, [[a, z, min(walls)]])
        else:
            start = -(-h // alignment) * alignment
            offset[k] = start
            to_place -= 1
            tree_a.remove(at_a[k])
            tree_b.remove(at_b[k])
            f, l = first[k], last[k]
            runs = [[f, l, start + size[k]]]
            if f > a:
                runs.insert(0, [a, f - 1, h])
            if l < z:
                runs.append([l + 1, z, h])
            rewrite(a, z, runs)
        actions.append(k)
        nodes += 1
        if to_place == 0:
            return offset, actions, nodes
        if nodes >= node_limit or (nodes & 255 == 0 and stop()):
            return None, None, nodes


def _block_starts(keys: Sequence[int], cells: int) -> list[int]:
    """For sorted cell keys: out[c] is the first position whose key is c or more (c in 0..cells)."""
    out = [0] * (cells + 2)
    for c in range(cells + 2):
        out[c] = bisect_left(keys, c)
    return out
