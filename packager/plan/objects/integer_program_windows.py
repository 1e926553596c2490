"""The integer program at any size: small integer programs over time windows that improve a given
shared-object plan, each solved exactly by HiGHS, never making it worse.

The whole model (integer_program.py) has a variable per disjoint pair of records: beyond a few
hundred records it takes gigabytes and minutes. But a plan of n records has few objects (as many
as the most records alive at once, or a few more), and one object's size can only come down if
its largest members move elsewhere. So a move names an object and a lower size for it: every
member above that size must move to other objects, none of which may grow. Such members are found
in time; around each one, a window of the timeline is re-planned by a small integer program:
  the records wholly inside the window are free, those crossing its edges stay where they are;
  z[r, p] = 1 when free record r goes to object p (only where r fits p's size cap and does not
  meet p's staying records);
  sum_p z[r, p] = 1 for every free record, and sum z[r, p] <= 1 over the free records alive at
  each step, for every object; any solution will do (a sweep by start time tries first, and the
  solver decides only where the sweep fails, unless the records alive at some step cannot each
  have an object of their own: then the window has no plan, window_matching.py; the solver's
  answer is checked before it is taken).
Windows are disjoint in what they free, so a move is the sum of its windows; it is taken only
when every window succeeds, and then the total falls by the size given up. The moves repeat
until the plan meets the lower bound (then it is optimal, and proven), no move succeeds, or the
work budget is spent. Work is counted (windows tried, variables handed to the solver, its
branch-and-bound nodes in each), never time: the plan depends only on the input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from packager.plan.objects import binary_program, window_matching
from packager.plan.records import Records, UsageRecord, positional_maxima

# Each window's integer program may branch this many nodes: a window holds tens of records.
WINDOW_NODES = 200
# A window spans the moved records' intervals widened on each side to the step, at most this many
# steps away, that the fewest records cross (so that few stay fixed); then the wider reach when
# the window has no plan: more room to make space, at more cost.
REACHES = (12, 36)
# A window's program with more variables (free records times the objects each fits) than this is
# not solved: its work would be unbounded in practice.
WINDOW_VARIABLES = 3_000
# The work budget: windows tried in all (most cost a sweep, well under a millisecond), and
# variables handed to the solver in all (about 20-50 microseconds of CPU each).
WINDOW_BUDGET = 3_000
VARIABLE_BUDGET = 40_000
# Windows this close are solved as one (fewer, larger programs: the solver's setup dominates a
# small one), up to JOIN_STEPS steps.
JOIN = 16
JOIN_STEPS = 120
# A window longer than this (a record alive through much of the model) is not tried.
MAX_STEPS = 400
# A move needing more windows than this is not tried: it would take most of the budget.
MOVE_WINDOWS = 1_200


@dataclass(frozen=True)
class Repair:
    assignment: np.ndarray  # object of each record (objects renumbered 0..k-1)
    object_sizes: np.ndarray  # int64
    windows: int  # integer programs solved
    stopped: str  # why the search ended before the lower bound; "" when it reached it


def repair(records: Sequence[UsageRecord], assignment: Sequence[int], sizes: Sequence[int],
           lower_bound: int) -> Repair:
    """Improve the plan (assignment, sizes) by moves over time windows; never worse than it."""
    assign = np.asarray(assignment, dtype=np.int64).copy()
    n_obj = len(sizes)
    line = _Timeline(records)
    size = line.size
    cap = _object_sizes(assign, size, n_obj)
    maxima = np.array(positional_maxima(records), dtype=np.int64)
    windows = 0
    variables = 0
    window_budget, variable_budget = WINDOW_BUDGET, VARIABLE_BUDGET
    short = False  # a move or window was refused for want of budget

    def spent() -> bool:
        return windows >= window_budget or variables >= variable_budget

    def solve_window(work: np.ndarray, w0: int, w1: int, caps: np.ndarray) -> np.ndarray | None:
        """Objects for the records wholly inside [w0, w1], or None when the window has no plan."""
        nonlocal windows, variables, short
        windows += 1
        near = line.touching(w0, w1)
        inside = (line.lo[near] >= w0) & (line.hi[near] <= w1)
        free, fixed = near[inside], near[~inside]
        steps = w1 - w0 + 1
        # busy[p, t]: a staying record of object p is alive at step w0 + t.
        busy = np.zeros((n_obj, steps + 1), dtype=np.int64)
        f_lo = np.maximum(line.lo[fixed], w0) - w0
        f_hi = np.minimum(line.hi[fixed], w1) - w0
        np.add.at(busy, (work[fixed], f_lo), 1)
        np.add.at(busy, (work[fixed], f_hi + 1), -1)
        busy = np.cumsum(np.cumsum(busy, axis=1) > 0, axis=1)  # prefix counts of busy steps
        r_lo, r_hi = line.lo[free] - w0, line.hi[free] - w0
        before = np.where(r_lo > 0, busy[:, np.maximum(r_lo - 1, 0)], 0)
        blocked = busy[:, r_hi] - before > 0  # [object, free record]
        fits = (size[free][None, :] <= caps[:, None]) & ~blocked
        quick = _sweep(r_lo, r_hi, size[free], fits, caps, work[free])
        if quick is not None:
            return _checked(free, quick, fixed, work)
        obj_of_var, rec_of_var = np.nonzero(fits)  # variables grouped by object
        if not fits.any(axis=0).all():
            return None  # a record fits no object
        n_vars = len(rec_of_var)
        if n_vars > WINDOW_VARIABLES or variables + n_vars > variable_budget:
            short = short or n_vars <= WINDOW_VARIABLES
            return None  # too large a program for one window, or for what is left of the budget
        variables += n_vars  # counted even when the matching below decides: the same budget either way
        if not window_matching.each_step_matchable(r_lo, r_hi, fits):
            return None
        # Rows: one per free record (exactly one object), then one per object and step where
        # one of its variables starts (every maximal set of intervals alive together is the set
        # alive at such a step), when two or more variables meet there.
        lens = (r_hi - r_lo + 1)[rec_of_var]
        var_rep = np.repeat(np.arange(n_vars), lens)
        offs = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
        t_of = r_lo[rec_of_var][var_rep] + offs
        cell = obj_of_var[var_rep] * steps + t_of
        starts = np.zeros(n_obj * steps, dtype=bool)
        starts[obj_of_var * steps + r_lo[rec_of_var]] = True
        meets = np.bincount(cell, minlength=n_obj * steps) >= 2
        keep = starts[cell] & meets[cell]
        kept_cells, step_row = np.unique(cell[keep], return_inverse=True)
        n_rows = len(free) + len(kept_cells)
        rows = np.concatenate([rec_of_var, len(free) + step_row])
        cols = np.concatenate([np.arange(n_vars), var_rep[keep]])
        lower = np.concatenate([np.ones(len(free)), np.zeros(len(kept_cells))])
        upper = np.ones(n_rows)
        cost = np.zeros(n_vars)  # any plan of the window will do: the solver stops at the first
        result = binary_program.solve(cost, rows, cols, np.ones(len(rows)), lower, upper,
                                      node_limit=WINDOW_NODES)
        if result.x is None:
            return None
        chosen = result.x > 0.5
        out = np.full(len(free), -1, dtype=np.int64)
        out[rec_of_var[chosen]] = obj_of_var[chosen]
        return None if (out < 0).any() else _checked(free, out, fixed, work)

    def _checked(free: np.ndarray, objects: np.ndarray, fixed: np.ndarray,
                 work: np.ndarray) -> np.ndarray | None:
        """The window's new objects, or None if two records of an object would meet (the solver
        works to a tolerance: its answer is checked, not trusted)."""
        members = np.concatenate([free, fixed])
        obj = np.concatenate([objects, work[fixed]])
        order = np.lexsort((line.lo[members], obj))
        same = obj[order][1:] == obj[order][:-1]
        meet = line.lo[members[order]][1:] <= line.hi[members[order]][:-1]
        return None if (same & meet).any() else np.stack([free, objects])

    failed_at: dict[tuple[int, int], tuple[int, int]] = {}  # a move's window that had no plan

    def try_move(obj: int, target: int) -> np.ndarray | None:
        """The plan with object `obj` at most `target` bytes and no object larger, or None."""
        nonlocal short
        caps = cap.copy()
        caps[obj] = target
        # The k-th largest object must hold the k-th positional maximum (the lower bound's terms).
        ranked = np.sort(caps)[::-1]
        if len(maxima) > len(ranked) or (maxima > ranked[:len(maxima)]).any():
            return None
        movers = np.nonzero((assign == obj) & (size > target))[0]
        spans = _merged(line.lo[movers], line.hi[movers])
        if len(spans) > MOVE_WINDOWS or any(b - a > MAX_STEPS for a, b in spans):
            return None
        if windows + len(spans) > window_budget:
            short = True
            return None
        hard = failed_at.get((obj, target))
        if hard in spans:  # the window that failed last time first: fail at once if it fails again
            spans.remove(hard)
            spans.insert(0, hard)
        work = assign.copy()
        for a, b in spans:
            placed = None
            for near, far in zip((0,) + REACHES, REACHES):
                placed = solve_window(work, *line.edges(a, b, near, far), caps)
                if placed is not None or spent():
                    break
            if placed is None:
                failed_at[(obj, target)] = (a, b)
                return None
            work[placed[0]] = placed[1]
        return work

    stopped = ""
    while True:
        total = int(cap.sum())
        if total <= lower_bound:
            break
        moved = False
        for obj, target in _moves(assign, size, cap):
            if spent():
                break
            work = try_move(obj, target)
            if work is not None:
                new_cap = _object_sizes(work, size, n_obj)
                if int(new_cap.sum()) < total and (new_cap <= cap).all():
                    assign, cap, moved = work, new_cap, True
                    break
        if spent() or (short and not moved):
            stopped = (f"its work budget was spent ({window_budget:,} windows or "
                       f"{variable_budget:,} variables in the windows' integer programs)")
            break
        if not moved:
            stopped = "no object could be made smaller by re-planning windows around its largest members"
            break
    return _result(assign, size, windows, stopped)


class _Timeline:
    """The records on the dense timeline, with a lookup of those alive in a window."""

    def __init__(self, records: Sequence[UsageRecord]) -> None:
        cols = Records.of(records)
        self.lo, self.hi, self.size = cols.dense_first, cols.dense_last, cols.size
        self.by_lo = np.argsort(self.lo, kind="stable")
        self.sorted_lo = self.lo[self.by_lo]
        life = self.hi - self.lo
        # Records alive longer than this are few (graph inputs, skips): always looked at.
        self.reach = int(np.percentile(life, 99)) + 1 if len(life) else 0
        self.long = np.nonzero(life > self.reach)[0]
        self.last = int(self.hi.max()) if len(life) else 0
        # cut[k]: records alive at both step k - 1 and step k (none before 0 or after the end).
        delta = np.zeros(self.last + 3, dtype=np.int64)
        np.add.at(delta, self.lo + 1, 1)
        np.add.at(delta, self.hi + 1, -1)
        self.cut = np.cumsum(delta)[:self.last + 2]
        self.cut[0] = self.cut[-1] = 0

    def edges(self, a: int, b: int, near: int, far: int) -> tuple[int, int]:
        """[a, b] widened on each side to the cheapest cut `near` to `far` steps away (ties: the
        nearest)."""
        left = np.arange(max(a - near, 0), max(a - far, 0) - 1, -1)  # argmin keeps the first
        right = np.arange(min(b + 1 + near, self.last + 1), min(b + 1 + far, self.last + 1) + 1)
        return (int(left[np.argmin(self.cut[left])]), int(right[np.argmin(self.cut[right])]) - 1)

    def touching(self, w0: int, w1: int) -> np.ndarray:
        """Positions of the records alive at some step of [w0, w1], in position order."""
        a = np.searchsorted(self.sorted_lo, w0 - self.reach, side="left")
        b = np.searchsorted(self.sorted_lo, w1, side="right")
        near = self.by_lo[a:b]
        cand = np.union1d(near, self.long)
        return cand[(self.lo[cand] <= w1) & (self.hi[cand] >= w0)]


def _sweep(lo: np.ndarray, hi: np.ndarray, size: np.ndarray, fits: np.ndarray, caps: np.ndarray,
           current: np.ndarray) -> np.ndarray | None:
    """A first try without the solver: records by start (larger first), each to the smallest
    object it fits that is free through its interval (its own object first on a tie); None when
    some record finds none (the integer program then decides)."""
    n_obj = fits.shape[0]
    free_from = [-1] * n_obj  # the last step a record placed here occupies
    cap_order = sorted(range(n_obj), key=lambda p: (int(caps[p]), p))
    out = np.empty(len(lo), dtype=np.int64)
    fits_rows = fits.T.tolist()
    lo_l, hi_l, cur_l = lo.tolist(), hi.tolist(), current.tolist()
    for r in sorted(range(len(lo)), key=lambda r: (lo_l[r], -int(size[r]), r)):
        ok = fits_rows[r]
        best = -1
        for p in cap_order:
            if ok[p] and free_from[p] < lo_l[r]:
                if best < 0 or (caps[p] == caps[best] and p == cur_l[r]):
                    best = p
                elif caps[p] != caps[best]:
                    break
        if best < 0:
            return None
        free_from[best] = hi_l[r]
        out[r] = best
    return out


def _moves(assign: np.ndarray, size: np.ndarray, cap: np.ndarray) -> list[tuple[int, int]]:
    """(object, lower size) for every object: its size without its largest members. Those with
    the fewest members to move first (cheapest), then by the bytes saved, then the object."""
    out = []
    for obj in range(len(cap)):
        if cap[obj] == 0:
            continue
        members = size[assign == obj]
        below = members[members < cap[obj]]
        target = int(below.max()) if len(below) else 0
        moving = int((members > target).sum())
        out.append((moving, -(int(cap[obj]) - target), obj, target))
    out.sort()
    return [(obj, target) for _, _, obj, target in out]


def _merged(lo: np.ndarray, hi: np.ndarray) -> list[tuple[int, int]]:
    """The intervals merged where they come within JOIN steps (up to JOIN_STEPS long), in time
    order."""
    order = np.argsort(lo, kind="stable")
    spans: list[list[int]] = []
    for a, b in zip(lo[order].tolist(), hi[order].tolist()):
        if spans and a <= spans[-1][1] + 1 + JOIN and b - spans[-1][0] <= JOIN_STEPS:
            spans[-1][1] = max(spans[-1][1], b)
        else:
            spans.append([a, b])
    return [(a, b) for a, b in spans]


def _object_sizes(assign: np.ndarray, size: np.ndarray, n_obj: int) -> np.ndarray:
    cap = np.zeros(n_obj, dtype=np.int64)
    np.maximum.at(cap, assign, size)
    return cap


def _result(assign: np.ndarray, size: np.ndarray, windows: int, stopped: str) -> Repair:
    """Objects renumbered in order of first use by position, empty ones dropped; each object as
    large as its largest member (`size`: the records' sizes)."""
    used, first = np.unique(assign, return_index=True)
    used = used[np.argsort(first, kind="stable")]
    rename = np.zeros(int(used.max()) + 1 if len(used) else 0, dtype=np.int64)
    rename[used] = np.arange(len(used))
    out = rename[assign]
    sizes = np.zeros(len(used), dtype=size.dtype)
    np.maximum.at(sizes, out, size)
    return Repair(out, sizes, windows, stopped)
