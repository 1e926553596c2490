"""The exact search's second probe, driven from Python: `kernels.tiling_probe` on the exact
search's instance (its sections and records alive per section), resumable, its buffers grown here.

It answers the same question as the first probe ("do the records fit under this capacity?"),
complete as well, by filling the lowest point of the skyline (see the kernel). It runs compiled
like the first probe once the search's steps pass `exact_search.PLAIN_STEPS` or the input has
`kernels.COMPILE_FROM` records."""

from __future__ import annotations

import numpy as np

from packager.plan import kernels
from packager.plan.kernels import tiling_probe as tk


def twins(first: np.ndarray, last: np.ndarray, size: np.ndarray) -> np.ndarray:
    """For every record, the previous one with the same span and size (-1: none): the probe
    places twins in record order only (any packing can swap them)."""
    out = np.full(len(size), -1, np.int64)
    seen: dict[tuple[int, int, int], int] = {}
    for k, key in enumerate(zip(first.tolist(), last.tolist(), size.tolist())):
        out[k] = seen.get(key, -1)
        seen[key] = k
    return out


# The orders a point's candidates are tried in, round robin (as the first probe's preorders):
# larger areas first, larger sizes first, smaller sizes first (each then longer spans first, then
# record number). On the perfect packings of benchmarks/perfect_packing.py no one order is best:
# each leaves some instances open that another packs in about one node per record.
ORDERS = ("area", "size", "small")
# Where every section is full at the capacity (a packing is then a tiling: `full_at`),
# each order runs a second time with the records that fit their point first (their top meets
# the floor beside them: `kernels.tiling_probe._key`), and a seventh search tries the records
# that begin earlier first (each then longer spans first): seven searches round robin. On the
# perfect packings of 500 and 1,000 buffers one search packs in about one node per record where
# most others stay open for many times that (benchmarks/bench_tiling.py), and which one varies:
# only the earliest starts first packs perfect 1,000 seed 1 within the search's share. All seven
# backjump there, and an eighth turn of each round goes to fresh random orders (TilingRestarts).
FULL_ORDERS = (("area", False), ("size", False), ("small", False),
               ("area", True), ("size", True), ("small", True), ("early", False))


def static_rank(first: np.ndarray, last: np.ndarray, size: np.ndarray, order: str) -> np.ndarray:
    """Every record's place in the order `order` (one of ORDERS, or "early")."""
    span = last - first + 1
    keys = {"area": (-span, -size * span), "size": (-span, -size), "small": (-span, size),
            "early": (-span, first)}[order]
    return places(np.lexsort((np.arange(len(size)),) + keys))


def places(ranked: np.ndarray) -> np.ndarray:
    """Every record's place in an order that lists the records as `ranked` does."""
    rank = np.empty(len(ranked), np.int64)
    rank[ranked] = np.arange(len(ranked), dtype=np.int64)
    return rank


def full_at(inst, capacity: int) -> bool:
    """Whether every section holds exactly `capacity` bytes: a packing under it leaves no point of
    any section empty, so it is a tiling (the tiling probe's wells rule then holds everywhere)."""
    return inst.sections > 0 and bool((inst.total0 == capacity).all())


class TilingProbe:
    """One capacity's tiling search: `run(nodes, steps)` goes on where the last run stopped.
    `order`: one of ORDERS or "early", or with `drawn` (a numpy generator) "random": the records'
    order and the sections' (which point of equally few candidates is filled first; else the
    leftmost) drawn from it. `jump`: back up past points a dead end does not involve (the
    kernel's backjumping: sound only where the instance is full at the capacity, which is where
    TilingRounds turns it on). `conflicts` (with `jump`): per record, the dead ends whose window
    held it, in this search and those before it (the search adds to it); with "random", the
    records' order is drawn from it (conflict_rank)."""

    def __init__(self, inst, capacity: int, order: str, fit: bool = False, jump: bool = False,
                 drawn: np.random.Generator | None = None,
                 conflicts: np.ndarray | None = None) -> None:
        self.inst, self.capacity = inst, capacity - capacity % inst.granule
        self.fit = 1 if fit else 0
        self.jump = 1 if jump else 0
        n, sections = len(inst.ids), inst.sections
        if "_twins" not in inst.__dict__:  # per instance, shared by its probes
            inst._twins = twins(inst.first, inst.last, inst.size)
        self.twin = inst._twins
        if order == "random":
            self.rank = (drawn.permutation(n).astype(np.int64) if conflicts is None
                         else conflict_rank(conflicts, drawn))
            self.tie = drawn.permutation(max(1, sections)).astype(np.int64)
        else:
            self.rank = static_rank(inst.first, inst.last, inst.size, order)
            self.tie = np.arange(max(1, sections), dtype=np.int64)
        self.floor = np.zeros(sections, np.int64)
        self.remaining = inst.total0.copy()
        self.cuts = inst.cuts0.copy()
        self.offset = np.full(n, -1, np.int64)
        self.solution = np.full(n, -1, np.int64)
        self.state = np.zeros(tk.TILING_SCALARS, np.int64)
        self.frames = np.zeros((max(16, 2 * n), tk.FRAME_WIDTH), np.int64)
        self.parts = np.zeros(max(16, 4 * sections), np.int64)
        # the root: a search of every section
        self.frames[0, tk.G_KIND], self.frames[0, tk.G_PHASE] = tk.SEARCH, tk.ENTER
        self.frames[0, tk.G_LO], self.frames[0, tk.G_HI] = 0, sections
        self.state[tk.T_DEPTH] = 1
        self.candidates = np.zeros(max(16, 4 * n), np.int64)
        self.top = np.zeros(n, np.int64)  # the kernel's scratch: each record's lowest offset
        self.stamp = np.zeros(n, np.int64)
        self.reach = np.zeros(sections + 1, np.int64)  # the kernel's scratch: a well's tiling
        self.walled = np.zeros(max(1, sections), np.int64)  # and whether a section's run is walled
        # backjumping's windows: a set of records per frame, and the failure passed up (no room
        # where it is off)
        words = n // tk.WINDOW_BITS + 1 if self.jump else 0
        self.windows = np.zeros((len(self.frames), words), np.int64)
        self.failed = np.zeros(words, np.int64)
        self.conflicts = np.zeros(0, np.int64) if conflicts is None else conflicts
        self.complete = False
        self.found: list[int] | None = None
        self.nodes = 0  # so far, every run
        self.steps = 0

    def run(self, node_share: int, step_share: int, compiled: bool) -> tuple[int, int, bool]:
        """Up to `node_share` more nodes and about `step_share` more steps, compiled or not (the
        same nodes either way): (nodes, steps, out of steps). `complete` and `found` say whether
        it answered and how."""
        kernel = kernels.compiled(tk) if compiled else tk
        if self.complete:
            return 0, 0, False
        if len(self.remaining) and int(self.remaining.max()) > self.capacity:
            self.complete = True  # a section holds more than the capacity
            return 0, 0, False
        nodes0, steps0 = int(self.state[tk.T_NODES]), int(self.state[tk.T_WORK])
        while True:
            code = kernel.run_tiling(
                self.inst.first, self.inst.last, self.inst.size, self.rank, self.fit, self.jump,
                self.tie, self.twin,
                self.inst.alive_ptr, self.inst.alive_idx, self.capacity, self.inst.granule,
                nodes0 + node_share, steps0 + step_share, self.floor, self.remaining, self.cuts,
                self.offset, self.solution, self.state, self.frames, self.candidates, self.parts,
                self.top, self.stamp, self.reach, self.walled, self.windows, self.failed,
                self.conflicts)
            if code == tk.GROW + tk.FRAME_BUFFER:
                self.frames = np.concatenate([self.frames, np.zeros_like(self.frames)])
                self.windows = np.concatenate([self.windows, np.zeros_like(self.windows)])
            elif code == tk.GROW + tk.CANDIDATE_BUFFER:
                self.candidates = np.concatenate([self.candidates, np.zeros_like(self.candidates)])
            elif code == tk.GROW + tk.PART_BUFFER:
                self.parts = np.concatenate([self.parts, np.zeros_like(self.parts)])
            else:
                break
        nodes, steps = int(self.state[tk.T_NODES]) - nodes0, int(self.state[tk.T_WORK]) - steps0
        self.inst.steps_taken += steps  # the search's steps, which decide when to compile
        self.nodes += nodes
        self.steps += steps
        if code == tk.FOUND:
            self.complete, self.found = True, [int(x) for x in self.solution]
        elif code == tk.INFEASIBLE:
            self.complete = True
        return nodes, steps, code == tk.WORK_LIMIT


# A record's level in an order drawn from the conflicts: the bit length of (1 + its count)^4, one
# level per factor of 2^(1/4) in the count; the draw spreads each record over LEVEL_SPREAD levels
# (so a record ranks after every record at least LEVEL_SPREAD levels below it, and among its
# neighbours at random).
LEVEL_SPREAD = 2


def conflict_rank(conflicts: np.ndarray, drawn: np.random.Generator) -> np.ndarray:
    """Every record's place in a random order in which the records found in more dead ends'
    windows come later (a point's candidates are tried in it). In a full instance the window of a
    dead end holds the placed records that explain it: a record that keeps turning up in them is
    one a packing does not put where the searches so far put it first. Integers only: the same
    order on any machine."""
    unit = 1 << 20
    level = np.array([((1 + int(c)) ** 4).bit_length() for c in conflicts.tolist()], np.int64)
    key = level * unit + drawn.integers(0, LEVEL_SPREAD * unit, len(conflicts))
    return places(np.lexsort((np.arange(len(conflicts)), key)))


def luby(i: int) -> int:
    """The i-th term (from 1) of Luby's restart sequence: 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, ..."""
    while True:
        k = i.bit_length()
        if i == (1 << k) - 1:
            return 1 << (k - 1)
        i -= (1 << (k - 1)) - 1


class TilingRestarts:
    """Fresh tiling searches, each in orders drawn from a fixed seed, the i-th stopped after
    UNIT x luby(i) nodes per record (Luby's sequence: short runs, and now and then one twice as
    long as any before). On a full instance a search either packs in one to a few nodes per
    record or stalls far deeper, and which order packs differs from instance to instance
    (benchmarks/bench_tiling.py): fresh orders try many paths where resuming a stalled search
    digs deeper into the same one. Each search draws a random order of the records (the
    candidates of a point) and of the sections (which point of equally few candidates is filled
    first), every other one with the records that fit first. Same seed, same orders: the same
    nodes on any machine.

    `learning`: the searches learn from each other instead. Every dead end adds 1 to the count of
    each record in its window, and each fresh search draws its records' order from the counts
    (conflict_rank: the records most often in a window come last), from its own seed; every
    search is stopped after UNIT nodes per record (many short searches: the counts grow with
    the dead ends, and the order sharpens with every search; Luby's longer runs learned less
    within the same nodes). Plain random orders stay beside them (TilingRounds runs both): on a
    few instances the counts settle on an order that never packs."""

    SEED = 20_260_601
    UNIT = 2  # nodes per record of a search of luby(i) = 1: a lucky order packs in 1 to 3

    def __init__(self, inst, capacity: int, learning: bool = False) -> None:
        self.inst, self.capacity = inst, capacity
        self.learning = learning
        self.rng = np.random.default_rng(self.SEED + (1 if learning else 0))
        # per record, the dead ends whose window held it (every search's, where `learning`)
        self.conflicts = np.zeros(len(inst.ids), np.int64) if learning else None
        self.count = 0  # searches started
        self.current: TilingProbe | None = None
        self.spent = 0  # nodes of the current search
        self.nodes = self.steps = 0
        self.complete = False
        self.found: list[int] | None = None

    def _next(self) -> TilingProbe:
        self.count += 1
        return TilingProbe(self.inst, self.capacity, "random", fit=self.count % 2 == 0, jump=True,
                           drawn=self.rng, conflicts=self.conflicts)

    def _length(self) -> int:
        """The current search's nodes per record, in UNITs."""
        return 1 if self.learning else luby(self.count)

    def run(self, node_share: int, step_share: int, compiled: bool) -> tuple[int, int, bool]:
        """As TilingProbe.run, over as many fresh searches as the share reaches."""
        nodes = steps = 0
        out = False
        per_record = self.UNIT * max(1, len(self.inst.ids))
        while not self.complete and nodes < node_share and not out:
            if self.current is None or self.spent >= self._length() * per_record:
                self.current, self.spent = self._next(), 0
            room = self._length() * per_record - self.spent
            used, took, out = self.current.run(min(room, node_share - nodes), step_share - steps,
                                               compiled)
            nodes, steps, self.spent = nodes + used, steps + took, self.spent + used
            if self.current.complete:
                self.complete, self.found = True, self.current.found
        self.nodes += nodes
        self.steps += steps
        return nodes, steps, out


class TilingRounds:
    """The tiling probe of one capacity over ORDERS round robin, under a node limit that doubles
    every round (from FIRST_ROUND_NODES_PER_RECORD per record), each order's search resumed where
    it stopped: complete as soon as one order's search is. On a full instance: FULL_ORDERS with
    backjumping, then TilingRestarts in random orders and TilingRestarts learning, each turn of
    the two as long as the seven's together."""

    FIRST_ROUND_NODES_PER_RECORD = 2

    def __init__(self, inst, capacity: int) -> None:
        orders = [(order, False) for order in ORDERS]
        full = full_at(inst, capacity - capacity % inst.granule)
        if full:
            orders = FULL_ORDERS
        self.probes = [TilingProbe(inst, capacity, order, fit, jump=full) for order, fit in orders]
        self.weights = [1] * len(self.probes)  # a turn's share of the round's limit
        if full:
            self.probes += [TilingRestarts(inst, capacity), TilingRestarts(inst, capacity, learning=True)]
            self.weights += [len(orders), len(orders)]
        self.limit = self.FIRST_ROUND_NODES_PER_RECORD * max(1, len(inst.ids))
        self.turn = 0
        self.complete = False
        self.found: list[int] | None = None

    def run(self, node_share: int, step_share: int, plain_steps: int) -> tuple[int, int, bool]:
        """Up to `node_share` more nodes and `step_share` more steps, uncompiled until the
        search's steps (the instance's `steps_taken`) reach `plain_steps`, compiled from then on
        (`exact_search.PLAIN_STEPS`). Returns (nodes, steps, out of steps)."""
        nodes = steps = 0
        inst = self.probes[0].inst
        always = kernels.use_kernel(len(inst.ids))
        while not self.complete and nodes < node_share:
            probe = self.probes[self.turn]
            room = self.limit * self.weights[self.turn] - probe.nodes  # what is left of its turn
            if room <= 0:
                self.turn = (self.turn + 1) % len(self.probes)
                if self.turn == 0:
                    self.limit *= 2
                continue
            compiled = always or inst.steps_taken >= plain_steps
            allowed = step_share - steps
            if not compiled:
                allowed = min(allowed, plain_steps - inst.steps_taken)
            used, took, out = probe.run(min(room, node_share - nodes), allowed, compiled)
            nodes, steps = nodes + used, steps + took
            if out and not compiled and steps < step_share:
                out = False  # only the uncompiled share is spent: go on compiled
            if probe.complete:
                self.complete, self.found = True, probe.found
            if out:
                return nodes, steps, True
        return nodes, steps, False
