"""The checker's vector forms (numpy: sorting and binary search, n log^2 n at worst), which prove a
valid plan of many records faster than the sweep in validate.py. They answer the same question
exactly (tests/equivalence/test_validate_vector.py holds them to the sweep's verdict on random good and
bad plans); the sweep still names any fault.

Offsets: each record's lifetime is cut into the canonical nodes of a segment tree over time. Two
lifetimes intersect exactly when a node of one is an ancestor of (or equal to) a node of the
other, so comparing each node's pieces with its own and its ancestors' pieces, sorted by offset,
compares every pair of records alive together.
"""

from __future__ import annotations

import numpy as np

from packager.plan.records import LIMIT, ObjectPlan, OffsetPlan, Records


def offsets_pass(records: Records, plan: OffsetPlan) -> bool | None:
    """Whether the offset plan keeps every rule but the aliases; None when it cannot say (a
    missing offset, numbers beyond what int64 sums hold): the sweep decides then."""
    n = len(records)
    if len(plan.offsets) != n or not (0 <= plan.arena < LIMIT and 0 <= plan.alignment < LIMIT):
        return None
    try:
        offsets = np.fromiter(plan.offsets, dtype=np.int64, count=n)
    except (TypeError, OverflowError, ValueError):
        return None
    if n and int(np.abs(offsets).max()) >= LIMIT:
        return None
    align = max(plan.alignment, 1)
    if np.any((offsets < 0) | (offsets % align != 0) | (offsets + records.size > plan.arena)):
        return False
    return not _memory_clash(records, offsets)


def objects_pass(records: Records, plan: ObjectPlan) -> bool | None:
    """Whether the shared-object plan keeps every rule (extents aside); None when it cannot say."""
    n, n_obj = len(records), len(plan.object_sizes)
    if len(plan.assignment) != n or (plan.object_extents and len(plan.object_extents) != n_obj):
        return None
    try:
        obj = np.fromiter(plan.assignment, dtype=np.int64, count=n)
        sizes = np.fromiter(plan.object_sizes, dtype=np.int64, count=n_obj)
    except (TypeError, OverflowError, ValueError):
        return None
    if np.any((obj < 0) | (obj >= n_obj)) or np.any(sizes[obj] < records.size):
        return False
    # Per object, by first operator: each member must end before the next one starts (two
    # members starting together fail in either order). A stable sort by object of the records
    # in order of first operator; object ids as narrow as they fit, which numpy sorts by radix.
    by_first = records.derived("by first operator", lambda: np.argsort(records.first, kind="stable"))
    in_time = obj[by_first]
    order = by_first[np.argsort(in_time.astype(np.uint16) if n_obj <= 1 << 16 else in_time, kind="stable")]
    o, f, last = obj[order], records.first[order], records.last[order]
    return not np.any((o[1:] == o[:-1]) & (f[1:] <= last[:-1]))


# -- offsets: the records' pieces on a segment tree over time -----------------------------------

def _pieces(records: Records) -> tuple[np.ndarray, np.ndarray]:
    """(node, record position) of each piece, in order of node (heap numbering: node v has
    children 2v and 2v+1). Empty records take no bytes and have no pieces. Only the steps where
    some record ends are leaves: two lifetimes intersect iff both hold the earlier of their
    last operators, so a record counts only the distinct starts it holds that are the last start
    some record holds."""
    first, last, size = records.first, records.last, records.size
    keep = np.flatnonzero(size > 0)
    if not len(keep):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    starts = _distinct(first[keep])
    lo = np.searchsorted(starts, first[keep])
    hi = np.searchsorted(starts, last[keep], side="right") - 1  # the last start it holds
    is_end = np.zeros(len(starts), dtype=bool)
    is_end[hi] = True
    ends_to = np.cumsum(is_end)  # leaves up to each start
    lo = ends_to[lo] - is_end[lo]  # the first leaf it holds
    hi = ends_to[hi]  # past the last one
    leaves = 1
    while leaves < int(ends_to[-1]):
        leaves *= 2
    lo, hi, rec = lo + leaves, hi + leaves, keep
    nodes, owners = [], []
    while len(rec):  # the canonical cover of [lo, hi), a level at a time
        left = (lo & 1).astype(bool)
        nodes.append(lo[left])
        owners.append(rec[left])
        lo = lo + left
        right = (hi & 1).astype(bool)
        nodes.append(hi[right] - 1)
        owners.append(rec[right])
        hi = hi - right
        lo, hi = lo >> 1, hi >> 1
        open_ = lo < hi
        lo, hi, rec = lo[open_], hi[open_], rec[open_]
    node, owner = np.concatenate(nodes), np.concatenate(owners)
    by_node = np.argsort(node, kind="stable")
    return node[by_node], owner[by_node]


def _ancestry(node: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Each step up the tree (1: parent) at which some piece has an ancestor holding pieces, with
    those pieces (positions in `node`, which is sorted, hence by depth)."""
    out = []
    if len(node):
        top, bottom = int(node[0]).bit_length() - 1, int(node[-1]).bit_length() - 1
        occupied = np.zeros(int(node[-1]) + 1, dtype=bool)
        occupied[node] = True
        for up in range(1, bottom - top + 1):
            deep_from = int(np.searchsorted(node, 1 << (top + up)))  # pieces deep enough
            deep = deep_from + np.flatnonzero(occupied[node[deep_from:] >> up])
            if len(deep):
                out.append((up, deep))
    return out


def _memory_clash(records: Records, offsets: np.ndarray) -> bool:
    """Whether two records alive at the same operator overlap in memory."""
    node, owner = records.derived("segment tree pieces", lambda: _pieces(records))
    if not len(node):
        return False
    ancestry = records.derived("segment tree ancestry", lambda: _ancestry(node))
    piece_start = offsets[owner]
    piece_end = piece_start + records.size[owner]
    # (node, offset) as one sortable int64 key: the offset itself where the product fits, else
    # its rank among the offsets (the same order either way).
    top = int(piece_start.max())
    if (int(node[-1]) + 1) * (top + 1) < LIMIT:
        rank, width = piece_start, top + 1
    else:
        values = _distinct(piece_start)
        rank = np.searchsorted(values, piece_start)
        width = len(values) + 1
    piece_key = node * width + rank
    order = np.argsort(piece_key, kind="stable")  # the pieces come in order of node already
    key, start, end, by_key = piece_key[order], piece_start[order], piece_end[order], node[order]
    # Within a node every piece is alive at every operator of the node: sorted by offset, each
    # must end where the next begins or below.
    if np.any((by_key[1:] == by_key[:-1]) & (start[1:] < end[:-1])):
        return True
    # Against each ancestor that has pieces: its pieces are disjoint (checked above), so a clash
    # shows with the one just below or at this offset, or the one just above.
    last = len(key) - 1
    for up, deep in ancestry:
        ancestor = node[deep] >> up
        at = np.searchsorted(key, ancestor * width + rank[deep], side="right")
        below = np.maximum(at - 1, 0)
        if np.any((at > 0) & (by_key[below] == ancestor) & (end[below] > piece_start[deep])):
            return True
        above = np.minimum(at, last)
        if np.any((at <= last) & (by_key[above] == ancestor) & (start[above] < piece_end[deep])):
            return True
    return False


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (np.unique is several times slower on int64 here). A stable
    sort: a model's records come nearly in time order, which it sorts in a pass."""
    ordered = np.sort(values, kind="stable")
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
