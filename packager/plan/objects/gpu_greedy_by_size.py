"""The TFLite GPU delegate's GREEDY_BY_SIZE for shared objects (GreedyBySizeDistPriority, Pisarchyk &
Lee 2020), with the delegate's own order and ties.

Each record has a position: the last positional maximum at least its size. Repeatedly take the
unassigned record of highest priority: the lowest position, then the smallest distance to its
best object, then the larger size, then the earlier record. Its best object is the one holding a
record at the smallest distance in time (operators between two lifetimes, none when alive
together) among objects holding no record alive with it; the record joins it and the object
grows to its size, or it gets a new object when no object is compatible.

How the best object is kept decides the plan where distances tie, so it is kept the delegate's
way: when an object gains a record, every unassigned record's distance to that object is updated,
and its best object changes only to an object strictly nearer; when its best object stops being
compatible, it is recomputed as the nearest one, the lowest id among equals. (Ours,
greedy_by_size_improved.py, breaks these ties otherwise.)

The state is kept in numpy arrays: a matrix of distances (records x objects) and each record's
best distance and object, so each step is a few vector operations over the records.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from packager.plan.objects._common import make_plan
from packager.plan.records import ObjectPlan, UsageRecord, positional_maxima

NAME = "GREEDY_BY_SIZE"
FAR = np.int64(2**62)  # "no distance": alive together, or no object yet


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    n = len(records)
    if n == 0:
        return make_plan(NAME, [], [])
    first = np.array([r.first_op for r in records], dtype=np.int64)
    last = np.array([r.last_op for r in records], dtype=np.int64)
    size = np.array([r.size for r in records], dtype=np.int64)
    # The last maximum at least each size: maxima are non-increasing, so count those >= size.
    descending = np.array(positional_maxima(records), dtype=np.int64)
    position = np.searchsorted(-descending, -size, side="right") - 1

    waiting = np.ones(n, dtype=bool)
    dist = np.full((n, 8), FAR, dtype=np.int64)  # distance of each record to each object
    best_dist = np.full(n, FAR, dtype=np.int64)
    best_obj = np.zeros(n, dtype=np.int64)
    assignment = np.zeros(n, dtype=np.int64)
    sizes: list[int] = []
    for _ in range(n):
        chosen = _highest_priority(waiting, position, best_dist, size)
        waiting[chosen] = False
        new_object = best_dist[chosen] == FAR  # no compatible object: a new one
        if new_object:
            obj = len(sizes)
            sizes.append(int(size[chosen]))
            if obj == dist.shape[1]:
                dist = np.hstack([dist, np.full_like(dist, FAR)])
        else:
            obj = int(best_obj[chosen])
            sizes[obj] = max(sizes[obj], int(size[chosen]))
        assignment[chosen] = obj
        gap = _distance(first, last, chosen)
        if new_object:
            dist[:, obj] = gap
        else:
            # A record alive with one of the object's records stays incompatible with it.
            compatible = dist[:, obj] != FAR
            lost = waiting & compatible & (gap == FAR)
            dist[:, obj] = np.where(compatible & (gap != FAR), np.minimum(dist[:, obj], gap), FAR)
            for pos in np.flatnonzero(lost & (best_obj == obj)):  # its best object is gone
                row = dist[pos, :len(sizes)]
                best_obj[pos] = int(np.argmin(row))  # the nearest, lowest id among equals
                best_dist[pos] = row[best_obj[pos]]
            gap = np.where(compatible, gap, FAR)
        nearer = waiting & (gap < best_dist)  # only a strictly nearer object replaces the best
        best_dist[nearer] = gap[nearer]
        best_obj[nearer] = obj
    return make_plan(NAME, assignment, sizes)


def _highest_priority(waiting: np.ndarray, position: np.ndarray, best_dist: np.ndarray,
                      size: np.ndarray) -> int:
    """The waiting record with the lowest position, then best distance, then the largest size,
    then the earliest."""
    candidates = waiting.copy()
    for key in (position, best_dist, -size):
        lowest = key[candidates].min()
        candidates &= key == lowest
    return int(np.argmax(candidates))


def _distance(first: np.ndarray, last: np.ndarray, chosen: int) -> np.ndarray:
    """Operators between each record's lifetime and the chosen one's, FAR when they overlap."""
    after = first - last[chosen]  # positive when the record starts after the chosen ends
    before = first[chosen] - last  # positive when the record ends before the chosen starts
    return np.where(after > 0, after, np.where(before > 0, before, FAR))

