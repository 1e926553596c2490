"""Integer program: the shared-object problem solved exactly by a MILP solver (HiGHS, through
binary_program.py), for inputs of up to a few hundred records (real models; the paper's six have 27 to 125).

Formulation (representatives): order the records largest first (ties: earlier position). Every
object is named by its first member in that order, its representative, whose size is the object's
size. y[i] = 1 when record i represents an object; x[i, j] = 1 when record j joins the object
represented by i, allowed only for i before j in the order and with disjoint intervals.
  minimise   sum_i size[i] * y[i]
  subject to y[j] + sum_i x[i, j] = 1                 for every record j (one object each)
             sum_{j in K} x[i, j] <= y[i]            for every representative i and every maximal
                                                    set K of its candidates alive together
The second family says both "no two members of an object alive at once" and "only join an object
that exists": candidates' intervals form an interval graph, whose maximal cliques are the sets
alive at the start points where no candidate ends before the next start.

The solver's effort is capped by a node count and the model's size, never by time, so the result
depends only on the input; when the node cap stops it, the best plan found so far is returned,
not marked proven, and SolverLimitError when there is none.

Above WHOLE_MODEL_RECORDS records, or WHOLE_MODEL_NONZEROS entries of its matrix, the whole model
is too large (a variable per disjoint pair; HiGHS's memory grows with it): the strategy then improves the best plan it is given, or greedy_by_size_improved's, by small
integer programs over time windows (integer_program_windows.py), with a work budget. That plan
is proven optimal only when it meets the lower bound; otherwise `search_stopped` says what
stopped the search.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from packager.errors import PlanError, SolverLimitError
from packager.plan.objects import binary_program, greedy_by_size_improved, integer_program_windows
from packager.plan.objects._common import by_size_desc, make_plan
from packager.plan.records import ObjectPlan, UsageRecord, compress_time, object_lower_bound

NAME = "integer_program"
NODE_LIMIT = 20_000
# Up to this many records the whole model is solved (its plans are pinned by the tests): about 3 s
# of CPU at 250 on the branching shape of benchmarks/synthetic.py, against a second or less on
# real models. Above, the model alone would take gigabytes: the window search improves a plan.
WHOLE_MODEL_RECORDS = 250
# The window search's work is bounded, but the plan it starts from and the lower bound grow with
# the records: it refuses above this (a model of a million tensors plans with the greedy ones).
MAX_RECORDS = 1_000_000
# A memory guard, counted (the same on every machine): HiGHS's branch and bound over the whole model
# took the process to 100 MB at 133,796 entries (MiniMalloc's E, 215 records) but to 282 MB at
# 180,214 (a perfect packing of 250 buffers, benchmarks/perfect_packing.py; 384 MB inside `best`).
# Above this many entries the window search improves a plan instead, as above WHOLE_MODEL_RECORDS.
WHOLE_MODEL_NONZEROS = 150_000


class _TooLarge(Exception):
    """The whole model has more than WHOLE_MODEL_NONZEROS entries."""


@dataclass(frozen=True)
class Solution:
    plan: ObjectPlan  # plan.proven_optimal is False when a cap stopped the solver first
    dual_bound: int  # no plan of this input is smaller: the plan's total when proven optimal

    @property
    def proven_optimal(self) -> bool:
        return self.plan.proven_optimal


def plan(records: Sequence[UsageRecord], start: ObjectPlan | None = None) -> ObjectPlan:
    return solve(records, start=start).plan


def solve(records: Sequence[UsageRecord], node_limit: int = NODE_LIMIT,
          start: ObjectPlan | None = None) -> Solution:
    """The best plan found; never worse than `start` (a plan of these records) when given."""
    if not records:
        return Solution(replace(make_plan(NAME, [], []), proven_optimal=True), 0)
    if len(records) > MAX_RECORDS:
        raise SolverLimitError(f"{NAME} takes at most {MAX_RECORDS:,} records, not "
                               f"{len(records):,}: choose a greedy strategy")
    if len(records) > WHOLE_MODEL_RECORDS:
        return _improve(records, start)
    try:
        whole = _whole_model(records, node_limit)
    except _TooLarge:
        return _improve(records, start)
    except SolverLimitError:
        if start is None:
            raise
        return _improve(records, start)
    if start is not None and start.total < whole.plan.total:
        return _improve(records, start)  # the node cap stopped it above the plan it was given
    return whole


def _improve(records: Sequence[UsageRecord], start: ObjectPlan | None) -> Solution:
    """The window search from `start`, or from greedy_by_size_improved's plan."""
    if start is None:
        start = greedy_by_size_improved.plan(records)
    bound = object_lower_bound(records)
    found = integer_program_windows.repair(records, start.assignment, start.object_sizes, bound)
    optimal = int(found.object_sizes.sum()) <= bound
    plan = replace(make_plan(NAME, found.assignment, found.object_sizes), proven_optimal=optimal,
                   search_stopped="" if optimal else found.stopped)
    return Solution(plan, bound)


def _whole_model(records: Sequence[UsageRecord], node_limit: int) -> Solution:
    order = by_size_desc(records)
    dense = compress_time(records)
    lo = np.array([dense[p].first_op for p in order], dtype=np.int64)
    hi = np.array([dense[p].last_op for p in order], dtype=np.int64)
    size = np.array([records[p].size for p in order], dtype=np.float64)
    n = len(order)

    # pair_rep[k], pair_member[k]: the k-th x variable (x index n + k); ranks, not positions.
    later = np.triu(np.ones((n, n), dtype=bool), k=1)
    disjoint = (hi[:, None] < lo[None, :]) | (hi[None, :] < lo[:, None])
    pair_rep, pair_member = np.nonzero(later & disjoint)  # row-major: grouped by representative
    bounds = np.searchsorted(pair_rep, np.arange(n + 1))

    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    # One object per record: row j holds y[j] and every x[i, j].
    rows += [np.arange(n), pair_member]
    cols += [np.arange(n), n + np.arange(len(pair_rep))]
    vals += [np.ones(n), np.ones(len(pair_rep))]
    n_rows = n
    for rep in range(n):
        first = bounds[rep]
        members = pair_member[first:bounds[rep + 1]]
        for clique in _maximal_cliques(lo[members], hi[members]):
            rows += [np.full(len(clique) + 1, n_rows)]
            cols += [np.append(n + first + clique, rep)]
            vals += [np.append(np.ones(len(clique)), -1.0)]
            n_rows += 1
    if sum(len(r) for r in rows) > WHOLE_MODEL_NONZEROS:
        raise _TooLarge
    lower = np.concatenate([np.ones(n), np.full(n_rows - n, -np.inf)])
    upper = np.concatenate([np.ones(n), np.zeros(n_rows - n)])
    cost = np.concatenate([size, np.zeros(len(pair_rep))])
    result = binary_program.solve(cost, np.concatenate(rows), np.concatenate(cols), np.concatenate(vals),
                                  lower, upper, node_limit=node_limit, mip_rel_gap=0.0)
    if result.x is None:
        raise SolverLimitError(f"{NAME} found no plan within {node_limit:,} nodes on "
                               f"{len(records):,} records: choose a greedy strategy")

    chosen_vars = result.x > 0.5
    rep_of = np.full(n, -1, dtype=np.int64)
    rep_of[np.nonzero(chosen_vars[:n])[0]] = np.nonzero(chosen_vars[:n])[0]
    picked = np.nonzero(chosen_vars[n:])[0]
    rep_of[pair_member[picked]] = pair_rep[picked]
    if (rep_of < 0).any():
        raise PlanError(f"{NAME}: the solver left a record without an object ({result.message})")
    reps = sorted({int(r) for r in rep_of})
    object_of_rep = {r: k for k, r in enumerate(reps)}
    assignment = [0] * n
    for rank, pos in enumerate(order):
        assignment[pos] = object_of_rep[int(rep_of[rank])]
    sizes = [records[order[r]].size for r in reps]
    optimal = result.optimal
    found = replace(make_plan(NAME, assignment, sizes), proven_optimal=optimal,
                    search_stopped="" if optimal else f"the solver's limit of {node_limit:,} nodes")
    dual = result.dual_bound if result.dual_bound is not None else 0.0
    return Solution(found, found.total if optimal else min(found.total, int(dual)))


def _maximal_cliques(lo: np.ndarray, hi: np.ndarray) -> list[np.ndarray]:
    """Index sets of the maximal groups of intervals alive together: the group alive at a start
    point is maximal unless every member is still alive at the next start point."""
    if len(lo) == 0:
        return []
    starts = np.unique(lo)
    out = []
    for k, t in enumerate(starts):
        alive = np.nonzero((lo <= t) & (hi >= t))[0]
        if k + 1 < len(starts) and hi[alive].min() >= starts[k + 1]:
            continue
        out.append(alive)
    return out
