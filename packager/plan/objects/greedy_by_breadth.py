"""Greedy by breadth: visit the operators by breadth (the sum of the sizes alive at it), largest
first (ties: earlier operator); at each, take its unassigned records largest first (ties: earlier
position) and give each the smallest compatible object at least its size, else the largest
compatible smaller one (which grows to the record's size), else a new object. Compatible: holding
no record alive at the same time as this one. Ties between objects: the lowest id.

Only operators where a record starts are visited: the records alive at any other operator are all
alive at the last start before it, which is at least as broad and comes first.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from packager.plan.objects._common import ConflictIndex, bits_to_mask, by_size_desc, make_plan
from packager.plan.records import ObjectPlan, UsageRecord

NAME = "greedy_by_breadth"


def plan(records: Sequence[UsageRecord]) -> ObjectPlan:
    n = len(records)
    first = np.array([r.first_op for r in records], dtype=np.int64)
    last = np.array([r.last_op for r in records], dtype=np.int64)
    rank = np.empty(n, dtype=np.int64)  # place in the order largest first (ties: earlier position)
    rank[np.array(by_size_desc(records), dtype=np.int64)] = np.arange(n)
    alive_at = _Stabbing(first, last)
    index = ConflictIndex(records)
    assignment = [0] * n
    sizes = np.zeros(n, dtype=np.int64)  # object sizes; the first `count` are in use
    count = 0
    for op in _starts_by_breadth(first, last, records):
        fresh = alive_at.take(op)
        fresh.sort(key=rank.__getitem__)
        for pos in fresh:
            size = records[pos].size
            compatible = ~bits_to_mask(index.busy(pos), count)
            obj = _closest_fit(sizes[:count], compatible, size)
            if obj < 0:
                obj = count
                count += 1
            sizes[obj] = max(sizes[obj], size)
            assignment[pos] = obj
            index.add(obj, pos)
    return make_plan(NAME, assignment, sizes[:count].tolist())


class _Stabbing:
    """The records alive at an operator, each given out once: a segment tree over the distinct
    first operators holds each record in the nodes that cover its interval, so the records alive
    at an operator are those on its leaf-to-root path; a node emptied once stays empty, and a
    record met again in another node is skipped."""

    def __init__(self, first: np.ndarray, last: np.ndarray) -> None:
        self._ops = np.unique(first)
        lo = np.searchsorted(self._ops, first, side="left").tolist()
        hi = (np.searchsorted(self._ops, last, side="right") - 1).tolist()
        size = 1
        while size < len(self._ops):
            size *= 2
        self._size = size
        self._nodes: list[list[int]] = [[] for _ in range(2 * size)]
        for pos, (a, b) in enumerate(zip(lo, hi)):
            a += size
            b += size + 1
            while a < b:
                if a & 1:
                    self._nodes[a].append(pos)
                    a += 1
                if b & 1:
                    b -= 1
                    self._nodes[b].append(pos)
                a //= 2
                b //= 2
        self._given = bytearray(len(first))

    def take(self, op: int) -> list[int]:
        """The records alive at `op` not given out before (op must be a first operator)."""
        node = int(np.searchsorted(self._ops, op)) + self._size
        out, given = [], self._given
        while node:
            for pos in self._nodes[node]:
                if not given[pos]:
                    given[pos] = 1
                    out.append(pos)
            self._nodes[node] = []
            node //= 2
        return out


def _starts_by_breadth(first: np.ndarray, last: np.ndarray,
                       records: Sequence[UsageRecord]) -> list[int]:
    """The operators where a record starts, by breadth, largest first (ties: earlier operator)."""
    size = np.array([r.size for r in records], dtype=np.int64)
    by_first, by_last = np.argsort(first, kind="stable"), np.argsort(last, kind="stable")
    started = np.concatenate(([0], np.cumsum(size[by_first])))
    ended = np.concatenate(([0], np.cumsum(size[by_last])))
    ops = np.unique(first)
    # alive at op = started at or before it, minus ended before it
    breadth = (started[np.searchsorted(first[by_first], ops, side="right")]
               - ended[np.searchsorted(last[by_last], ops, side="left")])
    return ops[np.lexsort((ops, -breadth))].tolist()


def _closest_fit(sizes: np.ndarray, compatible: np.ndarray, size: int) -> int:
    """The smallest compatible object of at least `size`, else the largest compatible one, else -1
    (argmin/argmax return the first, that is the lowest, id among equals)."""
    large_enough = compatible & (sizes >= size)
    if large_enough.any():
        return int(np.argmin(np.where(large_enough, sizes, np.iinfo(np.int64).max)))
    if compatible.any():
        return int(np.argmax(np.where(compatible, sizes, -1)))
    return -1
