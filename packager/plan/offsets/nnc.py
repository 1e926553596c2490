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

Two loops, the same plans: the Python loop below (lists, trees and heaps of Python integers),
and its kernel `kernels.nnc.run` (the same structures over int64 arrays), which runs compiled
from `kernels.COMPILE_FROM` records on.
"""

from __future__ import annotations

from typing import Sequence

import bisect
import heapq

import numpy as np

from packager.plan import kernels
from packager.plan.kernels import nnc as nnc_kernel
from packager.plan.records import OffsetPlan, TimeColumns, UsageRecord, align_up, time_columns

NAME = "nnc"

MAX_TUPLE = 3  # records sharing one slot
SOURCE_LAST = -1  # the source "ends" before every operator
SINK_FIRST = int(np.iinfo(np.int64).max // 4)  # the sink "starts" after every operator


class AllocationGraph:
    """Edges as parallel lists: the earlier end's last operator, the later end's first operator,
    the byte range [lo, hi), and how many of its ends are the source or the sink."""

    def __init__(self, n_ops: int = 1) -> None:
        self.before: list[int] = []  # last op of the edge's start (SOURCE_LAST)
        self.after: list[int] = []  # first op of the edge's end (SINK_FIRST)
        self.lo: list[int] = []
        self.hi: list[int] = []  # lo == hi: a dead edge
        self.dummy_ends: list[int] = []
        # Edges between two records, by the operators strictly inside their time window: a
        # segment tree whose nodes list the edges covering their whole range, so the edges around
        # an operator are those on its leaf-to-root path. Edges with the source or sink at an end
        # are few and listed apart; they only count when no edge between records fits.
        self._leaves = 1 << max(0, n_ops - 1).bit_length()
        self._inner: dict[int, list[int]] = {}
        self._with_dummy: list[int] = []

    @property
    def count(self) -> int:
        return len(self.lo)

    def add(self, before: int, after: int, lo: int, hi: int) -> None:
        if hi <= lo:
            return
        k = len(self.lo)
        dummy = (before == SOURCE_LAST) + (after == SINK_FIRST)
        self.before.append(before)
        self.after.append(after)
        self.lo.append(lo)
        self.hi.append(hi)
        self.dummy_ends.append(dummy)
        if dummy:
            self._with_dummy.append(k)
            return
        inner = self._inner
        left, right = before + 1 + self._leaves, after + self._leaves  # as _nodes, inline
        while left < right:
            if left & 1:
                if left in inner:
                    inner[left].append(k)
                else:
                    inner[left] = [k]
                left += 1
            if right & 1:
                right -= 1
                if right in inner:
                    inner[right].append(k)
                else:
                    inner[right] = [k]
            left >>= 1
            right >>= 1

    def _nodes(self, before: int, after: int):
        """The segment tree's nodes covering operators before+1..after-1."""
        left, right = before + 1 + self._leaves, after + self._leaves
        while left < right:
            if left & 1:
                yield left
                left += 1
            if right & 1:
                right -= 1
                yield right
            left >>= 1
            right >>= 1

    def shrink(self, k: int, lo: int) -> None:
        """Edge k keeps the bytes from `lo` up. An edge left empty fits nothing ever again: it
        leaves the lists, so the searches around an operator look only at live edges."""
        self.lo[k] = lo
        if lo < self.hi[k]:
            return
        self.hi[k] = lo
        if self.dummy_ends[k]:
            self._with_dummy.remove(k)
            return
        for node in self._nodes(self.before[k], self.after[k]):
            self._inner[node].remove(k)

    def best_edge(self, first: int, last: int, size: int, alignment: int) -> int | None:
        """The edge a record alive over [first, last] fits best, or None: the least (ends at the
        source or sink, time gap, weight, offset, edge id)."""
        around: list[int] = []
        node = first + self._leaves
        inner = self._inner
        while node:
            if node in inner:
                around += inner[node]
            node >>= 1
        if around:
            edge = self._least(around, first, last, size, alignment)
            if edge is not None:
                return edge
        if self._with_dummy:
            return self._least(self._with_dummy, first, last, size, alignment)
        return None

    def _least(self, ids: list[int], first: int, last: int, size: int, alignment: int) -> int | None:
        """The best of these edges for the record, or None."""
        before, after, los, his, dummy = self.before, self.after, self.lo, self.hi, self.dummy_ends
        best = None
        for k in ids:
            b, a, lo = before[k], after[k], los[k]
            if b >= first or a <= last:
                continue
            start = -(-lo // alignment) * alignment if alignment > 1 else lo
            if start + size > his[k]:
                continue
            gap = (0 if b == SOURCE_LAST else first - b) + (0 if a == SINK_FIRST else a - last)
            key = (dummy[k], gap, his[k] - lo, lo, k)
            if best is None or key < best:
                best = key
        return None if best is None else best[-1]


def plan(records: Sequence[UsageRecord], alignment: int = 1) -> OffsetPlan:
    alignment = max(1, alignment)
    compiled = _compiled_loop(records, alignment)
    if compiled is not None:
        loop, cols = compiled
        return _plan_by_loop(loop, cols, alignment)
    n = len(records)
    offsets = [0] * n  # zero-size records take no space and keep offset 0
    ids = [i for i, r in enumerate(records) if r.size > 0]
    if not ids:
        return OffsetPlan(NAME, tuple(offsets), 0, alignment)
    first = np.array([r.first_op for r in records], np.int64)
    last = np.array([r.last_op for r in records], np.int64)
    size = np.array([r.size for r in records], np.int64)
    unplaced = np.zeros(n, bool)
    unplaced[ids] = True
    # Scalar reads go to Python lists (a numpy element costs several times a list's); the arrays
    # serve the vector forms. `waiting` mirrors `unplaced`.
    cols = Columns(first.tolist(), last.tolist(), size.tolist(), unplaced.tolist(),
                   _Arrays(first, last, size, unplaced))
    # Counts only go down, one at a time: a list.
    interference = interference_counts(records, ids).tolist()
    time = TimeIndex(first, last)
    windows = Windows(first, size, ids)
    ranked = RankedByStart(records, ids, interference, cols.waiting)
    candidates = Candidates(records, ids, interference, cols.waiting)
    cannot_insert = np.zeros(n, bool)
    tried = [False] * n  # cannot_insert as a list, for the scalar reads
    graph = AllocationGraph(int(last[ids].max()) + 1)
    top = 0  # the buffer's size so far: new slots open here
    ids_array = np.asarray(ids, np.int64)
    # Largest first, ties by position (a stable sort of ascending positions).
    by_size = ids_array[np.argsort(-size[ids_array], kind="stable")].tolist()
    waiting, first_of, last_of, size_of = cols.waiting, cols.first, cols.last, cols.size
    cursor = 0
    while cursor < len(by_size):
        while cursor < len(by_size) and not waiting[by_size[cursor]]:
            cursor += 1
        if cursor == len(by_size):
            break
        largest = size_of[by_size[cursor]]
        # The unplaced records of the largest size, most interfering first (ties: position):
        # the first that fits an edge.
        edge = None
        while True:
            i = candidates.next_to_try(largest, tried)
            if i is None:
                break
            edge = graph.best_edge(first_of[i], last_of[i], largest, alignment)
            if edge is not None:
                chosen = i
                break
            cannot_insert[i] = True
            tried[i] = True
        if edge is None:  # a new slot on top of the buffer, between source and sink, for the
            # first record of that order, tried or not: the best unplaced record of all
            chosen = ranked.best(SOURCE_LAST, SINK_FIRST, [])
            before, after = SOURCE_LAST, SINK_FIRST
            at = align_up(top, alignment)
        else:
            before, after = graph.before[edge], graph.after[edge]
            at = align_up(graph.lo[edge], alignment)
        members = tuple_for(chosen, before, after, unplaced, interference, windows, ranked, cols)
        members.sort(key=first_of.__getitem__)
        for i in members:
            offsets[i] = at
            unplaced[i] = False
            waiting[i] = False
            windows.placed(i, unplaced)
        slot = max(size_of[i] for i in members)
        if edge is None:
            top = at + slot
            # New edges appear around the tuple: records that interfere with none of its members
            # may fit them now.
            reopen = size <= slot
            for i in members:
                reopen &= (last < first[i]) | (first > last[i])
            candidates.reopen(np.flatnonzero(cannot_insert & reopen & unplaced).tolist())
            for i in np.flatnonzero(cannot_insert & reopen).tolist():
                tried[i] = False
            cannot_insert &= ~reopen
        else:
            graph.shrink(edge, at + slot)  # the rest of the edge stays for others
        rewire(graph, members, before, after, at, cols)
        for i in members:
            for j in time.waiting_meeting(first_of[i], last_of[i], cols):
                interference[j] -= 1
    arena = max(offsets[i] + records[i].size for i in ids)
    return OffsetPlan(NAME, tuple(offsets), arena, alignment)


# The compiled loop's numbers stay inside int64: offsets (at most the sizes and the alignment
# padding summed), operators below the sink's, partner ranks (about the cube of the record count).
_INT64_SAFE = 1 << 61


def _compiled_loop(records: Sequence[UsageRecord], alignment: int):
    """(`kernels.nnc.run` compiled, the records' columns), or None: too few records, or numbers
    too large for int64."""
    n = len(records)
    if not kernels.use_kernel(n) or (n + 1) ** 3 >= _INT64_SAFE:
        return None
    cols = time_columns(records)  # None when a number is too large for int64 sums
    if cols is None or alignment * n >= _INT64_SAFE or int(cols.last.max()) >= SINK_FIRST:
        return None
    if not kernels.use_kernel(int(np.count_nonzero(cols.size))):
        return None
    return kernels.compiled(nnc_kernel).run, cols


def _plan_by_loop(loop, cols: TimeColumns, alignment: int) -> OffsetPlan:
    """The plan by `kernels.nnc.run` (compiled or not) over the records' columns."""
    offsets = run_loop(loop, cols.first, cols.last, cols.size, alignment, cols.starts)
    placed = cols.size > 0
    arena = int((offsets[placed] + cols.size[placed]).max()) if placed.any() else 0
    return OffsetPlan(NAME, tuple(offsets.tolist()), arena, alignment)


def run_loop(loop, first: np.ndarray, last: np.ndarray, size: np.ndarray, alignment: int,
             distinct_firsts: np.ndarray | None = None) -> np.ndarray:
    """The offsets by `kernels.nnc.run` (compiled or not) over int64 columns: the inputs it takes,
    built as arrays (`distinct_firsts`: the sorted distinct first operators, if known)."""
    n = len(first)
    ids = np.flatnonzero(size > 0)
    if len(ids) == 0:
        return np.zeros(n, np.int64)
    interference = np.zeros(n, np.int64)
    interference[ids] = _meeting_counts(first[ids], last[ids])
    by_size = ids[np.argsort(-size[ids], kind="stable")]
    distinct_sizes, inverse = np.unique(size[ids], return_inverse=True)
    ascending = inverse.reshape(-1).astype(np.int64)  # smallest 0
    size_rank = np.zeros(n, np.int64)
    size_rank[ids] = len(distinct_sizes) - 1 - ascending  # largest 0
    order = ids[np.argsort(first[ids], kind="stable")]
    ranks = np.zeros(n, np.int64)
    ranks[ids] = (ascending * (n + 1) + interference[ids]) * (n + 1) + (n - ids)
    class_ids, class_firsts, class_bounds, class_longest = _lifetime_classes(first, last)
    if distinct_firsts is None:
        distinct_firsts = np.unique(first)
    starts = first[order]
    return loop(first, last, size, by_size, interference, size_rank, order, ranks, class_ids,
                class_firsts, class_bounds, class_longest,
                np.searchsorted(distinct_firsts, first), np.searchsorted(distinct_firsts, last, "right"),
                np.int64(len(distinct_firsts)), np.searchsorted(starts, first),
                np.searchsorted(starts, last, "right"), np.int64(alignment))


def _lifetime_classes(first: np.ndarray, last: np.ndarray):
    """TimeIndex's lifetime classes as flat arrays: the records class after class (each class by
    first operator), their first operators, where each class begins, its longest lifetime."""
    time = TimeIndex(first, last, as_lists=False)
    class_ids = np.concatenate([c[0] for c in time.classes]).astype(np.int64)
    class_firsts = np.concatenate([c[1] for c in time.classes]).astype(np.int64)
    class_bounds = np.zeros(len(time.classes) + 1, np.int64)
    class_bounds[1:] = np.cumsum([len(c[0]) for c in time.classes])
    class_longest = np.array([c[2] for c in time.classes], np.int64)
    return class_ids, class_firsts, class_bounds, class_longest


class _Arrays:
    """The records' columns as arrays (the vector forms of the queries)."""

    def __init__(self, first: np.ndarray, last: np.ndarray, size: np.ndarray,
                 unplaced: np.ndarray) -> None:
        self.first, self.last, self.size, self.unplaced = first, last, size, unplaced


class Columns:
    """The records' columns as lists (first and last operator, size, still waiting), and as
    arrays for the vector forms of the same queries."""

    def __init__(self, first: list[int], last: list[int], size: list[int], waiting: list[bool],
                 arrays: _Arrays | None = None) -> None:
        self.first, self.last, self.size, self.waiting = first, last, size, waiting
        self.arrays = arrays


class Candidates:
    """The records to try on an edge: unplaced, not known to fit none, largest first, then most
    interfering, then lowest position. A heap with lazy entries (counts only go down: an entry
    found out of date at the top is pushed again with the current count; placed records and
    records that cannot be inserted leave when they reach the top; `reopen` brings the latter
    back), so each try costs a few heap steps instead of a pass over the size class."""

    def __init__(self, records: Sequence[UsageRecord], ids: Sequence[int],
                 interference: Sequence[int], unplaced: Sequence[bool]) -> None:
        self._size = [r.size for r in records]
        self._interference, self._unplaced = interference, unplaced
        # An entry is one integer ordered as (-size, -count, position): the size's rank among
        # the sizes (largest 0), the count below the largest, the position; an integer compares
        # in one step where a tuple compares field by field. Counts only go down: they stay in
        # range.
        sizes = sorted({self._size[i] for i in ids}, reverse=True)
        self._size_rank = {s: k for k, s in enumerate(sizes)}
        self._counts = max((interference[i] for i in ids), default=0) + 1
        self._positions = len(records)
        self._heap = [self._key(i) for i in ids]
        heapq.heapify(self._heap)

    def _key(self, i: int) -> int:
        return ((self._size_rank[self._size[i]] * self._counts + self._counts - 1 - self._interference[i])
                * self._positions + i)

    def next_to_try(self, largest: int, cannot_insert: Sequence[bool]) -> int | None:
        """The first record of size `largest` to try, or None when every one was tried."""
        heap, unplaced, interference = self._heap, self._unplaced, self._interference
        positions, counts = self._positions, self._counts
        while heap:
            key = heap[0]
            i = key % positions
            if not unplaced[i] or cannot_insert[i]:
                heapq.heappop(heap)
                continue
            current = interference[i]
            if counts - 1 - (key // positions) % counts != current:
                heapq.heapreplace(heap, self._key(i))
                continue
            return i if self._size[i] == largest else None
        return None

    def reopen(self, ids: Sequence[int]) -> None:
        """These records may fit an edge again."""
        for i in ids:
            heapq.heappush(self._heap, self._key(i))


class RankedByStart:
    """The best partner in a wide time window without filtering every record of it.

    The chosen record is of the largest size still unplaced, so a partner is simply the best
    (largest, then most interfering, then lowest position) unplaced record that starts and ends
    inside the window and interferes with no member. Records sorted by first operator are the
    leaves of a max tree of that rank; a query walks the tree best first over the window's
    leaves and passes over only records that end after the window or meet a member.

    Interference counts only go down and placed records only leave, so a stored rank is never
    below the true one: a leaf found out of date is corrected (with its ancestors) and put back
    in the walk, and the first leaf whose stored rank is true and which fits is the answer."""

    # Windows with at most this many records are filtered directly (the vector form).
    NARROW = 512

    def __init__(self, records: Sequence[UsageRecord], ids: Sequence[int],
                 interference: Sequence[int], unplaced: Sequence[bool]) -> None:
        n = len(records)
        self._first = [r.first_op for r in records]
        self._last = [r.last_op for r in records]
        sizes = sorted({records[i].size for i in ids})
        rank_of = {s: k for k, s in enumerate(sizes)}
        self._base = [rank_of.get(r.size, 0) * (n + 1) for r in records]
        self._n = n
        self._interference, self._unplaced = interference, unplaced
        self._order = sorted(ids, key=lambda i: (self._first[i], i))
        self._starts = [self._first[i] for i in self._order]
        leaves = 1
        while leaves < len(self._order):
            leaves *= 2
        self._leaves = leaves
        tree = [-1] * (2 * leaves)
        counts = list(interference)
        for k, i in enumerate(self._order):
            tree[leaves + k] = self._rank(i, counts[i])
        for node in range(leaves - 1, 0, -1):
            tree[node] = max(tree[2 * node], tree[2 * node + 1])
        self._tree = tree

    def _rank(self, i: int, count: int) -> int:
        return (self._base[i] + count) * (self._n + 1) + (self._n - i)

    def span(self, before: int, after: int) -> tuple[int, int]:
        """Where the records starting inside (before, after) lie in the tree's leaves."""
        return self._range(before, after)

    def _range(self, before: int, after: int) -> tuple[int, int]:
        return bisect.bisect_right(self._starts, before), bisect.bisect_left(self._starts, after)

    def best(self, before: int, after: int, members: list[int],
             span: tuple[int, int] | None = None) -> int | None:
        """The best partner of `members` inside (before, after) (`span`: its _range), or None."""
        lo, hi = self._range(before, after) if span is None else span
        tree, leaves = self._tree, self._leaves
        first, last, order = self._first, self._last, self._order
        interference, unplaced = self._interference, self._unplaced
        # Frontier entries are single integers ordered as (-stored rank, node): -rank * nodes + node
        # (one comparison where a tuple takes several).
        nodes = 2 * leaves
        frontier: list[int] = []
        lo += leaves
        hi += leaves
        while lo < hi:
            if lo & 1:
                if tree[lo] >= 0:
                    frontier.append(lo - tree[lo] * nodes)
                lo += 1
            if hi & 1:
                hi -= 1
                if tree[hi] >= 0:
                    frontier.append(hi - tree[hi] * nodes)
            lo >>= 1
            hi >>= 1
        heapq.heapify(frontier)
        pop, push = heapq.heappop, heapq.heappush
        while frontier:
            key = pop(frontier)
            node = key % nodes
            stored = (node - key) // nodes
            # Down to the leaf of the node's rank: its child of the same rank outranks everything
            # else waiting (a node's rank is its children's maximum), so it would be popped next;
            # the other child waits in the frontier.
            while node < leaves:
                left, right = tree[2 * node], tree[2 * node + 1]
                if left > right:
                    node = 2 * node
                    if right >= 0:
                        push(frontier, node + 1 - right * nodes)
                else:
                    node = 2 * node + 1
                    if left >= 0:
                        push(frontier, node - 1 - left * nodes)
            i = order[node - leaves]
            true = self._rank(i, interference[i]) if unplaced[i] else -1
            if true != stored:
                self._correct(node, true)
                if true >= 0:
                    push(frontier, node - true * nodes)
                continue
            if last[i] < after and all(last[i] < first[m] or first[i] > last[m] for m in members):
                return i
        return None

    def _correct(self, node: int, rank: int) -> None:
        tree = self._tree
        tree[node] = rank
        node >>= 1
        while node:
            best = max(tree[2 * node], tree[2 * node + 1])
            if tree[node] == best:
                break
            tree[node] = best
            node >>= 1


class TimeIndex:
    """Records sorted by first operator, so that "records starting inside a time window" is a
    slice instead of a scan of every record. For "records alive in a window" the records are
    also split by lifetime, in classes a factor of 8 apart: each class is looked back into by its
    own longest lifetime only, so one record alive through the whole model (a chain's input under
    TFLite) does not make every query slice every record (16 of NNC's 25 s at 100,000 records)."""

    def __init__(self, first: np.ndarray, last: np.ndarray, as_lists: bool = True) -> None:
        self.by_first = np.argsort(first, kind="stable")
        self.sorted_first = first[self.by_first]
        span = (last - first)[self.by_first]
        lifetime_class = np.zeros(len(span), np.int64)
        long = span > 0
        lifetime_class[long] = (np.floor(np.log2(span[long])).astype(np.int64) + 1) // 3
        # (records of the class in first-operator order, their first operators, longest lifetime)
        self.classes = []
        for c in np.unique(lifetime_class):
            where = lifetime_class == c
            self.classes.append((self.by_first[where], self.sorted_first[where], int(span[where].max())))
        # The same classes as lists, for the query of one placed record's neighbours.
        self._class_lists = [(ids.tolist(), firsts.tolist(), longest)
                             for ids, firsts, longest in self.classes] if as_lists else []

    # A class's slice longer than this is filtered as arrays rather than element by element.
    SLICE_BY_ARRAY = 96

    def waiting_meeting(self, first: int, last: int, cols: "Columns") -> list[int]:
        """The unplaced records alive at some operator of [first, last], each once."""
        out: list[int] = []
        waiting, lasts_of = cols.waiting, cols.last
        for k, (ids, firsts, longest) in enumerate(self._class_lists):
            a = bisect.bisect_left(firsts, first - longest)
            b = bisect.bisect_right(firsts, last)
            if b - a > self.SLICE_BY_ARRAY:
                near = self.classes[k][0][a:b]
                arrays = cols.arrays
                keep = arrays.unplaced[near] & (arrays.last[near] >= first)
                out += near[keep].tolist()
                continue
            for j in ids[a:b]:
                if waiting[j] and lasts_of[j] >= first:
                    out.append(j)
        return out

    def starting_in(self, after: int, before: int) -> np.ndarray:
        """Records with after < first_op < before."""
        a = self.sorted_first.searchsorted(after, side="right")
        b = self.sorted_first.searchsorted(before, side="left")
        return self.by_first[a:b]

    def may_meet(self, first: int, last: int) -> np.ndarray:
        """A superset of the records alive at some operator of [first, last] (in no set order)."""
        parts = []
        for records, firsts, longest in self.classes:
            a = firsts.searchsorted(first - longest, side="left")
            b = firsts.searchsorted(last, side="right")
            if b > a:
                parts.append(records[a:b])
        if len(parts) == 1:
            return parts[0]
        return np.concatenate(parts) if parts else self.by_first[:0]


def tuple_for(chosen: int, before: int, after: int, unplaced, interference, windows: "Windows",
              ranked: "RankedByStart", cols: "Columns") -> list[int]:
    """`chosen` and up to MAX_TUPLE - 1 partners: unplaced, no larger, inside the edge's time
    window, interfering with no member; largest first, then most interfering."""
    members = [chosen]
    span = ranked.span(before, after)
    if span[1] - span[0] > ranked.NARROW:  # a wide window: the rank tree
        while len(members) < MAX_TUPLE:
            partner = ranked.best(before, after, members, span)
            if partner is None:
                break
            members.append(partner)
        return members
    return _tuple_in_window(members, before, after, unplaced, interference, windows, cols)


def _tuple_in_window(members: list[int], before: int, after: int, unplaced, interference,
                     windows: "Windows", cols: "Columns") -> list[int]:
    """Partners from a narrow window. Every unplaced record is at most the first member's size:
    a partner of that size, if any, wins, so its size class (a short list) is searched before
    every record of the window. A short window is read element by element from lists (numpy's
    fixed cost per call would be most of the work), a long one as arrays: the same choice."""
    while len(members) < MAX_TUPLE:
        partner = None
        for entry in (windows.class_entry(members[0]), windows.all_entry()):
            a, b = windows.span(entry, before, after)
            if b - a > SHORT_WINDOW:
                partner = _best_partner(entry[0][a:b], members, after, cols.arrays.first,
                                        cols.arrays.last, cols.arrays.size, unplaced, interference)
            else:
                partner = _best_partner_of_list(entry[3][a:b], members, after, interference, cols)
            if partner is not None:
                break
        if partner is None:
            break
        members.append(partner)
    return members


# A window with more records than this is filtered as arrays.
SHORT_WINDOW = 48


def _best_partner_of_list(window: list[int], members: list[int], after: int, interference,
                          cols: "Columns") -> int | None:
    """_best_partner over a list: the greatest (size, interference, -position) among the records
    that qualify."""
    waiting, firsts, lasts, sizes = cols.waiting, cols.first, cols.last, cols.size
    cap = sizes[members[0]]
    spans = [(firsts[m], lasts[m]) for m in members]
    best, best_key = None, None
    for j in window:
        if not waiting[j]:
            continue
        end = lasts[j]
        if end >= after:
            continue
        s = sizes[j]
        if s > cap:
            continue
        start = firsts[j]
        for m_first, m_last in spans:
            if end >= m_first and start <= m_last:
                break
        else:
            key = (s, interference[j], -j)
            if best_key is None or key > best_key:
                best, best_key = j, key
    return best


def _best_partner(window: np.ndarray, members: list[int], after: int, first, last, size,
                  unplaced, interference) -> int | None:
    """The largest, then most interfering, then lowest-position record of `window` that is
    unplaced, ends before `after`, is no larger than the first member and interferes with none."""
    ends, starts = last[window], first[window]
    fits = unplaced[window] & (ends < after)
    for m in members:
        fits &= (ends < first[m]) | (starts > last[m])
    candidates = window[fits]
    if candidates.size == 0:
        return None
    sizes = size[candidates]
    candidates, sizes = candidates[sizes <= size[members[0]]], sizes[sizes <= size[members[0]]]
    if candidates.size == 0:
        return None
    # One pass per key, no sort.
    candidates = candidates[sizes == sizes.max()]
    if candidates.size == 1:
        return int(candidates[0])
    counts = np.array([interference[j] for j in candidates.tolist()], np.int64)
    candidates = candidates[counts == counts.max()]
    return int(candidates.min())


class Windows:
    """The records starting inside an edge's time window: all of them, or those of one size
    class. Each list is sorted by first operator and drops its placed records once half of them
    are placed, so windows stay near the records still waiting."""

    def __init__(self, first: np.ndarray, size: np.ndarray, ids: Sequence[int]) -> None:
        self._first, self._size = first, size
        self._size_list = size.tolist()
        ids = np.asarray(ids, np.int64)
        self._all = self._sorted(ids)
        self._classes: dict[int, list] = {}
        for s in np.unique(size[ids]).tolist():
            self._classes[s] = self._sorted(ids[size[ids] == s])

    def _sorted(self, positions: np.ndarray) -> list:
        order = positions[np.argsort(self._first[positions], kind="stable")]
        return self._entry(order)

    def _entry(self, order: np.ndarray) -> list:
        # positions, their firsts, live guess; the same positions and firsts as lists
        firsts = self._first[order]
        return [order, firsts, len(order), order.tolist(), firsts.tolist()]

    def placed(self, i: int, unplaced: np.ndarray) -> None:
        for entry in (self._all, self._classes[self._size_list[i]]):
            entry[2] -= 1
            if 2 * entry[2] < len(entry[0]):
                entry[:] = self._entry(entry[0][unplaced[entry[0]]])

    def span(self, entry: list, after: int, before: int) -> tuple[int, int]:
        """Where the entry's records with after < first_op < before lie."""
        return bisect.bisect_right(entry[4], after), bisect.bisect_left(entry[4], before)

    def all_entry(self) -> list:
        return self._all

    def class_entry(self, i: int) -> list:
        return self._classes[self._size_list[i]]



def rewire(graph: AllocationGraph, members: Sequence[int], before: int, after: int, at: int,
           cols: "Columns") -> None:
    """Edges around a tuple placed at `at` (members in time order), as libccv inserts them: for
    every byte of the slot, its users in time order are linked by an edge."""
    firsts, lasts = cols.first, cols.last
    sizes = [cols.size[i] for i in members]
    taken = 0  # bytes of the slot already fed from the edge's start
    for i, s in zip(members, sizes):
        if s > taken:
            graph.add(before, firsts[i], at + taken, at + s)
            taken = s
    for k, (i, s) in enumerate(zip(members, sizes)):
        passed = 0  # bytes of member i already handed to a later member
        for j, t in zip(members[k + 1:], sizes[k + 1:]):
            shared = min(s, t)
            if shared > passed:
                graph.add(lasts[i], firsts[j], at + passed, at + shared)
                passed = shared
            if passed == s:
                break
        if s > passed:
            graph.add(lasts[i], after, at + passed, at + s)


def interference_counts(records: Sequence[UsageRecord], ids: Sequence[int]) -> np.ndarray:
    """For each record, how many others are alive at some common operator (by a sweep: the
    records alive at its start, plus those starting during its life)."""
    counts = np.zeros(len(records), np.int64)
    own_first = np.array([records[i].first_op for i in ids], np.int64)
    own_last = np.array([records[i].last_op for i in ids], np.int64)
    counts[np.asarray(ids, np.int64)] = _meeting_counts(own_first, own_last)
    return counts


def _meeting_counts(own_first: np.ndarray, own_last: np.ndarray) -> np.ndarray:
    """interference_counts over the columns of the records counted."""
    firsts, lasts = np.sort(own_first), np.sort(own_last)
    # Others that start at or before the record's last op and end at or after its first op.
    started = np.searchsorted(firsts, own_last, side="right")
    ended_before = np.searchsorted(lasts, own_first, side="left")
    return started - ended_before - 1
