"""Two behaviours of GNU libstdc++ that decide TFLite's arena layout when sizes tie.

TFLite's ArenaPlanner collects the tensors to place from `std::unordered_set<int>`s (one per node)
and orders them with `std::sort`, which is not stable. Tensors of equal size allocated at the same
node therefore come out in an order that only the library's algorithms determine. Reproducing the
arena byte for byte means reproducing both:

- `unordered_set_order`: the iteration order of an `std::unordered_set<int>` after a sequence of
  inserts (prime rehash policy, identity hash, new nodes at the front of their bucket, a newly used
  bucket at the front of the list);
- `introsort`: `std::sort` (introsort: median-of-three quicksort down to runs of 16, heapsort past
  the depth limit, then a final insertion sort).

Both are written from the algorithms' descriptions, not from the library's code.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence, TypeVar

T = TypeVar("T")
Less = Callable[[T, T], bool]

# Bucket counts the rehash policy picks. The first insert asks for 12 buckets, served from the
# small table (13); later growths double and round up to the next entry of the library's table.
_SMALL_BUCKETS = (2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13)
_BUCKET_TABLE = (29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753, 42043)
_BEFORE_BEGIN = -1  # the list's sentinel: buckets whose first node is the list head point here


class UnsupportedSize(ValueError):
    """The set grew past the bucket table reproduced here."""


class _IntHashSet:
    def __init__(self) -> None:
        self._buckets_count = 1
        self._next_resize = 0
        self._next: dict[int, int | None] = {_BEFORE_BEGIN: None}
        self._bucket_before: dict[int, int] = {}  # bucket -> node before its first node
        self._count = 0

    def _next_bucket_count(self, wanted: int) -> int:
        if wanted < len(_SMALL_BUCKETS):
            self._next_resize = _SMALL_BUCKETS[wanted]
            return _SMALL_BUCKETS[wanted]
        for n in _BUCKET_TABLE:
            if n >= wanted:
                self._next_resize = n
                return n
        raise UnsupportedSize(f"an unordered_set of {self._count + 1} elements")

    def _rehash(self, buckets: int) -> None:
        node = self._next[_BEFORE_BEGIN]
        self._next[_BEFORE_BEGIN] = None
        before: dict[int, int] = {}
        head_bucket = 0
        while node is not None:
            following = self._next[node]
            b = node % buckets
            if b not in before:
                self._next[node] = self._next[_BEFORE_BEGIN]
                self._next[_BEFORE_BEGIN] = node
                before[b] = _BEFORE_BEGIN
                if self._next[node] is not None:
                    before[head_bucket] = node
                head_bucket = b
            else:
                self._next[node] = self._next[before[b]]
                self._next[before[b]] = node
            node = following
        self._buckets_count = buckets
        self._bucket_before = before

    def insert(self, key: int) -> None:
        if key < 0:
            raise ValueError("only non-negative keys are modelled")
        if key in self._next:
            return
        if self._count + 1 > self._next_resize:
            minimum = max(self._count + 1, 0 if self._next_resize else 11)
            if minimum >= self._buckets_count:
                self._rehash(self._next_bucket_count(max(minimum + 1, self._buckets_count * 2)))
            else:
                self._next_resize = self._buckets_count
        b = key % self._buckets_count
        if b in self._bucket_before:
            before = self._bucket_before[b]
            self._next[key] = self._next[before]
            self._next[before] = key
        else:
            self._next[key] = self._next[_BEFORE_BEGIN]
            self._next[_BEFORE_BEGIN] = key
            if self._next[key] is not None:
                self._bucket_before[self._next[key] % self._buckets_count] = key
            self._bucket_before[b] = _BEFORE_BEGIN
        self._count += 1

    def __iter__(self):
        node = self._next[_BEFORE_BEGIN]
        while node is not None:
            yield node
            node = self._next[node]


def unordered_set_order(inserted: Iterable[int]) -> list[int]:
    """Iteration order of a default-constructed `std::unordered_set<int>` after these inserts."""
    s = _IntHashSet()
    for key in inserted:
        s.insert(key)
    return list(s)


# -- std::sort ------------------------------------------------------------------------------------

_THRESHOLD = 16


def introsort(items: Sequence[T], less: Less) -> list[T]:
    """The order `std::sort(first, last, less)` leaves `items` in."""
    a = list(items)
    n = len(a)
    if n > 1:
        _introsort_loop(a, 0, n, 2 * (n.bit_length() - 1), less)
        _final_insertion_sort(a, 0, n, less)
    return a


def _introsort_loop(a: list, first: int, last: int, depth: int, less: Less) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_sort(a, first, last, less)
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, less)
        _introsort_loop(a, cut, last, depth, less)
        last = cut


def _partition_pivot(a: list, first: int, last: int, less: Less) -> int:
    mid = first + (last - first) // 2
    _move_median_to_first(a, first, first + 1, mid, last - 1, less)
    return _unguarded_partition(a, first + 1, last, first, less)


def _move_median_to_first(a: list, result: int, x: int, y: int, z: int, less: Less) -> None:
    if less(a[x], a[y]):
        if less(a[y], a[z]):
            pick = y
        elif less(a[x], a[z]):
            pick = z
        else:
            pick = x
    elif less(a[x], a[z]):
        pick = x
    elif less(a[y], a[z]):
        pick = z
    else:
        pick = y
    a[result], a[pick] = a[pick], a[result]


def _unguarded_partition(a: list, first: int, last: int, pivot: int, less: Less) -> int:
    while True:
        while less(a[first], a[pivot]):
            first += 1
        last -= 1
        while less(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _final_insertion_sort(a: list, first: int, last: int, less: Less) -> None:
    if last - first > _THRESHOLD:
        _insertion_sort(a, first, first + _THRESHOLD, less)
        for i in range(first + _THRESHOLD, last):
            _unguarded_linear_insert(a, i, less)
    else:
        _insertion_sort(a, first, last, less)


def _insertion_sort(a: list, first: int, last: int, less: Less) -> None:
    for i in range(first + 1, last):
        if less(a[i], a[first]):
            value = a[i]
            a[first + 1:i + 1] = a[first:i]
            a[first] = value
        else:
            _unguarded_linear_insert(a, i, less)


def _unguarded_linear_insert(a: list, last: int, less: Less) -> None:
    value = a[last]
    while less(value, a[last - 1]):
        a[last] = a[last - 1]
        last -= 1
    a[last] = value


def _heap_sort(a: list, first: int, last: int, less: Less) -> None:
    """std::__partial_sort(first, last, last): make_heap, then sort_heap."""
    n = last - first
    if n >= 2:
        parent = (n - 2) // 2
        while True:
            _adjust_heap(a, first, parent, n, a[first + parent], less)
            if parent == 0:
                break
            parent -= 1
    while last - first > 1:
        last -= 1
        value = a[last]
        a[last] = a[first]
        _adjust_heap(a, first, 0, last - first, value, less)


def _adjust_heap(a: list, base: int, hole: int, length: int, value, less: Less) -> None:
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if less(a[base + child], a[base + child - 1]):
            child -= 1
        a[base + hole] = a[base + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        a[base + hole] = a[base + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(a[base + parent], value):
        a[base + hole] = a[base + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[base + hole] = value
