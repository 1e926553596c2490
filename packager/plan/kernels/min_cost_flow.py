"""min_cost_flow's successive shortest paths as one loop over plain arrays, compiled: what
objects/min_cost_flow.py runs from kernels.COMPILE_FROM records up to its LOOP_RECORDS.

The same algorithm, step for step and tie for tie, as min_cost_flow._reused_records (its readable
numpy form, which every smaller input runs): rows join in order of first_op; each joins by one Dijkstra run over
the reuse columns it may take, settling every column at the least distance at once; a column keeps
the first row (in order of relaxation) that reached it at its least distance; the run stops at the
lowest-numbered free column of the first plateau that has one, unless a "new object" is no
dearer, which is then taken from the first row that offered it at that cost. Distances are
integers held in floats (exact below 2**53), so the loop's sums equal numpy's.

Plain Python over numpy arrays, compiled by `kernels.compiled()`: run as it is, it gives the same
assignment.
"""

from __future__ import annotations

import numpy as np



def assign(order, usable, row_size, col_size):
    """The column each row holds at the end (-1: a new object), rows joining in `order`.

    usable[row]: the row may take the columns [0, usable[row]); sizes are floats."""
    n = len(row_size)
    inf = np.inf
    row_potential = np.zeros(n)
    col_potential = np.zeros(n)
    owner = np.full(n, -1, dtype=np.int64)
    held = np.full(n, -1, dtype=np.int64)
    dist = np.full(n, inf)
    came_from = np.full(n, -1, dtype=np.int64)
    settled = np.empty(n, dtype=np.int64)  # columns settled in this run, in order
    settled_dist = np.empty(n)
    rows = np.empty(n, dtype=np.int64)  # the rows relaxed next
    kept_through = np.empty(n)  # the rows relaxed in this run and not dominated: reach - potential,
    kept_size = np.empty(n)  # size,
    kept_span = np.empty(n, dtype=np.int64)  # and how many columns they may take
    for k in range(n):
        root = order[k]
        width = usable[root]
        n_settled = 0
        new_row = root
        # The root may take every column: its relax sets each distance (no pass to clear them).
        through = 0.0 - row_potential[root]
        size = row_size[root]
        new_cost = size + through
        kept_through[0] = through
        kept_size[0] = size
        kept_span[0] = width
        n_kept = 1
        for c in range(width):
            dist[c] = max(size - col_size[c], 0.0) + through - col_potential[c]
            came_from[c] = root
        sink_row = -1
        sink_col = -1
        final = 0.0
        while True:
            # The least distance of an unsettled column (settled ones hold -inf), the first free
            # column at it, and the plateau of columns at it (kept in settled[n_settled:], where
            # settling puts them).
            least = inf
            free = -1
            n_plateau = 0
            for c in range(width):
                d = dist[c]
                if d == -inf:
                    continue
                if d < least:
                    least = d
                    free = c if owner[c] < 0 else -1
                    settled[n_settled] = c
                    n_plateau = 1
                elif d == least:
                    if free < 0 and owner[c] < 0:
                        free = c
                    settled[n_settled + n_plateau] = c
                    n_plateau += 1
            if free >= 0 and least <= new_cost:
                sink_row = came_from[free]
                sink_col = free
                final = least
                break
            if new_cost <= least:
                sink_row = new_row
                sink_col = -1
                final = new_cost
                break
            # Settle the whole plateau; its owners are relaxed next, in column order.
            for t in range(n_plateau):
                c = settled[n_settled + t]
                dist[c] = -inf
                settled_dist[n_settled + t] = least
                rows[t] = owner[c]
            n_settled += n_plateau
            n_rows = n_plateau
            reach = least
            # Relax: distances through each of the rows, all reached at `reach`. A row that an
            # earlier one of this run dominates (no dearer to any column it may take, nor to a new
            # object) cannot lower a distance, nor win a tie, which goes to the earlier row.
            for t in range(n_rows):
                row = rows[t]
                through = reach - row_potential[row]
                size = row_size[row]
                span = min(usable[row], width)
                dominated = False
                for e in range(n_kept):
                    if kept_span[e] >= span and through - kept_through[e] >= max(0.0, kept_size[e] - size):
                        dominated = True
                        break
                if dominated:
                    continue
                kept_through[n_kept] = through
                kept_size[n_kept] = size
                kept_span[n_kept] = span
                n_kept += 1
                offer = reach + size - row_potential[row]
                if offer < new_cost:
                    new_cost = offer
                    new_row = row
                for c in range(span):  # settled columns hold -inf: nothing is less
                    reduced = max(size - col_size[c], 0.0) + through - col_potential[c]
                    if reduced < dist[c]:
                        dist[c] = reduced
                        came_from[c] = row
        end_run(root, final, settled, settled_dist, n_settled, sink_row, sink_col, held, owner, came_from,
                row_potential, col_potential)
    return held


def end_run(root, final, settled, settled_dist, n_settled, sink_row, sink_col, held, owner, came_from,
            row_potential, col_potential):
    """The end of a Dijkstra run that reached its sink at distance `final`: the potentials move by
    how much nearer each settled column was, then the path flips, each row on it taking the column
    that reached it from the next one (min_cost_flow_range ends its runs the same way)."""
    row_potential[root] += final
    for t in range(n_settled):
        c = settled[t]
        row_potential[owner[c]] += final - settled_dist[t]
        col_potential[c] -= final - settled_dist[t]
    row = sink_row
    col = sink_col
    while True:
        previous = held[row]
        held[row] = col
        if col >= 0:
            owner[col] = row
        if row == root:
            break
        row = came_from[previous]
        col = previous
