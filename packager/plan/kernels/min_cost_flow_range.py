"""min_cost_flow's successive shortest paths above its LOOP_RECORDS, compiled: each Dijkstra run
visits only the columns it settles, finding a row's cheapest unsettled column by a range tree
(column_tree.py), never by scanning.

The problem (min_cost_flow.py): rows join in the order given (successive shortest paths may add
them in any order); a row may take a prefix of the columns (records in order of last_op that
ended before it starts) at cost max(0, s_row - s_col) less the potentials, or a new object. For
a row the cheapest column of its prefix splits at its size: among columns at least as large the
cost is -potential, among smaller ones s_row - s_col - potential. So one tree over the columns
in order of last_op (column_tree.py) answers "the cheapest unsettled column of this row's
prefix" in log^2 steps, and a settled column leaves the tree (and comes back with its new
potential) in log^2 steps. A Dijkstra run then costs log^2 per column it settles, rather than a
pass over the whole prefix per row it reaches.

Keys are twice the reduced distance, plus one for a column already held by a row: at equal
distance a free column (which ends the run) comes before a held one (which extends it). Ties
between keys go to the latest column (recently ended records are the likely free ones: on chains
this settles 70 times fewer columns than the earliest), then to the lower row. A newly reached row
that one of the latest KEPT_CHECKED rows of the run dominates (no dearer to any column, nor to a
new object) offers nothing and is not asked. The plain loop (min_cost_flow.py, whose
`end_run` ends each run here too) breaks ties otherwise, so the two may pick different plans of
the same, optimal, flow cost.

Plain Python over numpy arrays, compiled by `kernels.compiled()`: run as it is, it gives the same
assignment.
"""

from __future__ import annotations

import numpy as np

from packager.plan.kernels.column_tree import NONE, build, cheapest, refresh
from packager.plan.kernels.min_cost_flow import end_run

KEPT_CHECKED = 64  # the latest rows kept in a run that a newly reached row is checked against


def _heap_less(key, col, row, i, j):
    if key[i] != key[j]:
        return key[i] < key[j]
    if col[i] != col[j]:
        return col[i] > col[j]
    return row[i] < row[j]


def _heap_push(key, col, row, n, k, c, r):
    i = n
    key[i] = k
    col[i] = c
    row[i] = r
    while i > 0:
        parent = (i - 1) >> 1
        if not _heap_less(key, col, row, i, parent):
            break
        key[i], key[parent] = key[parent], key[i]
        col[i], col[parent] = col[parent], col[i]
        row[i], row[parent] = row[parent], row[i]
        i = parent
    return n + 1


def _heap_pop(key, col, row, n):
    """Removes the least entry (moved to slot n - 1, where the caller reads it)."""
    n -= 1
    key[0], key[n] = key[n], key[0]
    col[0], col[n] = col[n], col[0]
    row[0], row[n] = row[n], row[0]
    i = 0
    while True:
        least = i
        for child in (2 * i + 1, 2 * i + 2):
            if child < n and _heap_less(key, col, row, child, least):
                least = child
        if least == i:
            break
        key[i], key[least] = key[least], key[i]
        col[i], col[least] = col[least], col[i]
        row[i], row[least] = row[least], row[i]
        i = least
    return n


def assign(order, usable, row_size, col_size, early_rows, early_work, project_from, work_limit):
    """The column each row holds at the end (-1: a new object), rows joining in `order`, and the
    work done (tree queries and updates); stops once the work passes `work_limit`, returning as
    work -1 less the steps it took.

    It also stops (the same way) as soon as the work is on a pace to pass the budget, so that a
    refusal comes early: while fewer than `early_rows` rows have joined, once the work passes
    `early_work`; from `project_from` rows joined on, once the work so far times the count of rows
    over the rows joined passes `work_limit` (when later rows take at least as many steps as
    earlier ones, as on records of unrelated sizes, the whole solve would). Neither check changes
    the assignment of a solve that it does not stop.

    usable[row]: the row may take the columns [0, usable[row]); sizes are integers."""
    n = len(row_size)
    held = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return held, 0
    leaves, levels, start, length, sorted_col, sorted_size, where = build(col_size, n)
    row_potential = np.zeros(n, dtype=np.int64)
    col_potential = np.zeros(n, dtype=np.int64)
    owner = np.full(n, -1, dtype=np.int64)
    # keys of each column: 2 * (-potential) + held, and 2 * (-size - potential) + held
    value_a = np.zeros(n, dtype=np.int64)
    value_b = -2 * col_size
    tree_a = np.full(2 * levels * n, -1, dtype=np.int32)  # column numbers fit 32 bits
    tree_b = np.full(2 * levels * n, -1, dtype=np.int32)
    for c in range(n):
        refresh(c, leaves, levels, start, length, where, tree_a, tree_b, value_a, value_b)
    settled_in = np.full(n, -1, dtype=np.int64)  # the run that settled each column
    settled = np.empty(n, dtype=np.int64)
    settled_dist = np.empty(n, dtype=np.int64)
    came_from = np.full(n, -1, dtype=np.int64)
    reach = np.zeros(n, dtype=np.int64)
    kept_through = np.empty(n + 1, dtype=np.int64)
    kept_size = np.empty(n + 1, dtype=np.int64)
    kept_span = np.empty(n + 1, dtype=np.int64)
    heap_key = np.empty(n + 1, dtype=np.int64)
    heap_col = np.empty(n + 1, dtype=np.int64)
    heap_row = np.empty(n + 1, dtype=np.int64)
    work = 0
    for k in range(n):
        root = order[k]
        n_heap = 0
        n_settled = 0
        reach[root] = 0
        new_cost = row_size[root] - row_potential[root]
        new_row = root
        key, c = cheapest(usable[root], row_size[root], leaves, start, length, sorted_size,
                           tree_a, tree_b, value_a, value_b)
        work += levels
        if c >= 0:
            n_heap = _heap_push(heap_key, heap_col, heap_row, n_heap, key - 2 * row_potential[root], c, root)
        kept_through[0] = -row_potential[root]
        kept_size[0] = row_size[root]
        kept_span[0] = usable[root]
        n_kept = 1
        sink_row = -1
        sink_col = -1
        final = 0
        while True:
            if n_heap == 0 or 2 * new_cost <= heap_key[0]:
                sink_row = new_row
                sink_col = -1
                final = new_cost
                break
            n_heap = _heap_pop(heap_key, heap_col, heap_row, n_heap)
            key = heap_key[n_heap]
            c = heap_col[n_heap]
            row = heap_row[n_heap]
            if settled_in[c] != k:
                if owner[c] < 0:  # a free column: the path ends here
                    came_from[c] = row
                    sink_row = row
                    sink_col = c
                    final = key >> 1
                    break
                # settle the held column; its owner is reached at its distance
                d = key >> 1
                settled_in[c] = k
                came_from[c] = row
                settled[n_settled] = c
                settled_dist[n_settled] = d
                n_settled += 1
                value_a[c] = NONE
                value_b[c] = NONE
                refresh(c, leaves, levels, start, length, where, tree_a, tree_b, value_a, value_b)
                work += levels
                reached = owner[c]
                reach[reached] = d
                through = d - row_potential[reached]
                size = row_size[reached]
                span = usable[reached]
                dominated = False
                for e in range(max(0, n_kept - KEPT_CHECKED), n_kept):
                    if kept_span[e] >= span and through - kept_through[e] >= max(0, kept_size[e] - size):
                        dominated = True
                        break
                if not dominated:
                    kept_through[n_kept] = through
                    kept_size[n_kept] = size
                    kept_span[n_kept] = span
                    n_kept += 1
                    offer = d + row_size[reached] - row_potential[reached]
                    if offer < new_cost:
                        new_cost = offer
                        new_row = reached
                    key2, c2 = cheapest(usable[reached], row_size[reached], leaves, start, length,
                                         sorted_size, tree_a, tree_b, value_a, value_b)
                    work += levels
                    if c2 >= 0:
                        n_heap = _heap_push(heap_key, heap_col, heap_row, n_heap,
                                            key2 + 2 * (d - row_potential[reached]), c2, reached)
            # the popped row's entry is used (or was stale): it offers its next cheapest column
            key2, c2 = cheapest(usable[row], row_size[row], leaves, start, length, sorted_size,
                                 tree_a, tree_b, value_a, value_b)
            work += levels
            if c2 >= 0:
                n_heap = _heap_push(heap_key, heap_col, heap_row, n_heap,
                                    key2 + 2 * (reach[row] - row_potential[row]), c2, row)
            if work > work_limit:
                return held, -1 - work
        end_run(root, final, settled, settled_dist, n_settled, sink_row, sink_col, held, owner, came_from,
                row_potential, col_potential)
        # settled columns come back with their new potentials; the sink column is now held
        for t in range(n_settled + 1):
            c = settled[t] if t < n_settled else sink_col
            if c < 0:
                continue
            flag = 1 if owner[c] >= 0 else 0
            value_a[c] = -2 * col_potential[c] + flag
            value_b[c] = -2 * (col_size[c] + col_potential[c]) + flag
            refresh(c, leaves, levels, start, length, where, tree_a, tree_b, value_a, value_b)
            work += levels
        joined = k + 1
        if joined < early_rows and work > early_work:
            return held, -1 - work
        if joined >= project_from and work * n > work_limit * joined:
            return held, -1 - work
    return held, work
