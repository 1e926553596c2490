"""The range tree over min_cost_flow's columns (records in order of last_op) that finds a row's
cheapest unsettled column in log^2 steps (min_cost_flow_range.py).

For a row the cheapest column of its prefix splits at its size: among columns at least as large
the cost is -potential, among smaller ones s_row - s_col - potential. So each node holds its
columns sorted by size with two minimum trees, of -potential (keys `value_a`) and of -size -
potential (`value_b`); a settled column leaves the tree (its keys NONE) and comes back with its
new potential. Plain Python, compiled with min_cost_flow_range.py by `kernels.compiled()`.
"""

from __future__ import annotations

import numpy as np


NONE = np.int64(1) << np.int64(61)  # the key of a settled column: above every real key


def _better(value, a, b):
    """Whether column a is cheaper than column b under `value` (ties: the lower column)."""
    if b < 0:
        return a >= 0
    if a < 0:
        return False
    return value[a] < value[b] or (value[a] == value[b] and a > b)


def _inner_set(tree, base, length, pos, col, value):
    """Column `col` at position `pos` of one node's minimum tree (2 * length slots from base)."""
    i = pos + length
    tree[base + i] = col
    i >>= 1
    while i >= 1:
        left = tree[base + 2 * i]
        right = tree[base + 2 * i + 1]
        was = tree[base + i]
        now = left if _better(value, left, right) else right
        if now == was and now != col:  # the same column wins here, so every node above is unchanged
            break
        tree[base + i] = now
        i >>= 1


def _inner_min(tree, base, length, lo, hi, value):
    """The cheapest column at positions [lo, hi) of one node's minimum tree; -1 if none."""
    best = -1
    lo += length
    hi += length
    while lo < hi:
        if lo & 1:
            c = tree[base + lo]
            if _better(value, c, best):
                best = c
            lo += 1
        if hi & 1:
            hi -= 1
            c = tree[base + hi]
            if _better(value, c, best):
                best = c
        lo >>= 1
        hi >>= 1
    return best


def build(col_size, width):
    """The range tree over `width` columns (index order = order of last_op).

    Node v (heap numbering, leaves from `leaves`) lists its columns sorted by (size, column) at
    [start[v], start[v] + length[v]) of `sorted_col` / `sorted_size`; its two minimum trees sit at
    [2 * start[v], 2 * start[v] + 2 * length[v]) of their arrays. where[level, c]: the position
    of column c in its node at that level (level 0: the leaves)."""
    leaves = 1
    levels = 1
    while leaves < width:
        leaves *= 2
        levels += 1
    order = np.argsort(col_size[:width], kind="mergesort")  # by size, ties by column
    start = np.zeros(2 * leaves, dtype=np.int64)
    length = np.zeros(2 * leaves, dtype=np.int64)
    sorted_col = np.empty(levels * width, dtype=np.int32)
    where = np.empty((levels, width), dtype=np.int32)
    offset = 0
    for level in range(levels):
        first_node = leaves >> level  # nodes of this level: [first_node, 2 * first_node)
        span = 1 << level  # leaves under each of them
        for v in range(first_node, 2 * first_node):
            lo = (v - first_node) * span
            start[v] = offset + min(lo, width)
            length[v] = max(0, min(lo + span, width) - lo)
        fill = np.zeros(first_node, dtype=np.int64)
        for t in range(width):
            c = order[t]
            v = first_node + c // span
            p = fill[v - first_node]
            fill[v - first_node] += 1
            sorted_col[start[v] + p] = c
            where[level, c] = p
        offset += width
    sorted_size = col_size[sorted_col]
    return leaves, levels, start, length, sorted_col, sorted_size, where


def refresh(c, leaves, levels, start, length, where, tree_a, tree_b, value_a, value_b):
    """Column c's keys changed: update its place in every node above it."""
    v = leaves + c
    for level in range(levels):
        _inner_set(tree_a, 2 * start[v], length[v], where[level, c], c, value_a)
        _inner_set(tree_b, 2 * start[v], length[v], where[level, c], c, value_b)
        v >>= 1


def cheapest(width, size, leaves, start, length, sorted_size, tree_a, tree_b, value_a, value_b):
    """The cheapest unsettled column among [0, width) for a row of `size`: (key, column), where
    key = 2 * (max(0, size - s_col) - potential) + held; ties go to the latest column (-1: none).

    The prefix's nodes are met latest first, and a node whose least key of -potential (which no
    key of its columns is below) is not below the best so far is passed over: its columns are all
    earlier, so they could only win by a lower key."""
    best_key = NONE
    best_col = -1
    lo = leaves
    hi = leaves + width
    while lo < hi:
        v = -1
        if hi & 1:
            hi -= 1
            v = hi
        elif lo & 1:  # only the root, when the prefix is every leaf
            v = lo
            lo += 1
        if v >= 0 and length[v] > 0:
            s0 = start[v]
            n = length[v]
            bound = value_a[tree_a[2 * s0 + 1]]
            if bound < best_key:
                # the first position whose column is at least `size`
                a, b = 0, n
                while a < b:
                    m = (a + b) >> 1
                    if sorted_size[s0 + m] < size:
                        a = m + 1
                    else:
                        b = m
                c = _inner_min(tree_a, 2 * s0, n, a, n, value_a)
                if c >= 0 and value_a[c] < NONE:
                    if value_a[c] < best_key or (value_a[c] == best_key and c > best_col):
                        best_key = value_a[c]
                        best_col = c
                c = _inner_min(tree_b, 2 * s0, n, 0, a, value_b)
                if c >= 0 and value_b[c] < NONE:
                    key = value_b[c] + 2 * size
                    if key < best_key or (key == best_key and c > best_col):
                        best_key = key
                        best_col = c
        lo >>= 1
        hi >>= 1
    return best_key, best_col
