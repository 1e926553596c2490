"""NNC's main loop (see `offsets/nnc.py`) over int64 columns: one function, compiled from
`_nnc_kernel.COMPILE_TIMES` x `kernels.COMPILE_FROM` records on, the same source run as plain
Python in the tests.

The structures are those of `nnc.plan`, flattened into arrays:
- edges: parallel arrays, growing; an edge between two records is listed in the nodes of a
  segment tree over the distinct first operators (the records' start times; an edge can hold
  a record only if the record starts strictly inside the edge's time window), each node a
  linked list through a pool of entries; edges left empty are unlinked when a search meets
  them. Edges with the source or the sink at an end are a separate, compacted list;
- the records to try on an edge: a heap of (size rank, -interference, position) with lazy
  entries (counts only go down: an entry found out of date at the top is replaced);
- partners: a max tree of ranks over the records by first operator, walked best first, a leaf
  found out of date corrected and put back (stored ranks are never below true ones);
- interference: decremented for the waiting records that meet a placed one, found by lifetime
  class (records of a class start at most the class's longest lifetime before they end).

Every choice is the minimum (or maximum) of a total order, so the result does not depend on
the order in which a structure lists its elements: the same plans as `nnc.plan`'s Python loop.
"""

from __future__ import annotations

import heapq

import numpy as np

SOURCE_LAST = -1
SINK_FIRST = np.iinfo(np.int64).max // 4
MAX_TUPLE = 3


def run(first, last, size, by_size, interference, size_rank, order, ranks, class_ids,
        class_firsts, class_bounds, class_longest, step_first, step_after_last, n_steps,
        order_first, order_after_last, alignment):
    """Offsets (int64, one per record; 0 for records not in `by_size`).

    first, last, size: the records' columns; by_size: the records to place (size > 0), largest
    first, ties by position; interference: each record's count of others it meets (changed in
    place); size_rank: each record's size rank, largest 0; order: the records to place by (first
    operator, position); ranks: the partner rank of each record ((ascending size rank * (n + 1) +
    count) * (n + 1) + n - position); class_*: the lifetime classes (records by first operator,
    class after class). Times as indices, so that no search runs in the loop: among the n_steps
    sorted distinct first operators, step_first is where a record's first operator is and
    step_after_last how many are at or before its last; order_first and order_after_last are
    the same among the first operators of `order`."""
    n = first.shape[0]
    offsets = np.zeros(n, np.int64)
    n_place = by_size.shape[0]
    unplaced = np.zeros(n, np.bool_)
    for k in range(n_place):
        unplaced[by_size[k]] = True
    tried = np.zeros(n, np.bool_)
    tried_list = np.empty(n_place, np.int64)
    n_tried = 0
    top_rank = 0  # the smallest size's rank: ranks ascending are top_rank - size_rank
    for k in range(n_place):
        if size_rank[by_size[k]] > top_rank:
            top_rank = size_rank[by_size[k]]
    n1 = n + 1

    # The records to try: (size rank, -count, position), lazy.
    heap = [(size_rank[by_size[k]], -interference[by_size[k]], by_size[k]) for k in range(n_place)]
    heapq.heapify(heap)

    # The partner tree: leaves are `order`, values the ranks (-1: placed).
    leaves = 1
    while leaves < n_place:
        leaves *= 2
    tree = np.full(2 * leaves, -1, np.int64)
    for k in range(n_place):
        tree[leaves + k] = ranks[order[k]]
    for node in range(leaves - 1, 0, -1):
        tree[node] = max(tree[2 * node], tree[2 * node + 1])

    # Edges.
    cap = 4 * n_place + 16
    e_before = np.empty(cap, np.int64)
    e_after = np.empty(cap, np.int64)
    e_lo = np.empty(cap, np.int64)
    e_hi = np.empty(cap, np.int64)
    e_dummy = np.empty(cap, np.int64)
    e_from = np.empty(cap, np.int64)  # the record whose last operator starts the edge, or -1
    e_to = np.empty(cap, np.int64)  # the record whose first operator ends it, or -1
    n_edges = 0
    e_leaves = 1
    while e_leaves < n_steps:
        e_leaves *= 2
    head = np.full(2 * e_leaves, -1, np.int64)
    pool_cap = 8 * n_place + 64
    pool_next = np.empty(pool_cap, np.int64)
    pool_edge = np.empty(pool_cap, np.int64)
    n_pool = 0
    levels = 2
    while (1 << levels) <= 2 * e_leaves:
        levels += 1
    with_dummy = np.empty(cap, np.int64)
    n_dummy = 0

    members = np.empty(MAX_TUPLE, np.int64)
    new_before = np.empty(3 * MAX_TUPLE, np.int64)
    new_after = np.empty(3 * MAX_TUPLE, np.int64)
    new_lo = np.empty(3 * MAX_TUPLE, np.int64)
    new_hi = np.empty(3 * MAX_TUPLE, np.int64)
    new_from = np.empty(3 * MAX_TUPLE, np.int64)
    new_to = np.empty(3 * MAX_TUPLE, np.int64)

    top = 0
    cursor = 0
    while cursor < n_place:
        while cursor < n_place and not unplaced[by_size[cursor]]:
            cursor += 1
        if cursor == n_place:
            break
        largest = size[by_size[cursor]]

        # The records of the largest size, most interfering first: the first that fits an edge.
        edge = -1
        chosen = -1
        while len(heap) > 0:
            entry = heap[0]
            i = entry[2]
            if not unplaced[i] or tried[i]:
                heapq.heappop(heap)
                continue
            if -entry[1] != interference[i]:
                heapq.heapreplace(heap, (size_rank[i], -interference[i], i))
                continue
            if size[i] != largest:
                break
            fi = first[i]
            la = last[i]
            best_dummy = 3
            best_gap = 0
            best_weight = 0
            best_lo = 0
            # Edges between records, around the record's start.
            leaf = step_first[i] + e_leaves
            node = leaf
            while node > 0:
                prev = -1
                e = head[node]
                while e >= 0:
                    k = pool_edge[e]
                    nxt = pool_next[e]
                    lo = e_lo[k]
                    hi = e_hi[k]
                    if hi <= lo:  # empty: unlink
                        if prev < 0:
                            head[node] = nxt
                        else:
                            pool_next[prev] = nxt
                        e = nxt
                        continue
                    prev = e
                    e = nxt
                    b = e_before[k]
                    a = e_after[k]
                    if b >= fi or a <= la:
                        continue
                    start = lo
                    if alignment > 1:
                        start = -(-lo // alignment) * alignment
                    if start + largest > hi:
                        continue
                    gap = (fi - b) + (a - la)
                    weight = hi - lo
                    if (best_dummy > 0 or gap < best_gap or (gap == best_gap and (
                            weight < best_weight or (weight == best_weight and (
                                lo < best_lo or (lo == best_lo and k < edge)))))):
                        best_dummy, best_gap, best_weight, best_lo, edge = 0, gap, weight, lo, k
                node >>= 1
            if edge < 0:  # edges from the source or to the sink (compacted as read)
                kept = 0
                for d in range(n_dummy):
                    k = with_dummy[d]
                    lo = e_lo[k]
                    hi = e_hi[k]
                    if hi <= lo:
                        continue
                    with_dummy[kept] = k
                    kept += 1
                    b = e_before[k]
                    a = e_after[k]
                    if b >= fi or a <= la:
                        continue
                    start = lo
                    if alignment > 1:
                        start = -(-lo // alignment) * alignment
                    if start + largest > hi:
                        continue
                    gap = 0
                    if b != SOURCE_LAST:
                        gap += fi - b
                    if a != SINK_FIRST:
                        gap += a - la
                    dummy = e_dummy[k]
                    weight = hi - lo
                    if (dummy < best_dummy or (dummy == best_dummy and (
                            gap < best_gap or (gap == best_gap and (
                                weight < best_weight or (weight == best_weight and (
                                    lo < best_lo or (lo == best_lo and k < edge)))))))):
                        best_dummy, best_gap, best_weight, best_lo, edge = dummy, gap, weight, lo, k
                n_dummy = kept
            if edge >= 0:
                chosen = i
                break
            tried[i] = True
            tried_list[n_tried] = i
            n_tried += 1

        if edge < 0:
            before = SOURCE_LAST
            after = SINK_FIRST
            before_rec = -1
            after_rec = -1
            at = -(-top // alignment) * alignment
            n_members = 0
        else:
            before = e_before[edge]
            after = e_after[edge]
            before_rec = e_from[edge]
            after_rec = e_to[edge]
            at = -(-e_lo[edge] // alignment) * alignment
            members[0] = chosen
            n_members = 1

        # Partners (and, for a new slot, the chosen record itself): the best unplaced record
        # starting and ending inside (before, after) and meeting no member.
        lo_leaf = 0 if before_rec < 0 else order_after_last[before_rec]
        hi_leaf = n_place if after_rec < 0 else order_first[after_rec]
        while n_members < MAX_TUPLE:
            found = -1
            frontier = [(np.int64(0), np.int64(0))]
            frontier.pop()
            lo_n = lo_leaf + leaves
            hi_n = hi_leaf + leaves
            while lo_n < hi_n:
                if lo_n & 1:
                    if tree[lo_n] >= 0:
                        frontier.append((-tree[lo_n], np.int64(lo_n)))
                    lo_n += 1
                if hi_n & 1:
                    hi_n -= 1
                    if tree[hi_n] >= 0:
                        frontier.append((-tree[hi_n], np.int64(hi_n)))
                lo_n >>= 1
                hi_n >>= 1
            heapq.heapify(frontier)
            while len(frontier) > 0:
                top_entry = heapq.heappop(frontier)
                stored = -top_entry[0]
                node = top_entry[1]
                while node < leaves:
                    left = tree[2 * node]
                    right = tree[2 * node + 1]
                    if left > right:
                        node = 2 * node
                        if right >= 0:
                            heapq.heappush(frontier, (-right, np.int64(node + 1)))
                    else:
                        node = 2 * node + 1
                        if left >= 0:
                            heapq.heappush(frontier, (-left, np.int64(node - 1)))
                j = order[node - leaves]
                true = -1
                if unplaced[j]:
                    true = ((top_rank - size_rank[j]) * n1 + interference[j]) * n1 + (n - j)
                if true != stored:
                    tree[node] = true
                    up = node >> 1
                    while up > 0:
                        best = max(tree[2 * up], tree[2 * up + 1])
                        if tree[up] == best:
                            break
                        tree[up] = best
                        up >>= 1
                    if true >= 0:
                        heapq.heappush(frontier, (-true, np.int64(node)))
                    continue
                if last[j] >= after:
                    continue
                meets = False
                for m in range(n_members):
                    if last[j] >= first[members[m]] and first[j] <= last[members[m]]:
                        meets = True
                        break
                if not meets:
                    found = j
                    break
            if found < 0:
                break
            members[n_members] = found
            n_members += 1

        # Members in time order (stable: ties keep the order they were chosen in).
        for a_ in range(1, n_members):
            m = members[a_]
            b_ = a_ - 1
            while b_ >= 0 and first[members[b_]] > first[m]:
                members[b_ + 1] = members[b_]
                b_ -= 1
            members[b_ + 1] = m
        slot = 0
        for k in range(n_members):
            i = members[k]
            offsets[i] = at
            unplaced[i] = False
            if size[i] > slot:
                slot = size[i]
        if edge < 0:
            top = at + slot
            # Records that meet no member may fit the edges around the new slot.
            kept = 0
            for t in range(n_tried):
                i = tried_list[t]
                if not unplaced[i]:
                    continue
                reopen = size[i] <= slot
                if reopen:
                    for k in range(n_members):
                        m = members[k]
                        if not (last[i] < first[m] or first[i] > last[m]):
                            reopen = False
                            break
                if reopen:
                    tried[i] = False
                    heapq.heappush(heap, (size_rank[i], -interference[i], i))
                else:
                    tried_list[kept] = i
                    kept += 1
            n_tried = kept
        else:
            e_lo[edge] = at + slot
            if e_lo[edge] >= e_hi[edge]:
                e_hi[edge] = e_lo[edge]

        # Rewire: for every byte of the slot, its users in time order linked by an edge.
        n_new = 0
        taken = 0
        for k in range(n_members):
            i = members[k]
            s = size[i]
            if s > taken:
                new_before[n_new] = before
                new_after[n_new] = first[i]
                new_from[n_new] = before_rec
                new_to[n_new] = i
                new_lo[n_new] = at + taken
                new_hi[n_new] = at + s
                n_new += 1
                taken = s
        for k in range(n_members):
            i = members[k]
            s = size[i]
            passed = 0
            for k2 in range(k + 1, n_members):
                j = members[k2]
                shared = min(s, size[j])
                if shared > passed:
                    new_before[n_new] = last[i]
                    new_after[n_new] = first[j]
                    new_from[n_new] = i
                    new_to[n_new] = j
                    new_lo[n_new] = at + passed
                    new_hi[n_new] = at + shared
                    n_new += 1
                    passed = shared
                if passed == s:
                    break
            if s > passed:
                new_before[n_new] = last[i]
                new_after[n_new] = after
                new_from[n_new] = i
                new_to[n_new] = after_rec
                new_lo[n_new] = at + passed
                new_hi[n_new] = at + s
                n_new += 1
        if n_edges + n_new > e_lo.shape[0]:
            grown = 2 * e_lo.shape[0] + n_new
            e_before = np.concatenate((e_before, np.empty(grown - e_before.shape[0], np.int64)))
            e_after = np.concatenate((e_after, np.empty(grown - e_after.shape[0], np.int64)))
            e_lo = np.concatenate((e_lo, np.empty(grown - e_lo.shape[0], np.int64)))
            e_hi = np.concatenate((e_hi, np.empty(grown - e_hi.shape[0], np.int64)))
            e_dummy = np.concatenate((e_dummy, np.empty(grown - e_dummy.shape[0], np.int64)))
            e_from = np.concatenate((e_from, np.empty(grown - e_from.shape[0], np.int64)))
            e_to = np.concatenate((e_to, np.empty(grown - e_to.shape[0], np.int64)))
            with_dummy = np.concatenate((with_dummy, np.empty(grown - with_dummy.shape[0], np.int64)))
        for q in range(n_new):
            if new_hi[q] <= new_lo[q]:
                continue
            k = n_edges
            n_edges += 1
            b = new_before[q]
            a = new_after[q]
            e_before[k] = b
            e_after[k] = a
            e_lo[k] = new_lo[q]
            e_hi[k] = new_hi[q]
            e_from[k] = new_from[q]
            e_to[k] = new_to[q]
            dummy = 0
            if b == SOURCE_LAST:
                dummy += 1
            if a == SINK_FIRST:
                dummy += 1
            e_dummy[k] = dummy
            if dummy > 0:
                with_dummy[n_dummy] = k
                n_dummy += 1
                continue
            # The tree's nodes covering the distinct first operators strictly inside (b, a)
            # (both ends are records here).
            if n_pool + 2 * levels > pool_next.shape[0]:
                grown = 2 * pool_next.shape[0] + 2 * levels
                pool_next = np.concatenate((pool_next, np.empty(grown - pool_next.shape[0], np.int64)))
                pool_edge = np.concatenate((pool_edge, np.empty(grown - pool_edge.shape[0], np.int64)))
            left_n = step_after_last[new_from[q]] + e_leaves
            right_n = step_first[new_to[q]] + e_leaves
            while left_n < right_n:
                if left_n & 1:
                    pool_edge[n_pool] = k
                    pool_next[n_pool] = head[left_n]
                    head[left_n] = n_pool
                    n_pool += 1
                    left_n += 1
                if right_n & 1:
                    right_n -= 1
                    pool_edge[n_pool] = k
                    pool_next[n_pool] = head[right_n]
                    head[right_n] = n_pool
                    n_pool += 1
                left_n >>= 1
                right_n >>= 1

        # Waiting records that meet a placed member interfere with one record fewer.
        for k in range(n_members):
            i = members[k]
            fi = first[i]
            la = last[i]
            for c in range(class_longest.shape[0]):
                # The class's records starting in [fi - its longest lifetime, la]: two bisections.
                a_ = class_bounds[c]
                hi_ = class_bounds[c + 1]
                key = fi - class_longest[c]
                while a_ < hi_:
                    mid = (a_ + hi_) >> 1
                    if class_firsts[mid] < key:
                        a_ = mid + 1
                    else:
                        hi_ = mid
                b_ = a_
                hi_ = class_bounds[c + 1]
                while b_ < hi_:
                    mid = (b_ + hi_) >> 1
                    if class_firsts[mid] <= la:
                        b_ = mid + 1
                    else:
                        hi_ = mid
                for q in range(a_, b_):
                    j = class_ids[q]
                    if unplaced[j] and last[j] >= fi:
                        interference[j] -= 1
    return offsets
