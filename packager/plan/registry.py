"""One table that names every strategy: adding one touches a new module and one line here.

Each entry adapts a strategy module's pure `plan` function to a Problem. Offset strategies return
OffsetPlans, object strategies ObjectPlans. The searches (`local_search`, `best_fit_search`) are not
listed with the others: they improve the portfolio's best (see portfolio.improve).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

from packager.plan.objects import (equality, greedy_by_breadth as obj_greedy_by_breadth,
                                   greedy_by_size as obj_greedy_by_size, greedy_by_size_improved,
                                   greedy_in_order as obj_greedy_in_order, integer_program,
                                   min_cost_flow, naive as obj_naive)
from packager.plan.offsets import (bfc, greedy_by_breadth, greedy_by_size_tflite,
                                   greedy_by_size_tflm, greedy_in_order, naive, nnc,
                                   objects_end_to_end, path_cover, simulated_allocator,
                                   strip_packing)
from packager.plan.problem import Problem
from packager.plan.records import ObjectPlan, OffsetPlan

Plan = Union[OffsetPlan, ObjectPlan]


@dataclass(frozen=True)
class Strategy:
    name: str
    kind: str  # "offsets", "objects" or "baseline" (a dynamic allocator's figure, not a plan to ship)
    run: Callable[[Problem], Plan]
    summary: str
    # `best` leaves a superlinear strategy out above this many records (measured by
    # benchmarks/bench_scale.py: each takes seconds at 10,000 and minutes at 100,000).
    max_records: int | None = None
    # An exact strategy cannot beat a plan already at the lower bound: `best` then reports that
    # plan under its name instead of running it (as it does for the searches).
    exact: bool = False


def _offsets(name: str, fn: Callable, summary: str, max_records: int | None = None) -> Strategy:
    return Strategy(name, "offsets", lambda p: fn(p.records, p.alignment), summary, max_records)


def _objects(name: str, fn: Callable, summary: str, max_records: int | None = None) -> Strategy:
    return Strategy(name, "objects", lambda p: fn(p.records), summary, max_records)


SUPERLINEAR_LIMIT = 20_000
# The integer program's LP grows with the square of the records: about 8 s at 250 on the hardest
# shape (a chain) in benchmarks/bench_scale.py, against under a second on the paper's networks.
INTEGER_PROGRAM_LIMIT = 250


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
    _offsets("nnc", nnc.plan, "allocation graph (libccv NNC)", SUPERLINEAR_LIMIT),
    _offsets("simulated_allocator", simulated_allocator.plan, "replayed best-fit allocator (MegEngine)"),
    _offsets("objects_end_to_end", objects_end_to_end.plan, "shared objects laid end to end"),
)

OBJECT_STRATEGIES: tuple[Strategy, ...] = (
    _objects("naive", obj_naive.plan, "one object per tensor"),
    _objects("equality", equality.plan, "reuse objects of equal size"),
    _objects("greedy_in_order", obj_greedy_in_order.plan, "by first use, closest size"),
    _objects("min_cost_flow", min_cost_flow.plan, "min-cost flow (Lee et al.)"),
    _objects("greedy_by_breadth", obj_greedy_by_breadth.plan, "widest operator first"),
    _objects("greedy_by_size", obj_greedy_by_size.plan, "largest first, best object"),
    _objects("greedy_by_size_improved", greedy_by_size_improved.plan,
             "positional-maximum stages, nearest use", SUPERLINEAR_LIMIT),
    Strategy("integer_program", "objects", lambda p: integer_program.plan(p.records),
             "exact integer program (HiGHS)", INTEGER_PROGRAM_LIMIT, exact=True),
)

BASELINES: tuple[Strategy, ...] = (
    Strategy("bfc", "baseline", lambda p: bfc.replay(p.records), "TensorFlow's BFC allocator replayed"),
)

LOCAL_SEARCH = "local_search"
# Searches that start from the portfolio's best plan (portfolio.improve), in the order they run,
# with the record count above which `best` leaves them out (the tree search's first descent
# always completes, whatever its time cap: minutes at 100,000 records).
SEARCHES = (LOCAL_SEARCH, "best_fit_search")
SEARCH_LIMITS = {LOCAL_SEARCH: None, "best_fit_search": SUPERLINEAR_LIMIT}


def offset_strategy(name: str) -> Strategy:
    for s in OFFSET_STRATEGIES:
        if s.name == name:
            return s
    raise KeyError(name)


def strategy_names(kind: str) -> list[str]:
    table = OFFSET_STRATEGIES if kind == "offsets" else OBJECT_STRATEGIES
    names = [s.name for s in table]
    return names + list(SEARCHES) if kind == "offsets" else names
