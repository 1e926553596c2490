"""The independent checker. It trusts no strategy: every plan passes through it before anything
prints or writes it, and a failure is a bug (PlanError), never a warning.

Written apart from the strategies on purpose: it shares nothing with them but the record type.

Each check runs in two forms. The vector form (numpy, sorting and binary search only, so
n log^2 n at worst) gives the verdict; when it finds a fault, the sequential form (one sweep
over time) runs on the same input to name the first fault in plain words, as it always has.
A plan the vector form passes is valid: the two forms answer the same question exactly
(tests/plan/test_validate_vector.py compares their verdicts on random good and bad plans).
A plan whose numbers equal those of the last plan of its kind the vector form passed, for the
same tuple of records, keeps that verdict (`_passed_before`): the same question, answered.
"""

from __future__ import annotations

import bisect
from operator import attrgetter
from typing import Mapping, Sequence

import numpy as np

from packager.errors import PlanError
from packager.plan.records import ObjectPlan, OffsetPlan, UsageRecord

# Numbers above this go to the sequential form: offsets plus sizes must not overflow int64.
_VECTOR_MAX = 1 << 61


def _fail(plan_name: str, message: str) -> None:
    raise PlanError(f"invalid plan '{plan_name}': {message}")


# -- the records as columns, once per records object ---------------------------------------------

class _Columns:
    """The records' fields as int64 arrays, and their pieces on a segment tree over time (see
    `_pieces`). Both depend on the records only: the portfolio checks many plans of one tuple."""

    def __init__(self, records: Sequence[UsageRecord]) -> None:
        n = len(records)
        self.n = n
        # attrgetter maps in C: a third faster than a generator of attribute reads
        self.first = np.fromiter(map(attrgetter("first_op"), records), dtype=np.int64, count=n)
        self.last = np.fromiter(map(attrgetter("last_op"), records), dtype=np.int64, count=n)
        self.size = np.fromiter(map(attrgetter("size"), records), dtype=np.int64, count=n)
        self._pieces: tuple[np.ndarray, np.ndarray] | None = None
        self._ancestry: list[tuple[int, np.ndarray]] | None = None
        self._by_first: np.ndarray | None = None

    def by_first(self) -> np.ndarray:
        """Record positions in order of first operator (ties: earlier position)."""
        if self._by_first is None:
            self._by_first = np.argsort(self.first, kind="stable").astype(np.int32)
        return self._by_first

    def pieces(self) -> tuple[np.ndarray, np.ndarray]:
        """(node, record position) per piece, in order of node: a plan's sort by (node, offset)
        then only orders the pieces within each node (few), which a stable sort sees."""
        if self._pieces is None:
            node, owner = _pieces(self.first, self.last, self.size)
            by_node = np.argsort(node, kind="stable")
            self._pieces = node[by_node], owner[by_node].astype(np.int32)  # n < 2^31 records
        return self._pieces

    def ancestry(self) -> list[tuple[int, np.ndarray]]:
        """Each step up the tree (1: parent) at which some piece has an ancestor holding pieces,
        with those pieces (positions in `pieces()`): only there can a piece clash with an
        ancestor's (most steps have none). The pieces come in order of node, so by depth: a step
        up from the deepest pieces further than the shallowest holds none, and the pieces deep
        enough for a step are a run at the end."""
        if self._ancestry is None:
            node = self.pieces()[0]
            self._ancestry = []
            if len(node):
                top, bottom = int(node[0]).bit_length() - 1, int(node[-1]).bit_length() - 1
                occupied = np.zeros(int(node[-1]) + 1, dtype=bool)
                occupied[node] = True
                for up in range(1, bottom - top + 1):
                    deep_from = int(np.searchsorted(node, 1 << (top + up)))
                    deep = deep_from + np.flatnonzero(occupied[node[deep_from:] >> up])
                    if len(deep):
                        self._ancestry.append((up, deep))
        return self._ancestry


_last_columns: list = [None, None]


def _columns(records: Sequence[UsageRecord]) -> _Columns | None:
    """The records as columns, or None when a value does not fit the vector form."""
    if _last_columns[0] is records:
        return _last_columns[1]
    try:
        cols = _Columns(records)
    except (TypeError, OverflowError, ValueError):
        return None
    if cols.n and max(int(np.abs(cols.first).max()), int(np.abs(cols.last).max()),
                      int(np.abs(cols.size).max())) >= _VECTOR_MAX:
        return None
    if isinstance(records, tuple):  # a list could change under the same identity
        _last_columns[:] = [records, cols]
    return cols


# The numbers of the last plan of each kind the vector form passed, with its records (a tuple,
# so they cannot change): `package` checks the plan it ships again after placing the scratch
# buffers and after reading each file back, mostly the same numbers for the same records. Those
# are valid again: equal tuples compare in C, in a tenth of the time of a second proof.
_last_passed: dict[str, tuple] = {}


def _passed_before(kind: str, records: Sequence[UsageRecord], numbers: tuple) -> bool:
    last = _last_passed.get(kind)
    return last is not None and last[0] is records and last[1] == numbers


def _numbers(plan: OffsetPlan | ObjectPlan) -> tuple:
    """What the checker's verdict on a plan depends on, besides the records."""
    if isinstance(plan, OffsetPlan):
        return plan.offsets, plan.arena, plan.alignment
    return plan.assignment, plan.object_sizes, len(plan.object_extents)


def _passed(kind: str, records: Sequence[UsageRecord], numbers: tuple) -> None:
    """Called by the vector forms on a pass only: a plan found equal to the one kept is not kept
    instead (a copy read back from a file would then outlive its check)."""
    if isinstance(records, tuple) and all(isinstance(v, (tuple, int)) for v in numbers):
        _last_passed[kind] = (records, numbers)  # immutable only: a list could change


def _pieces(first: np.ndarray, last: np.ndarray, size: np.ndarray):
    """Each non-empty record's lifetime cut into the canonical nodes of a segment tree over the
    steps where some record ends (heap numbering: node v has children 2v and 2v+1, leaves from
    `leaves`). Two lifetimes intersect iff both hold the later of their first operators, a start,
    and iff both hold the earlier of their last, an end: so a record counts only the distinct
    starts it holds, and then only those of them that are the last start some record holds.

    Two lifetimes intersect exactly when a node of one is an ancestor of (or equal to) a node of
    the other: both nodes covering a shared operator lie on that operator's path to the root,
    and a node inside an ancestor shares its operators. So checking memory only between a node's
    records and its ancestors' records checks every pair of records alive together.
    Returns (node, record position) per piece."""
    keep = np.flatnonzero(size > 0)
    if not len(keep):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    starts = _distinct(first[keep])
    lo = np.searchsorted(starts, first[keep])
    hi = np.searchsorted(starts, last[keep], side="right") - 1  # the last start it holds
    # The starts that are some record's last one, counted up to each start: a record's first
    # such step is the count before its first start, and past its last the count at its last.
    is_end = np.zeros(len(starts), dtype=bool)
    is_end[hi] = True
    ends_to = np.cumsum(is_end)
    lo = ends_to[lo] - is_end[lo]  # the first of those steps it holds
    hi = ends_to[hi]  # past the last one
    leaves = 1
    while leaves < int(ends_to[-1]):
        leaves *= 2
    lo, hi, rec = lo + leaves, hi + leaves, keep
    nodes, owners = [], []
    while len(rec):
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
    return np.concatenate(nodes), np.concatenate(owners)


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (np.unique is several times slower on int64 here). A stable
    sort: a model's records come nearly in time order, which it sorts in a pass."""
    ordered = np.sort(values, kind="stable")
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def _memory_clash(cols: _Columns, offsets: np.ndarray) -> bool:
    """Whether two records alive at the same operator overlap in memory (vector form)."""
    node, owner = cols.pieces()
    if not len(node):
        return False
    piece_start = offsets[owner]
    piece_end = piece_start + cols.size[owner]
    # (node, offset) packed into one sortable int64 key: the offset itself where the product
    # fits, else its rank among the offsets (the same order either way).
    top = int(piece_start.max())
    if (int(node[-1]) + 1) * (top + 1) < _VECTOR_MAX:
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
    # Against each ancestor that has pieces: the ancestor's pieces are disjoint (checked above),
    # so a clash shows with the one just below or at this offset, or the one just above.
    last = len(key) - 1
    for up, deep in cols.ancestry():
        ancestor = node[deep] >> up
        at = np.searchsorted(key, ancestor * width + rank[deep], side="right")
        below = np.maximum(at - 1, 0)  # the ancestor's piece with the largest offset not above
        if np.any((at > 0) & (by_key[below] == ancestor) & (end[below] > piece_start[deep])):
            return True
        above = np.minimum(at, last)  # the ancestor's piece with the next larger offset
        if np.any((at <= last) & (by_key[above] == ancestor) & (start[above] < piece_end[deep])):
            return True
    return False


# -- records -------------------------------------------------------------------------------------

def check_records(records: Sequence[UsageRecord]) -> None:
    cols = _columns(records)
    if cols is not None and not np.any((cols.size < 0) | (cols.first < 0) | (cols.last < cols.first)):
        return
    _check_records_in_order(records)


def _check_records_in_order(records: Sequence[UsageRecord]) -> None:
    for i, r in enumerate(records):
        if r.size < 0 or r.first_op < 0 or r.last_op < r.first_op:
            raise PlanError(f"record {i} (tensor {r.tensor}) is malformed: {r}")


# -- offset plans --------------------------------------------------------------------------------

def check_offset_plan(
    records: Sequence[UsageRecord],
    plan: OffsetPlan,
    aliases: Mapping[int, int] | None = None,
    alias_intervals: Mapping[int, tuple[int, int]] | None = None,
) -> None:
    """Raise PlanError unless the plan is valid for the records.

    Rules: every record has an offset; offsets are non-negative multiples of the alignment; every
    record lies inside the arena; records alive at the same operator never overlap in memory;
    every alias (tensor -> tensor whose buffer it uses) points to a planned tensor whose interval
    covers the alias's own interval.
    """
    check_records(records)
    verdict = _passed_before("offsets", records, _numbers(plan)) or _offset_plan_passes(records, plan)
    if verdict is not True:
        _check_offset_plan_in_order(records, plan)
        if verdict is False:  # the vector form saw a fault the sweep did not: refuse, never guess
            _fail(plan.strategy, "the checker's two forms disagree on this plan")
    _check_aliases(plan.strategy, records, aliases, alias_intervals)


def _offset_plan_passes(records: Sequence[UsageRecord], plan: OffsetPlan) -> bool | None:
    """The vector form's verdict on every rule but the aliases; None when it cannot decide
    (a missing offset, numbers too large for int64): the sequential form alone decides then."""
    cols = _columns(records)
    if cols is None or len(plan.offsets) != cols.n:
        return None
    try:
        offsets = np.fromiter(plan.offsets, dtype=np.int64, count=cols.n)
    except (TypeError, OverflowError, ValueError):
        return None
    if not (0 <= plan.arena < _VECTOR_MAX and plan.alignment < _VECTOR_MAX):
        return None
    if cols.n and int(np.abs(offsets).max()) >= _VECTOR_MAX:
        return None
    align = max(plan.alignment, 1)
    if np.any((offsets < 0) | (offsets % align != 0) | (offsets + cols.size > plan.arena)):
        return False
    if _memory_clash(cols, offsets):
        return False
    _passed("offsets", records, _numbers(plan))
    return True


def _check_offset_plan_in_order(records: Sequence[UsageRecord], plan: OffsetPlan) -> None:
    """The sequential form: record by record, then a sweep over time; names the first fault."""
    name = plan.strategy
    if len(plan.offsets) != len(records):
        _fail(name, f"{len(records)} records but {len(plan.offsets)} offsets: a record has no place")
    align = max(plan.alignment, 1)
    for i, (r, off) in enumerate(zip(records, plan.offsets)):
        if off is None or off < 0:
            _fail(name, f"tensor {r.tensor} has no valid offset ({off})")
        if off % align:
            _fail(name, f"tensor {r.tensor} at offset {off} is not {align}-byte aligned")
        if off + r.size > plan.arena:
            _fail(name, f"tensor {r.tensor} [{off}, {off + r.size}) lies outside the {plan.arena}-byte arena")
    # Sweep over time, keeping the live records sorted by offset: with the live set disjoint, a new
    # record can only collide with its neighbours in that order.
    live: list[tuple[int, int]] = []  # (offset, record position), zero-size records left out
    for ends, i in _time_sweep(records):
        if records[i].size == 0:
            continue
        key = (plan.offsets[i], i)
        if ends:
            live.pop(bisect.bisect_left(live, key))
            continue
        pos = bisect.bisect_left(live, key)
        lo, hi = plan.offsets[i], plan.offsets[i] + records[i].size
        for nb in (pos - 1, pos):
            if 0 <= nb < len(live):
                o, j = live[nb]
                if o < hi and lo < o + records[j].size:
                    a, b = records[i], records[j]
                    _fail(name, f"tensors {b.tensor} and {a.tensor} are alive together "
                                f"(ops {max(a.first_op, b.first_op)}..{min(a.last_op, b.last_op)}) "
                                f"and overlap in memory")
        live.insert(pos, key)


def _time_sweep(records: Sequence[UsageRecord]) -> list[tuple[bool, int]]:
    """In time order, (True, i) for each record ending before an op and (False, i) at its start."""
    starts = sorted(range(len(records)), key=lambda i: (records[i].first_op, i))
    ends = sorted(range(len(records)), key=lambda i: (records[i].last_op, i))
    events: list[tuple[bool, int]] = []
    e = 0
    for i in starts:
        t = records[i].first_op
        while e < len(ends) and records[ends[e]].last_op < t:
            events.append((True, ends[e]))
            e += 1
        events.append((False, i))
    return events


def _check_aliases(name, records, aliases, alias_intervals) -> None:
    if not aliases:
        return
    by_tensor = {r.tensor: r for r in records}
    for alias, target in aliases.items():
        if target not in by_tensor:
            _fail(name, f"alias {alias} points to tensor {target}, which is not planned")
        if alias_intervals and alias in alias_intervals:
            first, last = alias_intervals[alias]
            t = by_tensor[target]
            if not (t.first_op <= first and last <= t.last_op):
                _fail(name, f"alias {alias} lives over ops {first}..{last} but tensor {target} "
                            f"whose buffer it uses only over {t.first_op}..{t.last_op}")


# -- shared-object plans -------------------------------------------------------------------------

def check_object_plan(records: Sequence[UsageRecord], plan: ObjectPlan,
                      extents: Sequence[tuple[int, int]] | None = None) -> None:
    """Raise PlanError unless every record has an object at least its size (and extent, for
    textures), and no two records alive at the same operator share an object."""
    check_records(records)
    # Textures (a few dozen records) keep the sequential form: it also checks the extents.
    verdict = None if extents is not None else (_passed_before("objects", records, _numbers(plan))
                                                or _object_plan_passes(records, plan))
    if verdict is not True:
        _check_object_plan_in_order(records, plan, extents)
        if verdict is False:
            _fail(plan.strategy, "the checker's two forms disagree on this plan")


def _object_plan_passes(records: Sequence[UsageRecord], plan: ObjectPlan) -> bool | None:
    """The vector form's verdict; None when it cannot decide (see `_offset_plan_passes`)."""
    cols = _columns(records)
    n_obj = len(plan.object_sizes)
    if cols is None or len(plan.assignment) != cols.n or (plan.object_extents and
                                                          len(plan.object_extents) != n_obj):
        return None
    try:
        obj = np.fromiter(plan.assignment, dtype=np.int64, count=cols.n)
        sizes = np.fromiter(plan.object_sizes, dtype=np.int64, count=n_obj)
    except (TypeError, OverflowError, ValueError):
        return None
    if np.any((obj < 0) | (obj >= n_obj)):
        return False
    if np.any(sizes[obj] < cols.size):
        return False
    # Per object, by first operator: each member must end before the next one starts (two
    # members starting together fail in either order). A stable sort by object of the records
    # in order of first operator; object ids as narrow as they fit, which numpy sorts by radix.
    by_first = cols.by_first()
    in_time = obj[by_first]
    order = by_first[np.argsort(in_time.astype(np.uint16) if n_obj <= 1 << 16 else in_time,
                                kind="stable")]
    o, f, last = obj[order], cols.first[order], cols.last[order]
    if np.any((o[1:] == o[:-1]) & (f[1:] <= last[:-1])):
        return False
    _passed("objects", records, _numbers(plan))
    return True


def _check_object_plan_in_order(records: Sequence[UsageRecord], plan: ObjectPlan,
                                extents: Sequence[tuple[int, int]] | None) -> None:
    name = plan.strategy
    if len(plan.assignment) != len(records):
        _fail(name, f"{len(records)} records but {len(plan.assignment)} assignments")
    n_obj = len(plan.object_sizes)
    if plan.object_extents and len(plan.object_extents) != n_obj:
        _fail(name, "object extents do not match the objects")
    members: list[list[int]] = [[] for _ in range(n_obj)]
    for i, (r, obj) in enumerate(zip(records, plan.assignment)):
        if obj is None or not 0 <= obj < n_obj:
            _fail(name, f"tensor {r.tensor} has no object ({obj})")
        if plan.object_sizes[obj] < r.size:
            _fail(name, f"tensor {r.tensor} ({r.size} B) does not fit object {obj} "
                        f"({plan.object_sizes[obj]} B)")
        if extents is not None:
            if not plan.object_extents:
                _fail(name, "a texture plan needs object extents")
            (w, h), (ow, oh) = extents[i], plan.object_extents[obj]
            if w > ow or h > oh:
                _fail(name, f"tensor {r.tensor} ({w}x{h}) does not fit object {obj} ({ow}x{oh})")
        members[obj].append(i)
    for obj, idx in enumerate(members):
        idx.sort(key=lambda i: (records[i].first_op, records[i].last_op))
        for a, b in zip(idx, idx[1:]):
            if records[b].first_op <= records[a].last_op:
                _fail(name, f"tensors {records[a].tensor} and {records[b].tensor} share object "
                            f"{obj} while both alive")
