"""Exact offsets: a branch and bound in the manner of MiniMalloc (Moffitt, ASPLOS 2023).

The decision problem "do the records fit under a capacity C?" is searched depth first over
*canonical* solutions only: records are placed in non-decreasing order of offset, each at the
lowest offset its placed neighbours in time leave it (its "minimum offset"), so every record rests
on a record below it or on 0. Any packing can be pushed down into such a form, so searching them
all is complete. On top of that, the published rules:
- dynamic ordering: at each node the candidates are the unplaced records by minimum offset, then
  by a static preorder (one of MiniMalloc's heuristics: width, area, section total);
- canonical order: a candidate below the last placement's offset, or at it but earlier in the
  preorder, is skipped (the same set of placements in another order);
- dominance: a candidate whose minimum offset is at or above the lowest top any unplaced record
  could reach would leave a gap that record could fill: skipped;
- section inference: time is cut into sections (the spans between interval ends); in every
  section, its floor (the top of what is placed there, raised to the lowest minimum offset of
  the records still to place there) plus the bytes still to place there must fit under C;
- hatless pruning: when the record just tried has nothing unplaced alive beside it in time, no
  other choice at this node can do better, so the node fails;
- dynamic decomposition: when no unplaced record crosses a section boundary any more, the two
  sides are solved one after the other.
A complete search without a solution proves that C is infeasible.

Minimising the arena: the bound's probe first, briefly (on most MiniMalloc instances the optimum
is the bound and packs early); then a scout of small probes over two ladders of open capacities
(bisection midpoints, and a sweep down from the best plan), because a capacity's hardness jumps
around and one long probe at a time finds the easy capacities late; then the bound's probe again
with half the budget, then bisection between the highest capacity proved infeasible and the
best plan so far. Every probe is resumable, so no node is lost when a capacity is met again.
Each probe runs the preorders round robin with a node limit that doubles (as MiniMalloc does),
so an unlucky preorder cannot stall the probe.

Speed: the probe, the part that runs per node, is the kernel `kernels.exact_probe.run_probe`;
this module keeps the schedule, in Python. The probe runs uncompiled while the search has taken
fewer than PLAIN_STEPS steps on an input below `kernels.COMPILE_FROM` records, compiled from
then on (`_probe_kernel`): the same code, the same nodes and plans, so the switch is by work,
never by time, and a search that ends early never waits for numba.

Determinism: the budget counts nodes (one node = one step down the tree: a placement that passed
its checks, or a probe's root), never seconds, and, optionally, steps (kernels.exact_probe.S_WORK: the
records, sections and neighbours the nodes go through). A node scans its part of the records, so
on a large input few nodes take long: the step budget bounds those, and the search says which
budget stopped it. Building the instance (sections, neighbour rows) takes time and memory in
proportion to the records and their pairs alive together, not a Python object per pair. A time limit
(CPU seconds of this process, so that other programs' load cannot bring it closer) stays as a
safety net only; when it stops the search, the plan says so (`time_limit_hit`), and
only then may the result depend on the machine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from time import process_time
from math import gcd
from typing import Sequence

import numpy as np

from packager.plan import kernels
from packager.plan.kernels import exact_probe
from packager.plan.offsets._tiling import TilingRounds, full_at
from packager.plan.offsets.local_search import OrderDecoder, aligned_lower_bound, greedy_by_size_order
from packager.plan.records import OffsetPlan, UsageRecord, arena_of, offset_lower_bound

NAME = "exact_search"

# MiniMalloc's default static preorders, tried round robin: W = lifetime width, A = area
# (size x width), T = the largest bytes-alive total of the sections the record spans; larger first.
PREORDERS = ("WAT", "TAW", "TWA")
# The node limit of the first round of a probe, per record; it doubles every round.
FIRST_ROUND_NODES_PER_RECORD = 2
# The search gives up once node_budget // PATIENCE_DIVISOR nodes pass without progress (a better
# plan, or a capacity proved infeasible), counted between probes after the probe at the bound.
# 1: the whole budget. On MiniMalloc's D and J the improving probes come after long quiet
# stretches: giving up after an eighth of the budget left both above 2^20 (measured).
PATIENCE_DIVISOR = 1


# The default schedule: the bound's probe for BOUND_FIRST_NODES_PER_RECORD nodes per record
# (most of MiniMalloc's instances pack at the bound within it), then the scout (`_Gap.scout`):
# small probes over ladders of open capacities for SCOUT_NODES_PER_RECORD nodes per record (at
# most half the budget), then the bound's probe again (resumed) and the bisection. The scout's
# first share per probe is SCOUT_FIRST_SHARE_PER_RECORD per record (one preorder's first round).
# Ladders: "sweep" (every capacity down from the best plan), "bisect" (midpoints between the
# floor and the best plan), "both" (a pass of each in turn: the default). Chosen by the table of
# benchmarks/bench_exact.py (docs/strategies.md, "Exact offsets").
SCOUT_FIRST_SHARE_PER_RECORD = 2
SCOUT_LADDERS = ("sweep", "bisect", "both")
DEFAULT_SCOUT = "both"
SCOUT_NODES_PER_RECORD = 100
BOUND_FIRST_NODES_PER_RECORD = 30
# The bound's probe after the scout gets half the budget, at most BOUND_SHARE_NODES: the share it
# had under the former budget of 400,000 nodes, within which every MiniMalloc instance that packs
# at its bound does. Without the cap a bigger budget only delays the bisection: at 8,000,000 nodes
# D first got under 2^20 after 4,035,832 nodes, against 235,832 at 400,000 (measured).
BOUND_SHARE_NODES = 200_000


# After the bound's first probe, if it packed nothing: the tiling probe (`_tiling`, filling the
# lowest point of the skyline) at the bound, over its orders round robin, for at most this many
# nodes per record. It packs at the bound where the first probe explores the orders of
# independent sections: most perfect packings of benchmarks/perfect_packing.py in about one
# node per record (measured by benchmarks/bench_minimalloc.py). Its nodes are counted apart from
# the node budget (the schedule after it is the same as without it) and its steps within the
# step budget. Where every section is full at the bound (`_tiling.full_at`: a perfect packing's bound)
# it runs before the first probe instead: there the first probe's share packed none of the
# perfect packings of 250 buffers (7,500 nodes, 7.1 to 8.0 million steps each, wasted) where
# the tiling probe packs them in 0.5 to 4.0 million steps.
TILING_NODES_PER_RECORD = 50
# Where it leads (every section full at the bound) its share is larger, and its work is counted
# apart from the search's budgets: there nothing else reaches the bound, and what the rest of the
# search finds once it is spent is far above it (perfect 1,000 seeds 2 and 20: 20.6% and 18.6%
# over, after the whole step budget). Of the perfect packings of 1,000 buffers seeds 1 to 400,
# 399 pack within 400 nodes per record and all within 1,200 (seed 92: 1,159,119 nodes, 15.5
# billion steps, more than the search's whole step budget of 12 billion at 1,000 records:
# benchmarks/bench_tiling.py). Its steps are at most FULL_TILING_STEP_FACTOR times the search's
# step budget, so its time stays bounded where its nodes are not what runs out first (a full
# instance that does not pack: perfect 1,000 seed 1 with 30 pairs joined, 27 s -> 65 s).
FULL_TILING_NODES_PER_RECORD = 1_500
FULL_TILING_STEP_FACTOR = 2


def default_scout_nodes(node_budget: int, records: int) -> int:
    return min(node_budget // 2, SCOUT_NODES_PER_RECORD * records)


class _Stop(Exception):
    """The node budget, the step budget (or the safety-net time limit) of a probe is spent."""


@dataclass(frozen=True)
class SearchResult:
    offsets: tuple[int, ...]
    arena: int
    proven_optimal: bool  # no plan of these records has a smaller arena
    lower_bound: int  # the largest capacity proved infeasible, plus one (or the static bound)
    nodes: int
    time_limit_hit: bool
    stopped: str = ""  # why the search left a gap to its bound open, in words ("" when closed)
    nodes_to_best: int = 0  # nodes spent when the best plan was found (0: the plan it started from)
    # every better plan the search found: (nodes spent by then, its arena), in order
    improvements: tuple[tuple[int, int], ...] = ()
    # CPU seconds of this process when each better plan was found: for benchmarks only, they move
    # with the machine, so they are no part of the result's identity
    improvement_cpu: tuple[float, ...] = field(default=(), compare=False)
    steps: int = 0  # the probes' steps (kernels.exact_probe.S_WORK): what a step budget counts
    tiling_nodes: int = 0  # the tiling probe's nodes, apart from `nodes` (TILING_NODES_PER_RECORD)
    tiling_steps: int = 0  # the tiling probe's steps where apart from `steps` (a full instance)


def granule(records: Sequence[UsageRecord], alignment: int) -> int:
    """The step every canonical offset and peak is a multiple of.

    A canonical offset is 0 or a placed record's top aligned up; by induction it is a multiple of
    a step dividing every size and kept by the alignment (the sizes' gcd when the alignment divides
    it, else their gcd with the alignment). So is every top, and the optimum: a capacity C fits
    exactly when C rounded down to the step fits, and no capacity strictly between two steps needs
    a probe (MiniMalloc's instances are in KiB: one probe at peak - 1 KiB proves a peak optimal)."""
    step = 0
    for r in records:
        if r.size > 0:
            step = gcd(step, r.size)
    alignment = max(1, alignment)
    if step == 0:
        return 1
    return step if step % alignment == 0 else gcd(step, alignment)


def round_up(value: int, step: int) -> int:
    return -(-value // step) * step


class _Instance:
    """The records in compressed time: sections, neighbours, as the probe's arrays (int64)."""

    def __init__(self, records: Sequence[UsageRecord], alignment: int) -> None:
        self.alignment = max(1, alignment)
        self.granule = granule(records, self.alignment)
        self.ids = [i for i, r in enumerate(records) if r.size > 0]  # zero-size records take no space
        n = len(self.ids)
        first_op = np.fromiter((records[i].first_op for i in self.ids), np.int64, n)
        end_op = np.fromiter((records[i].last_op + 1 for i in self.ids), np.int64, n)
        self.size = np.fromiter((records[i].size for i in self.ids), np.int64, n)
        ends = np.unique(np.concatenate([first_op, end_op]))
        self.sections = max(0, len(ends) - 1)
        sections = self.sections
        self.first = np.searchsorted(ends, first_op).astype(np.int64)
        self.last = np.searchsorted(ends, end_op).astype(np.int64) - 1  # inclusive
        self.width = end_op - first_op
        # records alive in each section, as compressed rows (CSR), in ascending record number
        spans = self.last - self.first + 1
        cells = np.repeat(np.arange(n, dtype=np.int64), spans)
        at = _ranges(self.first, spans)
        order = np.argsort(at, kind="stable")
        self.alive_idx = cells[order]
        del cells, order
        self.alive_ptr = np.zeros(sections + 1, np.int64)
        np.cumsum(np.bincount(at, minlength=sections), out=self.alive_ptr[1:])
        del at
        # records alive at a common step, by position, each row ascending (built without a
        # Python list per record: on 100,000 long-lived records those took 1 GB)
        self.nbr_ptr, self.nbr_idx = _neighbours(first_op, end_op)
        self.total0 = _span_sums(self.first, self.last + 1, self.size, sections)  # bytes alive in each section
        # records crossing boundary c | c+1
        self.cuts0 = _span_sums(self.first, self.last, np.ones(n, np.int64), max(0, sections - 1))
        self.steps_taken = 0  # by every probe of the search so far (see `_probe_kernel`)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """starts[k], starts[k] + 1, ... (lengths[k] values) for every k, concatenated."""
    total = int(lengths.sum()) if len(lengths) else 0
    if total == 0:
        return np.zeros(0, np.int64)
    begin = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + (np.arange(total, dtype=np.int64) - begin)


def _span_sums(begin: np.ndarray, end: np.ndarray, value: np.ndarray, cells: int) -> np.ndarray:
    """For every cell c < cells: the sum of value[k] over the k with begin[k] <= c < end[k]."""
    diff = np.zeros(cells + 1, np.int64)
    keep = begin < end
    np.add.at(diff, begin[keep], value[keep])
    np.add.at(diff, end[keep], -value[keep])
    return np.cumsum(diff[:cells])


def _neighbours(first_op: np.ndarray, end_op: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The records alive at a common step as compressed rows (each row ascending): in order of
    first step, record a meets every later b starting before a ends (kernels.exact_probe.neighbour_rows)."""
    n = len(first_op)
    order = np.argsort(first_op, kind="stable")
    ends_before = np.searchsorted(first_op[order], end_op[order] - 1, side="right")
    kernel = kernels.compiled(exact_probe) if kernels.use_kernel(n) else exact_probe
    return kernel.neighbour_rows(order.astype(np.int64), ends_before.astype(np.int64), n)


# The preorders' keys as the probe reads them.
_KEY_CODES = {"W": 0, "A": 1, "T": 2}
# What a probe ends with, besides the kernel's own answers.
_TIMED_OUT = -1
# No step budget (the probe's step counter cannot get near it).
UNLIMITED = 1 << 62


class _Probe:
    """One depth-first search for a packing under `capacity`, within `node_limit` nodes: the
    compiled kernel (exact_probe.run_probe) driven from here. It pauses every 1,024 nodes when a
    deadline is set, so that the clock is read here (the node count stays the only budget), and
    when a buffer is full, which is grown here."""

    def __init__(self, inst: _Instance, capacity: int, heuristic: str, node_limit: int,
                 deadline: float | None, step_limit: int = UNLIMITED) -> None:
        kernels = exact_probe
        self.inst, self.capacity, self.node_limit, self.deadline = inst, capacity, node_limit, deadline
        self.step_limit = step_limit
        self.heuristic = np.array([_KEY_CODES[h] for h in heuristic], np.int64)
        n = len(inst.ids)
        self.offset = np.full(n, -1, np.int64)  # -1: not placed
        self.solution = np.full(n, -1, np.int64)
        self.min_offset = np.zeros(n, np.int64)
        self.total = inst.total0.copy()
        self.cuts = inst.cuts0.copy()
        self.rank = np.zeros(n, np.int64)
        self.seen = np.zeros(inst.sections, np.int64)
        self.state = np.zeros(kernels.STATE_SCALARS, np.int64)
        small = max(16, n)
        self.buffers = [np.zeros((small, kernels.FRAME_FIELDS), np.int64),  # frames
                        np.zeros(2 * small, np.int64),  # members
                        np.zeros(4 * max(16, inst.sections), np.int64),  # parts
                        np.zeros(2 * small, np.int64)]  # saved ranks
        # the raised minimum offsets to undo: at most each placed record's neighbours, once
        self.undo_j = np.zeros(len(inst.nbr_idx) + 1, np.int64)
        self.undo_v = np.zeros(len(inst.nbr_idx) + 1, np.int64)
        self.keys = np.zeros(n + 1, np.int64)  # a node's candidates, sorted here by these keys
        self.items = np.zeros(n + 1, np.int64)
        # the root: a split of all sections over all records
        self.buffers[1][:n] = np.arange(n)
        self.state[kernels.S_MEMBERS] = n
        root = self.buffers[0][0]
        root[kernels.F_KIND], root[kernels.F_PHASE] = kernels.SPLIT, kernels.ENTER
        root[kernels.F_LO], root[kernels.F_HI] = 0, inst.sections
        root[kernels.F_MEMBERS], root[kernels.F_COUNT] = 0, n
        self.state[kernels.S_FRAMES] = 1
        self.nodes = 0
        self.steps = 0
        self.timed_out = False
        self.out_of_steps = False

    def run(self) -> int:
        """FOUND, INFEASIBLE, NODE_LIMIT, WORK_LIMIT (exact_probe's codes) or _TIMED_OUT; `nodes`
        and `steps` say how many nodes and steps it took."""
        k, inst = exact_probe, self.inst
        if len(self.total) and int(self.total.max()) > self.capacity:
            return k.INFEASIBLE
        while True:
            kernel = _probe_kernel(inst)
            # Uncompiled, the probe pauses every 1,024 nodes too, to go on compiled once due.
            pause = self.deadline is not None or kernel is exact_probe
            code = kernel.run_probe(inst.first, inst.last, inst.size, inst.width, inst.alive_ptr,
                               inst.alive_idx, inst.nbr_ptr, inst.nbr_idx, self.heuristic,
                               self.capacity, inst.alignment, self.node_limit, self.step_limit,
                               pause, self.offset, self.solution,
                               self.min_offset, self.total, self.cuts, self.rank, self.seen,
                               self.state, *self.buffers, self.undo_j, self.undo_v, self.keys, self.items)
            self.nodes = int(self.state[k.S_NODES])
            inst.steps_taken += int(self.state[k.S_WORK]) - self.steps
            self.steps = int(self.state[k.S_WORK])
            if code == k.WORK_LIMIT:
                self.out_of_steps = True
                return code
            if code == k.PAUSED:
                if self.deadline is not None and time.process_time() >= self.deadline:
                    self.timed_out = True
                    return _TIMED_OUT
            elif code >= k.GROW:
                self._grow(code - k.GROW)
            else:
                return code

    def _grow(self, which: int) -> None:
        old = self.buffers[which]
        self.buffers[which] = np.concatenate([old, np.zeros_like(old)])

    def solve(self) -> list[int] | None:
        """Offsets of a packing under the capacity, or None when none exists; _Stop when out of
        budget (nodes, steps, or the safety-net deadline)."""
        code = self.run()
        if code == exact_probe.FOUND:
            return [int(x) for x in self.solution]
        if code == exact_probe.INFEASIBLE:
            return None
        raise _Stop


# The steps (kernels.exact_probe.S_WORK) a search on fewer than `kernels.COMPILE_FROM` records
# takes with its probe uncompiled; from then on the probe runs compiled. Uncompiled, the probe
# takes about 4 million steps a CPU second here (the tiling probe about 3.5), compiled about 70
# million (MiniMalloc's D); numba's import and the first load of the cached probes cost about
# 0.3 s, a compile on a fresh install 8-17 s. So a search pays at most about 0.13 s uncompiled
# before it compiles, and a search that ends sooner (as on real models) never imports numba.
# At 2,000,000 a search that needs the compiled probe paid 0.5 s first (MiniMalloc's K, 7.1
# million steps: 1.26 s for the whole command, 0.85 s at 500,000); one that ends between the two
# (C, 843,436 steps) now pays numba's load instead, 0.55 -> 0.75 s (benchmarks/bench_minimalloc.py).
PLAIN_STEPS = 500_000


def _probe_kernel(inst: "_Instance"):
    """The probe to run next: `exact_probe` as it is, or compiled (see PLAIN_STEPS)."""
    if kernels.use_kernel(len(inst.ids)) or inst.steps_taken >= PLAIN_STEPS:
        return kernels.compiled(exact_probe)
    return exact_probe


class _CapacityProbe:
    """The probe of one capacity: preorders round robin under a doubling node limit (as MiniMalloc
    does, so an unlucky preorder cannot stall it), resumable: more nodes later go on where the last
    share stopped. A run cut short by its share (not by its round's limit) is run again in full."""

    def __init__(self, inst: _Instance, capacity: int) -> None:
        self.inst, self.capacity = inst, capacity - capacity % inst.granule
        self.limit = FIRST_ROUND_NODES_PER_RECORD * max(1, len(inst.ids))
        self.turn = 0  # the next preorder of the round
        self.complete = False  # a packing found, or the search exhausted
        self.found: list[int] | None = None
        self.spent = 0
        self.steps = 0  # steps of the last `run`
        self.out_of_steps = False  # the last `run` stopped at its step limit

    def run(self, share: int, deadline: float | None, step_share: int = UNLIMITED) -> tuple[int, bool]:
        """Up to `share` more nodes and about `step_share` more steps (a node is entered while
        fewer were taken): (nodes spent, timed out). `steps` and `out_of_steps` say how many steps
        it took and whether they ran out."""
        used = 0
        self.steps, self.out_of_steps = 0, False
        while not self.complete and used < share:
            allowed = min(self.limit, share - used)
            probe = _Probe(self.inst, self.capacity, PREORDERS[self.turn], allowed, deadline,
                           step_share - self.steps)
            try:
                found = probe.solve()
            except _Stop:
                used += probe.nodes
                self.steps += probe.steps
                if probe.timed_out or probe.out_of_steps:
                    self.spent += used
                    self.out_of_steps = probe.out_of_steps
                    return used, probe.timed_out
                if allowed < self.limit:  # cut by the share: this run again next time
                    break
                self.turn += 1
                if self.turn == len(PREORDERS):
                    self.turn, self.limit = 0, self.limit * 2
                continue
            used += probe.nodes
            self.steps += probe.steps
            self.complete, self.found = True, found
        self.spent += used
        return used, False


def fits(inst: _Instance, capacity: int, node_budget: int, deadline: float | None
         ) -> tuple[list[int] | None, bool, int, bool]:
    """Probe `capacity`: (offsets or None, complete, nodes spent, timed out).

    `complete` is True when the answer is proved: a packing, or an exhausted search. Preorders run
    round robin under a doubling node limit until one finishes or `node_budget` is spent. The
    capacity is rounded down to the granule first (the same answer, see `granule`).
    """
    probe = _CapacityProbe(inst, capacity)
    used, timed_out = probe.run(node_budget, deadline)
    return probe.found, probe.complete, used, timed_out


def search(records: Sequence[UsageRecord], alignment: int = 1, initial: OffsetPlan | None = None,
           node_budget: int = 1_000_000, time_limit: float | None = None,
           lower_bound: int | None = None, scout: str = DEFAULT_SCOUT,
           scout_nodes: int | None = None, step_budget: int | None = None) -> SearchResult:
    """The smallest arena the budget reaches, proved optimal when the probes close the gap.

    The probe at the bound gets half the budget; the bisection after it gives up once
    `patience` nodes pass without progress (a better plan, or a capacity proved infeasible),
    and the result says why a gap is left open (`stopped`): both rules count nodes. Before
    them, unless `scout` is "", the bound's probe runs briefly and then the scout (a ladder of
    SCOUT_LADDERS) spends up to `scout_nodes` (None: `default_scout_nodes`) on small probes over
    many capacities (`_Gap.scout`). `step_budget` (None: none) caps the probes' steps as well
    (kernels.exact_probe.S_WORK: what a node scans, which grows with the records where the nodes do not):
    the search stops at whichever budget runs out first, and says which."""
    if scout and scout not in SCOUT_LADDERS:
        raise ValueError(f"unknown scout ladder {scout!r}: one of {', '.join(SCOUT_LADDERS)}")
    cpu_start = process_time()
    alignment = max(1, alignment)
    n = len(records)
    bound = round_up(max(aligned_lower_bound(records, alignment), lower_bound or 0),
                     granule(records, alignment))
    if initial is not None and len(initial.offsets) == n and initial.arena <= bound:
        # nothing to search (and no instance to build, which on 100,000 records takes seconds)
        return SearchResult(tuple(initial.offsets), initial.arena, True, initial.arena, 0, False)
    inst = _Instance(records, alignment)
    deadline = None if time_limit is None else time.process_time() + time_limit
    if initial is None or len(initial.offsets) != n:  # start from first fit of the greedy order
        initial = OffsetPlan(NAME, tuple(_first_fit(records, alignment)), 0, alignment)
        initial = OffsetPlan(NAME, initial.offsets, arena_of(records, initial.offsets), alignment)
    state = _Gap(records, inst, bound, list(initial.offsets), initial.arena, deadline)
    state.cpu_start = cpu_start
    if step_budget is not None:
        state.step_budget = step_budget
    patience = max(1, node_budget // PATIENCE_DIVISOR)
    if scout and state.lo < state.best:
        tiling = inst.granule % inst.alignment == 0
        full = tiling and full_at(inst, state.lo)
        if full:  # no slack anywhere: the tiling probe leads, its work apart (FULL_TILING_NODES_PER_RECORD)
            state.tile(state.lo, FULL_TILING_NODES_PER_RECORD * max(1, len(inst.ids)),
                       steps_apart=min(UNLIMITED, FULL_TILING_STEP_FACTOR * state.step_budget))
        # the bound's probe first, briefly: most of MiniMalloc's instances pack at the
        # bound within it, and pay nothing for the scout (the probe resumes later)
        if state.lo < state.best and not state.halted:
            state.probe(state.lo, min(node_budget, BOUND_FIRST_NODES_PER_RECORD * max(1, len(inst.ids))))
        if state.lo < state.best and not state.halted and tiling and not full:
            state.tile(state.lo, TILING_NODES_PER_RECORD * max(1, len(inst.ids)))
        state.unanswered = state.lo - inst.granule
        if scout_nodes is None:
            scout_nodes = default_scout_nodes(node_budget, len(inst.ids))
        state.scout(scout, min(node_budget, state.spent + scout_nodes),
                    SCOUT_FIRST_SHARE_PER_RECORD * max(1, len(inst.ids)))
    state.bisect(node_budget, patience)
    stopped = ""
    if state.best > state.lo and not state.timed_out:
        stopped = (f"no progress in {patience:,} nodes" if state.gave_up
                   else f"step budget of {step_budget:,} spent" if state.out_of_steps
                   else f"node budget of {node_budget:,} spent")
        if state.tiling_steps:  # a full instance: the tiling probe's own work came first
            stopped += (f", after the tiling probe's own {state.tiling_nodes:,} nodes and "
                        f"{state.tiling_steps:,} steps at the bound")
    return SearchResult(tuple(state.best_offsets), state.best, state.best <= state.lo,
                        min(state.lo, state.best), state.spent, state.timed_out, stopped,
                        state.nodes_to_best, tuple(state.improvements), tuple(state.improvement_cpu),
                        state.steps, state.tiling_nodes, state.tiling_steps)


class _Gap:
    """The open gap between the highest capacity proved infeasible (+1, `lo`) and the best plan."""

    def __init__(self, records: Sequence[UsageRecord], inst: _Instance, lo: int,
                 best_offsets: list[int], best: int, deadline: float | None) -> None:
        self.records, self.inst, self.deadline = records, inst, deadline
        self.lo, self.best_offsets, self.best = lo, best_offsets, best
        self.unanswered = lo - inst.granule  # the highest capacity a probe left open (out of its share)
        self.spent, self.timed_out, self.gave_up = 0, False, False
        self.step_budget, self.steps, self.out_of_steps = UNLIMITED, 0, False
        self.nodes_to_best = 0  # nodes spent when the best plan was found (0: the one it started from)
        self.improvements: list[tuple[int, int]] = []
        self.improvement_cpu: list[float] = []
        self.cpu_start = process_time()
        self.open: dict[int, _CapacityProbe] = {}  # unanswered probes by capacity, resumed when met again
        self.tiling_nodes = 0  # the tiling probe's, apart from `spent` (see TILING_NODES_PER_RECORD)
        self.tiling_steps = 0  # its steps where counted apart from `steps` (a full instance)

    @property
    def halted(self) -> bool:
        """The safety-net time limit or the step budget stopped a probe: no more probes."""
        return self.timed_out or self.out_of_steps

    def probe(self, capacity: int, share: int) -> bool:
        """One probe (resumed if this capacity was probed before); True when it made progress
        (a better plan, or `lo` raised)."""
        capacity -= capacity % self.inst.granule  # a multiple of the granule from here on
        probe = self.open.pop(capacity, None) or _CapacityProbe(self.inst, capacity)
        used, self.timed_out = probe.run(max(1, share), self.deadline, self.step_budget - self.steps)
        self.spent += used
        self.steps += probe.steps
        self.out_of_steps = probe.out_of_steps
        found, complete = probe.found, probe.complete
        if not complete:
            self.open[capacity] = probe
        if found is not None:
            self._improved(found)
            return True
        if complete:  # every capacity up to the probed one's granule is infeasible
            self.lo = capacity + self.inst.granule
            return True
        self.unanswered = max(self.unanswered, capacity)
        return False

    def tile(self, capacity: int, share: int, steps_apart: int | None = None) -> None:
        """The tiling probe at `capacity` for at most `share` nodes: a packing becomes the best
        plan, an exhausted search raises `lo`. Its steps count against the step budget, or with
        `steps_apart` against that many steps of its own (the search's budget left whole)."""
        capacity -= capacity % self.inst.granule
        rounds = TilingRounds(self.inst, capacity)
        allowed = self.step_budget - self.steps if steps_apart is None else steps_apart
        used, steps, out = rounds.run(share, allowed, PLAIN_STEPS)
        self.tiling_nodes += used
        if steps_apart is None:
            self.steps += steps
            self.out_of_steps = out
        else:
            self.tiling_steps += steps
        if rounds.found is not None:
            self._improved(rounds.found)
        elif rounds.complete:
            self.lo = capacity + self.inst.granule

    def _improved(self, found: list[int]) -> None:
        """A packing (by the instance's records) becomes the best plan."""
        offsets = [0] * len(self.records)
        for k, i in enumerate(self.inst.ids):
            offsets[i] = found[k]
        self.best_offsets, self.best = offsets, arena_of(self.records, offsets)
        self.nodes_to_best = self.spent
        self.improvements.append((self.nodes_to_best, self.best))
        self.improvement_cpu.append(process_time() - self.cpu_start)

    def scout(self, ladder: str, scout_budget: int, share: int) -> None:
        """Small probes over a ladder of open capacities, each given `share` nodes; when the
        ladder reaches the floor it starts again with twice the share (an open probe goes on
        where it stopped, so no node is lost). "both": a pass of the bisection, then a pass of the
        sweep given as many nodes as that pass took, the sweep keeping its first (cheap) share.
        "sweep": every capacity down from the best plan, one granule at a time; "bisect": the midpoint between the floor
        (raised past the capacities left open) and the best plan. A capacity's hardness jumps
        around (on MiniMalloc's D, 1010 KiB packs in 339 nodes, 1011 to 1014 KiB stay open after
        4,000 each), which small shares over many capacities are meant to exploit."""
        step = self.inst.granule
        gap = 1  # "sweep": granules below the best plan
        # "both": a pass of the bisection, then a pass of the sweep, each with its own share
        now = "bisect" if ladder == "both" else ladder
        shares = {"sweep": share, "bisect": share}
        pass_start, sweep_allowance = 0, 0
        while self.lo < self.best and self.spent < scout_budget and not self.halted:
            if now == "bisect":
                low = max(self.lo, self.unanswered + step)
                if low >= self.best:  # the pass is over
                    self.unanswered = self.lo - step
                    shares[now] *= 2
                    if ladder == "both":  # the sweep gets as many nodes as this pass took
                        now, gap = "sweep", 1
                        sweep_allowance, pass_start = self.spent - pass_start, self.spent
                        continue
                    low = self.lo
                self.probe((low + self.best - 1) // 2, min(shares[now], scout_budget - self.spent))
                continue
            capacity = self.best - gap * step
            if capacity < self.lo or (ladder == "both" and self.spent - pass_start >= sweep_allowance):
                gap = 1
                if ladder != "both":
                    shares[now] *= 2
                if ladder == "both":
                    now, pass_start = "bisect", self.spent
                continue
            share = shares[now]
            before = self.best
            self.probe(capacity, min(share, scout_budget - self.spent))
            gap = 1 if self.best < before else gap + 1
        self.unanswered = self.lo - step  # the bisection after it starts from the floor

    def bisect(self, node_budget: int, patience: int) -> None:
        """Probe the bound with half the budget, at most BOUND_SHARE_NODES (MiniMalloc's instances
        meet it within that), then bisect between the gap's floor and the best plan with half of
        what is left each time: a packing lowers the best plan, an exhausted probe raises `lo`, an
        unanswered one raises the floor of the next probes. When every capacity below the plan was
        left open, the bisection starts again with what is left (an open probe goes on where it
        stopped), so the whole budget is used. Stop (`gave_up`) once `patience` nodes pass without
        progress."""
        quiet = 0  # nodes since the last progress
        first = True
        while self.lo < self.best and self.spent < node_budget and not self.halted:
            low = max(self.lo, self.unanswered + self.inst.granule)
            if low >= self.best:  # every capacity below the plan left open: again, with more nodes
                self.unanswered = self.lo - self.inst.granule
                low = self.lo
            if quiet >= patience:
                self.gave_up = True
                break
            capacity = self.lo if first else (low + self.best - 1) // 2
            share = (max(1, min(node_budget // 2, BOUND_SHARE_NODES, node_budget - self.spent)) if first
                     else max(1, (node_budget - self.spent) // 2))
            before = self.spent
            progress = self.probe(capacity, share)
            quiet = 0 if progress or first else quiet + self.spent - before
            first = False


def _first_fit(records: Sequence[UsageRecord], alignment: int) -> list[int]:
    decoder = OrderDecoder(records, alignment)
    offsets = [-1] * len(records)
    decoder.decode(greedy_by_size_order(records, decoder.ids), offsets)
    return [max(0, o) for o in offsets]


def plan(records: Sequence[UsageRecord], alignment: int = 1, initial: OffsetPlan | None = None,
         node_budget: int = 1_000_000, time_limit: float | None = None,
         lower_bound: int | None = None, step_budget: int | None = None) -> OffsetPlan:
    """The search's plan; `initial` itself (relabelled) when the search finds nothing smaller."""
    result = search(records, alignment, initial, node_budget, time_limit, lower_bound,
                    step_budget=step_budget)
    return OffsetPlan(NAME, result.offsets, result.arena, max(1, alignment),
                      proven_optimal=result.proven_optimal, time_limit_hit=result.time_limit_hit,
                      search_stopped=result.stopped)


def search_plan(records: Sequence[UsageRecord], alignment: int, initial: OffsetPlan | None,
                nodes: int, time_limit: float | None, lower_bound: int | None,
                steps: int | None = None) -> OffsetPlan:
    """The portfolio's entry (the same as `plan`)."""
    return plan(records, alignment, initial, nodes, time_limit, lower_bound, steps)


@dataclass(frozen=True)
class ClaimCheck:
    """Whether an "optimal" claim for an arena holds: `holds`, or `reason` in plain words."""
    holds: bool
    reason: str = ""
    nodes: int = 0


def check_optimal_claim(records: Sequence[UsageRecord], alignment: int, arena: int,
                        node_budget: int) -> ClaimCheck:
    """Re-prove that no plan of `records` has an arena below `arena`.

    A claim at the lower bound (rounded up to the granule) needs nothing more. Above it, a proof
    is one exhausted probe at `arena - 1`, rounded down to the granule (infeasibility is monotone:
    nothing smaller fits either), which is the probe that closed the search's gap; the probe is
    deterministic, and run in one go it needs no more nodes than the search's probe given in
    shares, so within `node_budget` nodes it reaches the same answer the search did."""
    alignment = max(1, alignment)
    if arena <= offset_lower_bound(records):  # the largest operator breadth: cheap, and often met
        return ClaimCheck(True)
    if arena <= round_up(aligned_lower_bound(records, alignment), granule(records, alignment)):
        return ClaimCheck(True)
    inst = _Instance(records, alignment)
    found, complete, used, _ = fits(inst, arena - 1, node_budget, None)
    if found is not None:
        offsets = [0] * len(records)
        for k, i in enumerate(inst.ids):
            offsets[i] = found[k]
        return ClaimCheck(False, f"a plan of {arena_of(records, offsets)} B exists", used)
    if not complete:
        return ClaimCheck(False, f"no proof within {node_budget:,} nodes of the exact search", used)
    return ClaimCheck(True, "", used)
