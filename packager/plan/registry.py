"""One table that names every strategy: adding one touches a new module and one line here.

Each entry adapts a strategy module's pure `plan` function to a Problem. Offset strategies return
OffsetPlans, object strategies ObjectPlans. Searches (`local_search`, `best_fit_search`,
`exact_search`) are strategies too: they start from a plan (the portfolio's best so far) and spend
a Budget; `best` runs them in the order listed here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Union

from packager.plan.objects import (equality, greedy_by_breadth as obj_greedy_by_breadth,
                                   greedy_by_size as obj_greedy_by_size, greedy_by_size_improved,
                                   gpu_delegate, greedy_in_order as obj_greedy_in_order,
                                   integer_program, min_cost_flow, naive as obj_naive)
from packager.plan.offsets import (best_fit_search, bfc, exact_search, gpu_greedy_by_size, greedy_by_breadth,
                                   greedy_by_size_tflite, greedy_by_size_tflm, greedy_in_order, local_search, naive,
                                   nnc, objects_end_to_end, path_cover, simulated_allocator,
                                   strip_packing)
from packager.plan.problem import Problem
from packager.plan.records import ObjectPlan, OffsetPlan

Plan = Union[OffsetPlan, ObjectPlan]


@dataclass(frozen=True)
class Budget:
    """How much a search may do. `work` counts the search's own steps (iterations or tree nodes),
    so its plan depends only on the input; `time_limit` is a safety net in CPU seconds of this
    process (other programs' load cannot bring it closer), and a plan it stopped says so
    (OffsetPlan.time_limit_hit)."""

    work: int
    time_limit: float | None = None
    # A second count of work for a search whose steps grow with the input (the exact search's
    # nodes scan their records): the steps allowed for an input of this many records.
    steps: Callable[[int], int] | None = None

    def capped(self, seconds: float | None) -> "Budget":
        """The same work with a time limit no longer than `seconds`."""
        if seconds is None:
            return self
        return replace(self, time_limit=seconds if self.time_limit is None else min(seconds, self.time_limit))


@dataclass(frozen=True)
class Strategy:
    name: str
    kind: str  # "offsets", "objects" or "baseline" (a dynamic allocator's figure, not a plan to ship)
    run: Callable[[Problem], Plan]
    summary: str
    # `best` leaves a strategy out above this many records: only the exact ones, whose work
    # grows much faster than the records (benchmarks/bench_strategies.py times every strategy
    # up to 100,000 records).
    max_records: int | None = None
    # An exact strategy cannot beat a plan already at the lower bound: `best` then reports that
    # plan under its name instead of running it (as it does for the searches).
    exact: bool = False
    # A search: `improve(problem, initial, budget)` returns a plan never worse than `initial`
    # (`run` starts it from nothing), spending at most `budget`.
    improve: Callable[[Problem, OffsetPlan | None, Budget], Plan] | None = None
    budget: Budget | None = None
    # A shared-object strategy `package` (which needs one good plan, within a time target) leaves
    # out above this many records (portfolio._object_plans reads it): min_cost_flow's range-tree
    # solve takes seconds there, for plans far above the best on every shape measured (branching
    # 10,000: 4 times the integer program's); `plan --strategy best` still runs it.
    ship_max_records: int | None = None
    # Run only when named (`plan --strategy NAME`), never by `best` or `all`: the TFLite GPU
    # delegate's own strategies, there to be compared with, each of which ours match or beat.
    named_only: bool = False


def _search(name: str, module, budget: Budget, summary: str, max_records: int | None = None,
            exact: bool = False) -> Strategy:
    def improve(p: Problem, initial: OffsetPlan | None, b: Budget) -> Plan:
        steps = {} if b.steps is None else {"steps": b.steps(len(p.records))}
        return module.search_plan(p.records, p.alignment, initial, b.work, b.time_limit,
                                  p.offset_lower_bound, **steps)
    return Strategy(name, "offsets", lambda p: improve(p, None, budget), summary, max_records,
                    exact, improve, budget)


def _offsets(name: str, fn: Callable, summary: str, max_records: int | None = None) -> Strategy:
    return Strategy(name, "offsets", lambda p: fn(p.records, p.alignment), summary, max_records)


def _objects(name: str, fn: Callable, summary: str, max_records: int | None = None) -> Strategy:
    return Strategy(name, "objects", lambda p: fn(p.records), summary, max_records)


def no_larger_than_delegate(ours: Callable[[Problem], ObjectPlan],
                            delegate: str) -> Callable[[Problem], ObjectPlan]:
    """Our heuristic, held never larger than its counterpart in the TFLite GPU delegate: up to
    gpu_delegate.COMPARE_UP_TO records both run (the delegate's with records in its order) and
    the smaller plan is kept under our name (ties: ours)."""
    def run(p: Problem) -> ObjectPlan:
        plan = ours(p)
        if len(p.records) <= gpu_delegate.COMPARE_UP_TO:
            theirs = _delegate_plan(p, delegate)
            if theirs.total < plan.total:
                return replace(theirs, strategy=plan.strategy)
        return plan
    return run


def _delegate_plan(p: Problem, delegate: str) -> ObjectPlan:
    """The delegate's plan, records by first task, made once per problem: greedy_by_size and
    greedy_by_size_improved are both held to its GREEDY_BY_SIZE."""
    memo = p.__dict__.setdefault("_delegate_plans", {})  # beside the immutable problem
    if delegate not in memo:
        memo[delegate] = gpu_delegate.in_first_task_order(gpu_delegate.OBJECTS[delegate], p.records)
    return memo[delegate]


def _greedy_by_size_objects(p: Problem) -> ObjectPlan:
    """Our shared-object greedy by size alone, made once per problem: objects_end_to_end lays its
    objects end to end, and the strategy greedy_by_size starts from it (a plan is immutable)."""
    memo = p.__dict__  # beside the immutable problem, as its cached lower bounds are
    if "_greedy_by_size_objects" not in memo:
        memo["_greedy_by_size_objects"] = obj_greedy_by_size.plan(p.records)
    return memo["_greedy_by_size_objects"]


OFFSET_STRATEGIES: tuple[Strategy, ...] = (
    _offsets("naive", naive.plan, "every tensor end to end"),
    _offsets("greedy_in_order", greedy_in_order.plan, "by first use, smallest gap"),
    Strategy("greedy_by_size", "offsets",
             lambda p: greedy_by_size_tflite.plan(p.records, p.alignment, whole_run=p.whole_run),
             "largest first, smallest gap (TFLite's arena planner)"),
    Strategy("greedy_by_size_tflm", "offsets",
             lambda p: greedy_by_size_tflm.plan(p.records, p.alignment, fixed=p.fixed),
             "largest first, first gap (TFLite Micro's planner)"),
    _offsets("greedy_by_breadth", greedy_by_breadth.plan, "widest operator first"),
    _offsets("strip_packing", strip_packing.plan, "skyline best fit (Sekiyama et al.)"),
    _offsets("path_cover", path_cover.plan, "path-cover groups (Efficiera)"),
    _offsets("nnc", nnc.plan, "allocation graph (libccv NNC)"),
    _offsets("simulated_allocator", simulated_allocator.plan, "replayed best-fit allocator (MegEngine)"),
    Strategy("objects_end_to_end", "offsets",
             lambda p: objects_end_to_end.plan(p.records, p.alignment, objects=_greedy_by_size_objects(p)),
             "shared objects laid end to end"),
)

OBJECT_STRATEGIES: tuple[Strategy, ...] = (
    _objects("naive", obj_naive.plan, "one object per tensor"),
    _objects("equality", equality.plan, "reuse objects of equal size"),
    Strategy("greedy_in_order", "objects",
             no_larger_than_delegate(lambda p: obj_greedy_in_order.plan(p.records), "GREEDY_IN_ORDER"),
             "by first use, closest fit"),
    replace(_objects("min_cost_flow", min_cost_flow.plan, "min-cost flow (Lee et al.)"),
            ship_max_records=min_cost_flow.LOOP_RECORDS),
    _objects("greedy_by_breadth", obj_greedy_by_breadth.plan, "widest operator first"),
    Strategy("greedy_by_size", "objects", no_larger_than_delegate(_greedy_by_size_objects, "GREEDY_BY_SIZE"),
             "largest first, best object"),
    Strategy("greedy_by_size_improved", "objects",
             no_larger_than_delegate(lambda p: greedy_by_size_improved.plan(p.records), "GREEDY_BY_SIZE"),
             "positional-maximum stages, nearest use"),
    Strategy("integer_program", "objects", lambda p: integer_program.plan(p.records),
             "exact integer program (HiGHS)", exact=True,
             improve=lambda p, start, _budget: integer_program.plan(p.records, start)),
)

def _delegate_objects(name: str) -> Strategy:
    """One of the TFLite GPU delegate's strategies; the in-order ones get the records by first
    task, as the delegate's callers pass them, the others in the order given (tensor order)."""
    fn = gpu_delegate.OBJECTS[name]
    if name in gpu_delegate.IN_ORDER:
        return Strategy(name, "objects", lambda p: gpu_delegate.in_first_task_order(fn, p.records),
                        "the TFLite GPU delegate's", named_only=True)
    return Strategy(name, "objects", lambda p: fn(p.records), "the TFLite GPU delegate's", named_only=True)


# The TFLite GPU delegate's strategies under its own names (plan/objects/gpu_delegate.py), plans
# identical to its code's: run when named only (docs/gpu-delegate.md).
DELEGATE_OFFSETS: tuple[Strategy, ...] = (
    Strategy("GREEDY_BY_SIZE", "offsets", lambda p: gpu_greedy_by_size.plan(p.records, p.alignment),
             "the TFLite GPU delegate's offsets", named_only=True),
)
DELEGATE_OBJECTS: tuple[Strategy, ...] = tuple(_delegate_objects(name) for name in gpu_delegate.OBJECTS)

BASELINES: tuple[Strategy, ...] = (
    Strategy("bfc", "baseline", lambda p: bfc.replay(p.records), "TensorFlow's BFC allocator replayed"),
)

LOCAL_SEARCH = "local_search"
# The exact search's node budget: every MiniMalloc instance it proves takes under 200,000 nodes
# (E: 176,984), and with the compiled probe a search that cannot close the gap (D, J) spends it in
# 30-60 s of CPU at 200-400 records here (benchmarks/bench_exact.py).
EXACT_NODES = 8_000_000
# Its step budget (exact_probe.S_WORK: the records, sections and neighbours its nodes go through,
# about 230-800 million a CPU second here): a node scans its part of the records, so on a large
# input the nodes alone would not bound the time (8,000,000 nodes of 100,000 records: days). The
# search stops at whichever runs out first. Large inputs get EXACT_STEPS_PER_RECORD steps per
# record (1.6 to 2.6 s of CPU at 10,000 records, 13 to 43 s at 100,000 off the bound: python -m
# benchmarks.bench_exact --large); small ones get EXACT_STEPS_TIMES_RECORDS / records steps,
# more than the node budget costs the two instances of MiniMalloc's suite that spend it (D and J:
# 39.0 and 22.3 billion steps, times 213 and 409 records 8.3 and 9.1 x 10^12), so they keep
# their plans and nodes. Where every section is full at the bound the tiling probe that leads has
# steps of its own besides, at most exact_search.FULL_TILING_STEP_FACTOR times these.
EXACT_STEPS_PER_RECORD = 100_000
EXACT_STEPS_TIMES_RECORDS = 12 * 10**12


def exact_steps(records: int) -> int:
    """The exact search's step budget for an input of this many records."""
    return max(EXACT_STEPS_PER_RECORD * records, EXACT_STEPS_TIMES_RECORDS // max(1, records))


# Searches, in the order `best` runs them, each from the best plan so far. Their work budgets
# keep their plans independent of the machine; the time limits are safety nets for large inputs.
SEARCH_STRATEGIES: tuple[Strategy, ...] = (
    _search(LOCAL_SEARCH, local_search, Budget(300, 5.0), "hill climbing over orders (Vela)"),
    # The tree search's first descent always completes, whatever its time limit: it finds its
    # choices by index (1.4-3.4 s on 100,000 records of every benchmark shape), so `best` runs
    # it at every size.
    _search("best_fit_search", best_fit_search, Budget(20_000, 10.0),
            "skyline best-fit tree search"),
    _search(exact_search.NAME, exact_search, Budget(EXACT_NODES, 300.0, exact_steps),
            "branch and bound (MiniMalloc's rules)", exact=True),
)
SEARCHES = tuple(s.name for s in SEARCH_STRATEGIES)
SEARCH_LIMITS = {s.name: s.max_records for s in SEARCH_STRATEGIES}


def offset_strategy(name: str) -> Strategy:
    for s in OFFSET_STRATEGIES + SEARCH_STRATEGIES + DELEGATE_OFFSETS:
        if s.name == name:
            return s
    raise KeyError(name)


def strategy_names(kind: str) -> list[str]:
    table = OFFSET_STRATEGIES if kind == "offsets" else OBJECT_STRATEGIES
    names = [s.name for s in table]
    delegate = [s.name for s in (DELEGATE_OFFSETS if kind == "offsets" else DELEGATE_OBJECTS)]
    return (names + list(SEARCHES) if kind == "offsets" else names) + delegate
