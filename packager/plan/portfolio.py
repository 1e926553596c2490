"""Run strategies, validate every plan, keep the smallest (ties: the earlier strategy in the
registry), then let the local search try to improve on it."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence, Union

from packager.errors import PlanError
from packager.plan.offsets import best_fit_search, local_search
from packager.plan.problem import Problem
from packager.plan.records import ObjectPlan, OffsetPlan
from packager.plan.registry import (BASELINES, LOCAL_SEARCH, OBJECT_STRATEGIES, OFFSET_STRATEGIES,
                                    SEARCHES, Strategy)
from packager.validate import check_object_plan, check_offset_plan

Plan = Union[OffsetPlan, ObjectPlan]

# The searches' effort is counted in iterations so that their result depends only on the input;
# the time caps are a safety net for large inputs (and then the result may depend on the machine).
LOCAL_SEARCH_ITERATIONS = 300
LOCAL_SEARCH_TIME_CAP = 5.0
TREE_SEARCH_ITERATIONS = 20_000
TREE_SEARCH_TIME_CAP = 10.0


@dataclass(frozen=True)
class Outcome:
    strategy: str
    kind: str  # offsets | objects | baseline
    plan: Plan
    seconds: float

    @property
    def total(self) -> int:
        return self.plan.arena if isinstance(self.plan, OffsetPlan) else self.plan.total


@dataclass(frozen=True)
class PortfolioResult:
    problem: Problem
    offsets: tuple[Outcome, ...]
    objects: tuple[Outcome, ...]
    baselines: tuple[Outcome, ...]

    @property
    def best_offsets(self) -> Outcome | None:
        return min(self.offsets, key=lambda o: o.total, default=None)

    @property
    def best_objects(self) -> Outcome | None:
        return min(self.objects, key=lambda o: o.total, default=None)


def validate(problem: Problem, plan: Plan) -> None:
    """The one gate every plan passes before anyone sees it."""
    if isinstance(plan, OffsetPlan):
        check_offset_plan(problem.records, plan, problem.aliases, problem.alias_intervals)
        if plan.alignment != problem.alignment:
            raise PlanError(f"plan '{plan.strategy}' was made for alignment {plan.alignment}, "
                            f"not {problem.alignment}")
    else:
        check_object_plan(problem.records, plan)


def _run(strategy: Strategy, problem: Problem) -> Outcome:
    start = time.perf_counter()
    plan = strategy.run(problem)
    seconds = time.perf_counter() - start
    if strategy.kind != "baseline":
        validate(problem, plan)
    return Outcome(strategy.name, strategy.kind, plan, seconds)


def improve(problem: Problem, best: Outcome, time_cap: float | None = None) -> list[Outcome]:
    """The local search (Vela-style hill climbing over orders) from the best plan, then the
    skyline tree search from whichever is better; each validated. `time_cap` lowers both caps."""
    out = []
    local_cap = LOCAL_SEARCH_TIME_CAP if time_cap is None else min(time_cap, LOCAL_SEARCH_TIME_CAP)
    tree_cap = TREE_SEARCH_TIME_CAP if time_cap is None else min(time_cap, TREE_SEARCH_TIME_CAP)
    searches = (
        (LOCAL_SEARCH, lambda initial: local_search.plan(
            problem.records, problem.alignment, initial=initial, time_budget=local_cap,
            seed=0, max_iterations=LOCAL_SEARCH_ITERATIONS, lower_bound=problem.offset_lower_bound)),
        (best_fit_search.NAME, lambda initial: best_fit_search.plan(
            problem.records, problem.alignment, initial=initial, time_budget=tree_cap,
            seed=0, max_iterations=TREE_SEARCH_ITERATIONS, lower_bound=problem.offset_lower_bound)),
    )
    for name, search in searches:
        start = time.perf_counter()
        plan = search(best.plan)
        outcome = Outcome(name, "offsets", plan, time.perf_counter() - start)
        validate(problem, plan)
        out.append(outcome)
        if outcome.total < best.total:
            best = outcome
    return out


def run_portfolio(problem: Problem, offset_names: Sequence[str] | None = None,
                  object_names: Sequence[str] | None = None, local: bool = True,
                  baselines: bool = True) -> PortfolioResult:
    """Run the named strategies (all when None), validated, plus the local search from the best."""
    offsets = [_run(s, problem) for s in OFFSET_STRATEGIES
               if offset_names is None or s.name in offset_names]
    if local and offsets and (offset_names is None or set(offset_names) & set(SEARCHES)):
        best = min(offsets, key=lambda o: o.total)
        offsets += [o for o in improve(problem, best)
                    if offset_names is None or o.strategy in offset_names]
    objects = [_run(s, problem) for s in OBJECT_STRATEGIES
               if object_names is None or s.name in object_names]
    base = [_run(s, problem) for s in BASELINES] if baselines else []
    return PortfolioResult(problem, tuple(offsets), tuple(objects), tuple(base))
