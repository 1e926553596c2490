"""Strip packing's skyline loop as one plain function over flat sequences, so that the same source
runs as Python (lists; any integers) or compiled by numba (int64 arrays; see `kernels.compiled`)
with identical offsets. `strip_packing.py` states the rules and builds the inputs.

Everything is one function without calls to helpers: numba compiles only functions it is given,
and the uncompiled run must be the very same code.
"""

from __future__ import annotations

import heapq

# Queries over at most this many first operators scan them directly; wider ones use the tree.
SCAN = 12


def skyline(n_ops, first_rank, end_rank, sizes, alignment, points, group_at, group_of,
            gfirst, gkeys, gstart, gend, tree, leaves, longest, per_life, per_size, none,
            remaining, offsets, begins, stop_of, height_of, left_of, placed, watch, limit, by_watch,
            pending, near):
    """Offsets into `offsets` for the `remaining` unplaced records; returns how many are left
    unplaced: 0, or more when `limit` >= 0 stopped the loop because a record i will end above it
    (`watch[i]` < 0: record i never stops it): right after placing one with
    `offset + watch[i] > limit`, or before a step when the lowest segment (which never gets
    lower) leaves no room under the limit for the largest unplaced one (`by_watch`: the watched
    records, largest first; `placed[i]` marks those placed). A later call with the same arrays
    and that count resumes where it stopped. It also stops when a segment is raised so high that
    the watched records still to place over one of its points cannot all fit under the limit:
    they will be stacked there above its height (if any). `pending[rank]` sums those records' sizes,
    counting only the records living at most `near` ranks, and only segments at most `near`
    ranks wide are checked (an undercount, so the stop stays sound, at a bounded cost per step).

    The unplaced records: group k (records whose first operator is `gfirst[k]`) holds the keys
    `gkeys[gstart[k]:gend[k]]`, sorted best first; a key is (longest - lifetime) * per_life +
    (size rank from the largest) * per_size + position. `tree` is a segment tree (min) over the
    groups' heads with `leaves` leaves, `none` above every key. The skyline: segments
    [start, stop) of ranks among `points`, `begins`/`stop_of`/`height_of`/`left_of` per start
    (one segment [0, n_ops) at height 0 to begin with). `group_at[rank]` is the first group at
    or after points[rank]; `group_of[i]` the group of record i."""
    width = n_ops + 1
    span = 2 * leaves
    # Height * width + start per segment; an entry whose start no longer begins a segment of
    # that height is stale, and dropped when it reaches the top. Built from the segments, so
    # that a resumed call starts from the same lowest segment ([0] on the first call).
    heap = [0]
    heap.pop()
    for s in range(width):
        if begins[s]:
            heap.append(height_of[s] * width + s)
    heapq.heapify(heap)
    frontier = [0]  # the wide query's tree nodes, key * span + node
    largest = 0  # the first record of `by_watch` not placed yet
    while remaining:
        while True:  # the lowest segment, the leftmost of equal ones
            height = heap[0] // width
            start = heap[0] % width
            if begins[start] and height_of[start] == height:
                break
            heapq.heappop(heap)
        if limit >= 0:
            while largest < len(by_watch) and placed[by_watch[largest]]:
                largest += 1
            lowest = -(-height // alignment) * alignment if alignment > 1 else height
            if largest < len(by_watch) and lowest + watch[by_watch[largest]] > limit:
                return remaining
        stop = stop_of[start]
        lo = group_at[start]
        hi = group_at[stop]
        end_op = points[stop] - 1
        key = none
        # The best unplaced record living inside the segment: the first key of each group that
        # lives at most `end_op - first` operators, the least of those.
        if hi - lo <= SCAN:
            for k in range(lo, hi):
                a = gstart[k]
                b = gend[k]
                if a == b or gkeys[a] >= key:
                    continue
                floor = (longest - (end_op - gfirst[k])) * per_life
                if gkeys[a] >= floor:
                    key = gkeys[a]
                    continue
                while a < b:
                    m = (a + b) // 2
                    if gkeys[m] < floor:
                        a = m + 1
                    else:
                        b = m
                if a < gend[k] and gkeys[a] < key:
                    key = gkeys[a]
        else:
            # The groups' heads, best first: a head that does not fit in time is the only reason
            # to look further, and no head left that cannot beat the best found ends the walk.
            frontier.clear()
            lo += leaves
            hi += leaves
            while lo < hi:  # the canonical nodes covering the range
                if lo & 1:
                    if tree[lo] < none:
                        frontier.append(tree[lo] * span + lo)
                    lo += 1
                if hi & 1:
                    hi -= 1
                    if tree[hi] < none:
                        frontier.append(tree[hi] * span + hi)
                lo //= 2
                hi //= 2
            heapq.heapify(frontier)
            while len(frontier) > 0 and frontier[0] // span < key:
                node = heapq.heappop(frontier) % span
                if node < leaves:
                    for child in (2 * node, 2 * node + 1):
                        if tree[child] < key:
                            heapq.heappush(frontier, tree[child] * span + child)
                    continue
                k = node - leaves
                floor = (longest - (end_op - gfirst[k])) * per_life
                a = gstart[k]
                b = gend[k]
                while a < b:
                    m = (a + b) // 2
                    if gkeys[m] < floor:
                        a = m + 1
                    else:
                        b = m
                if a < gend[k] and gkeys[a] < key:
                    key = gkeys[a]
        if key == none:
            # None fits: raise the segment to its lower neighbour and merge. Only reachable with a
            # neighbour: a lone segment spans all time, and fits everything.
            left = left_of[start]
            if left < 0:
                raised = height_of[stop]
            elif stop < n_ops and height_of[stop] < height_of[left]:
                raised = height_of[stop]
            else:
                raised = height_of[left]
            height_of[start] = raised
            heapq.heappush(heap, raised * width + start)
            if limit >= 0 and stop - start <= near:
                for r in range(start, stop):
                    if pending[r] > 0 and raised + pending[r] > limit:
                        remaining = -remaining - 1  # stopped: merge below, then return
                        break
            s = start
        else:
            i = key % per_size
            first = first_rank[i]
            end = end_rank[i]
            offset = -(-height // alignment) * alignment if alignment > 1 else height
            offsets[i] = offset
            placed[i] = True
            if limit >= 0 and watch[i] > 0 and end_rank[i] - first_rank[i] <= near:
                for r in range(first_rank[i], end_rank[i]):
                    pending[r] -= watch[i]
            top = offset + sizes[i]
            # Cover [first, end) of the segment with `top`: what is left of it keeps its height.
            if start < first:
                stop_of[start] = first
                left = start
            else:
                left = left_of[start]
            begins[first] = True
            stop_of[first] = end
            height_of[first] = top
            left_of[first] = left
            heapq.heappush(heap, top * width + first)
            if end < stop:
                begins[end] = True
                stop_of[end] = stop
                height_of[end] = height
                left_of[end] = first
                heapq.heappush(heap, height * width + end)
                if stop < n_ops:
                    left_of[stop] = end
            elif stop < n_ops:
                left_of[stop] = first
            # The record leaves its group; a new head goes up the tree as far as it changes.
            k = group_of[i]
            a = gstart[k]
            b = gend[k]
            while a < b:
                m = (a + b) // 2
                if gkeys[m] < key:
                    a = m + 1
                else:
                    b = m
            if a == gstart[k]:  # the head (the usual case): the group starts one later
                gstart[k] += 1
                node = k + leaves
                tree[node] = gkeys[a + 1] if gend[k] > a + 1 else none
                node //= 2
                while node:
                    best = min(tree[2 * node], tree[2 * node + 1])
                    if tree[node] == best:
                        break  # nothing above changes either
                    tree[node] = best
                    node //= 2
            else:
                # shift the group's tail left by one, element by element: compiled, a slice
                # assignment would also compile numba's message for mismatched shapes (its
                # string formatting: about 25 MB more on a first compile)
                for t in range(a, gend[k] - 1):
                    gkeys[t] = gkeys[t + 1]
                gend[k] -= 1
            remaining -= 1
            s = first
            if limit >= 0 and watch[i] >= 0 and top > limit:
                remaining = -remaining - 1  # stopped: merge below, then return
        # Adjacent segments never have equal heights: merge s with equal neighbours.
        height = height_of[s]
        right = stop_of[s]
        if right < n_ops and height_of[right] == height:
            begins[right] = False
            right = stop_of[right]
            stop_of[s] = right
            if right < n_ops:
                left_of[right] = s
        left = left_of[s]
        if left >= 0 and height_of[left] == height:
            begins[s] = False
            stop_of[left] = right
            if right < n_ops:
                left_of[right] = left
        if remaining < 0:
            return -remaining - 1
    return 0
