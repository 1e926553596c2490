"""Run strategies, validate every plan, keep the smallest (ties: the earlier strategy in the
registry), then let the registry's searches try to improve on it, each from the best so far."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Callable, Sequence, Union

from packager.errors import InternalError, PlanError, SolverLimitError
from packager.plan.offsets._stop import Paused, StopRule
from packager.plan.problem import Problem
from packager.plan.records import ObjectPlan, OffsetPlan
from packager.plan.registry import (BASELINES, DELEGATE_OBJECTS, DELEGATE_OFFSETS, OBJECT_STRATEGIES, OFFSET_STRATEGIES,
                                    SEARCH_STRATEGIES, SEARCHES, Strategy, offset_strategy)
from packager.plan.offsets.exact_search import NAME as EXACT_SEARCH
from packager.plan.stoppable import STOPPABLE
from packager.plan.validate import Proven, check_object_plan, check_offset_plan

Plan = Union[OffsetPlan, ObjectPlan]

@dataclass(frozen=True)
class Outcome:
    strategy: str
    kind: str  # offsets | objects | baseline
    plan: Plan
    seconds: float
    # The checker's proof of the plan; None for a baseline, which is shown, never shipped.
    proven: Proven | None = field(default=None, compare=False, repr=False)

    @property
    def total(self) -> int:
        return self.plan.arena if isinstance(self.plan, OffsetPlan) else self.plan.total


@dataclass(frozen=True)
class StoppedAbove:
    """An offset strategy stopped above the lower bound: `placed` of its `steps` placement
    steps done when its plan could no longer meet the bound (see `offsets/_stop.py`)."""
    strategy: str
    placed: int
    steps: int
    seconds: float
    position: int = 0  # where among `offsets` its outcome would be (the registry's order)


@dataclass(frozen=True)
class PortfolioResult:
    problem: Problem
    offsets: tuple[Outcome, ...]
    objects: tuple[Outcome, ...]
    baselines: tuple[Outcome, ...]
    skipped: tuple[str, ...] = ()  # strategies `best` left out for the input's size
    # Strategies not run because a plan already met the lower bound (optimal: none could beat
    # it, and ties go to the earlier strategy); only when the caller asked to stop there.
    not_needed: tuple[tuple[str, str], ...] = ()  # (kind, name): offsets or objects
    # Offset strategies stopped once their arena could no longer meet the lower bound, not
    # finished because a later one met it: no arena of theirs.
    stopped_above: tuple[StoppedAbove, ...] = ()

    @property
    def best_offsets(self) -> Outcome | None:
        return min(self.offsets, key=lambda o: o.total, default=None)

    @property
    def best_objects(self) -> Outcome | None:
        return min(self.objects, key=lambda o: o.total, default=None)

    @property
    def objects_optimal(self) -> bool:
        """No shared-object plan is smaller than the best."""
        best = self.best_objects
        return best is not None and self.object_plan_optimal(best)

    @property
    def offsets_optimal(self) -> bool:
        """No offset plan has a smaller arena than the best."""
        best = self.best_offsets
        return best is not None and self.offset_plan_optimal(best)

    def offset_plan_optimal(self, outcome: Outcome) -> bool:
        """It meets the lower bound, or the exact search proved no arena smaller than its own."""
        return outcome.total <= self.problem.offset_lower_bound or any(
            o.plan.proven_optimal and o.total == outcome.total for o in self.offsets)

    @property
    def offsets_time_limit_hit(self) -> tuple[str, ...]:
        """The searches a safety-net time limit stopped: their plans may depend on the machine."""
        return tuple(o.strategy for o in self.offsets if o.plan.time_limit_hit)

    @property
    def offsets_search_stopped(self) -> tuple[tuple[str, str], ...]:
        """(search, why) for the searches a rule counting their work stopped with a gap left."""
        return tuple((o.strategy, o.plan.search_stopped) for o in self.offsets if o.plan.search_stopped)

    @property
    def objects_search_stopped(self) -> tuple[tuple[str, str], ...]:
        """(strategy, why) for the exact shared-object strategies a rule counting their work
        stopped with a gap left (the integer program's node cap or window search)."""
        return tuple((o.strategy, o.plan.search_stopped) for o in self.objects if o.plan.search_stopped)

    def object_plan_optimal(self, outcome: Outcome) -> bool:
        """It meets the lower bound, or an exact strategy proved no plan smaller than its total."""
        return outcome.total <= self.problem.object_lower_bound or any(
            o.plan.proven_optimal and o.total == outcome.total for o in self.objects)


def validate(problem: Problem, plan: Plan) -> Proven:
    """The one gate every plan passes before anyone sees it."""
    if isinstance(plan, ObjectPlan):
        return check_object_plan(problem.records, plan)
    proven = check_offset_plan(problem.records, plan, problem.aliases, problem.alias_intervals)
    if plan.alignment != problem.alignment:
        raise PlanError(f"plan '{plan.strategy}' was made for alignment {plan.alignment}, "
                        f"not {problem.alignment}")
    return proven


def _proven(problem: Problem, plan: Plan) -> Proven:
    """validate() for a plan one of our strategies made: failing the check is a bug of ours, not
    something wrong with the input, and is raised as such (InternalError)."""
    try:
        return validate(problem, plan)
    except PlanError as e:
        raise InternalError(f"{e} (a plan tflpack made failed its own check: a bug, please report it "
                            f"with the model)") from None


def _run(strategy: Strategy, problem: Problem, so_far: Outcome | None = None) -> Outcome:
    """The strategy's plan; a shared-object strategy that improves a plan starts from `so_far`."""
    start = time.perf_counter()
    plan = (strategy.improve(problem, so_far.plan, strategy.budget)
            if so_far is not None and strategy.improve is not None else strategy.run(problem))
    seconds = time.perf_counter() - start
    proven = _proven(problem, plan) if strategy.kind != "baseline" else None
    return Outcome(strategy.name, strategy.kind, plan, seconds, proven)


def _as_is(problem: Problem, outcome: Outcome, name: str) -> Outcome:
    """A plan at the lower bound, reported under the name of a strategy that could not beat it."""
    plan = replace(outcome.plan, strategy=name)
    if isinstance(plan, OffsetPlan):  # at the bound: optimal, and no search ran out of time on it
        plan = replace(plan, proven_optimal=False, time_limit_hit=False, search_stopped="")
    return Outcome(name, outcome.kind, plan, 0.0, _proven(problem, plan))


def improve(problem: Problem, best: Outcome, time_cap: float | None = None,
            names: Sequence[str] = SEARCHES) -> list[Outcome]:
    """The registry's searches, in its order, each from the best plan so far (the local search
    over orders, the skyline tree search, then the exact search); each validated. `time_cap`
    lowers their safety-net time limits. A plan already at the lower bound cannot improve: each
    search then reports it as is."""
    out = []
    if best.total <= problem.offset_lower_bound:
        return [_as_is(problem, best, name) for name in SEARCHES if name in names]
    for search in SEARCH_STRATEGIES:
        if search.name not in names:
            continue
        start = time.perf_counter()
        plan = search.improve(problem, best.plan, search.budget.capped(time_cap))
        seconds = time.perf_counter() - start
        outcome = Outcome(search.name, "offsets", plan, seconds, _proven(problem, plan))
        out.append(outcome)
        if outcome.total < best.total:
            best = outcome
    return out


def _started(strategy: Strategy, problem: Problem, stop: StopRule | None) -> Outcome | tuple[Paused, float]:
    """`_run`, or for a strategy that can stop (`stoppable.STOPPABLE`), its plan under `stop`:
    (Paused, seconds) when a record it placed ended above the limit."""
    if stop is None or strategy.name not in STOPPABLE:
        return _run(strategy, problem)
    start = time.perf_counter()
    got = STOPPABLE[strategy.name](problem, stop)
    seconds = time.perf_counter() - start
    if isinstance(got, Paused):
        return got, seconds
    return Outcome(strategy.name, "offsets", got, seconds, _proven(problem, got))


def _finished(problem: Problem, paused: Paused, seconds: float) -> Outcome:
    """A stopped strategy resumed to the end: the plan an uninterrupted run gives, validated."""
    start = time.perf_counter()
    plan = paused.finish()
    seconds += time.perf_counter() - start
    return Outcome(paused.strategy, "offsets", plan, seconds, _proven(problem, plan))


def run_portfolio(problem: Problem, offset_names: Sequence[str] | None = None,
                  object_names: Sequence[str] | None = None, local: bool = True,
                  baselines: bool = True,
                  stop_at: Callable[[Outcome], bool] | None = None,
                  stop_above: StopRule | None = None) -> PortfolioResult:
    """Run the named strategies (all when None, leaving out those too slow for the input's size),
    validated, plus the searches from the best offset plan.

    `stop_at`: the caller needs only the best plan of each kind (a package writes that and no
    table of strategies): the offset strategies stop at the first plan for which `stop_at` holds,
    the shared-object strategies at the first plan that meets their lower bound. Such a plan is
    the one the whole portfolio would choose (nothing is below the bound, and ties go to the
    earlier strategy); the strategies not run are listed in `not_needed`, never as run. A strategy
    above its `ship_max_records` is left out (listed in `skipped`).

    `stop_above` (with `stop_at`, whose plans must meet its limit): the strategies that can stop
    (`stoppable.STOPPABLE`) stop once their arena can no longer meet its limit (a record placed
    ends above it), since stop_at can no longer hold for them. If a later plan meets stop_at, they are listed in
    `stopped_above`; if none does, they are resumed to their end, so the result is the same as
    without `stop_above`."""
    skipped: list[str] = []
    not_needed: list[tuple[str, str]] = []
    wanted = partial(_wanted, len(problem.records), skipped)
    # The shared-object strategies run first. The lists keep the offsets' entries first.
    objects, objects_skipped, objects_not_needed = _object_plans(problem, object_names, stop_at)
    offsets: list[Outcome] = []
    paused: list[tuple[int, Paused, float]] = []  # (its place among `offsets`, its loop, seconds)
    stopped = False
    for s in (*OFFSET_STRATEGIES, *DELEGATE_OFFSETS):
        if s.named_only and (offset_names is None or s.name not in offset_names):
            continue
        if not wanted(s.name, s.max_records, offset_names):
            continue
        if stopped:
            not_needed.append(("offsets", s.name))
            continue
        got = _started(s, problem, stop_above if stop_at is not None else None)
        if isinstance(got, tuple):
            paused.append((len(offsets), *got))
            continue
        offsets.append(got)
        stopped = stop_at is not None and stop_at(offsets[-1])
    stopped_above = tuple(StoppedAbove(p.strategy, p.placed, p.steps, seconds, at + k)
                          for k, (at, p, seconds) in enumerate(paused))
    if stopped:
        paused.clear()  # their loops' state is not needed: let it go before the next strategies
    else:  # no plan met the bound: every plan is needed, in the registry's order
        for at, p, seconds in reversed(paused):
            offsets.insert(at, _finished(problem, p, seconds))
        stopped_above = ()
    searches = [s.name for s in SEARCH_STRATEGIES if wanted(s.name, s.max_records, offset_names)]
    if stopped:
        not_needed += [("offsets", name) for name in searches]
        searches = []
    if local and searches:
        start = (min(offsets, key=lambda o: o.total) if offsets
                 else _run(offset_strategy("greedy_by_size"), problem))
        offsets += improve(problem, start, names=searches)
    base = [_run(s, problem) for s in BASELINES] if baselines else []
    return PortfolioResult(problem, tuple(offsets), tuple(objects), tuple(base),
                           tuple(skipped + objects_skipped), tuple(not_needed + objects_not_needed),
                           stopped_above)


def run_offsets_only(problem: Problem) -> PortfolioResult:
    """The best offset plan, soonest (`plan --records X.csv --offsets-only`): the planners in the
    registry's order, stopping at the first plan that meets the lower bound (none can beat it),
    then the exact search straight from the best of them (its first probe is at the bound).
    The two searches before it in `best` (local search, skyline tree search) are left out: on
    MiniMalloc's instances they cost seconds and the exact search, which proves, does not need
    their plan. No shared-object plan, no baseline."""
    n = len(problem.records)
    names = [s.name for s in OFFSET_STRATEGIES if s.max_records is None or n <= s.max_records]
    names.append(EXACT_SEARCH)
    bound = problem.offset_lower_bound
    return run_portfolio(problem, offset_names=names, object_names=(), baselines=False,
                         stop_at=lambda o: o.total <= bound, stop_above=StopRule(bound))


def _wanted(n: int, skipped: list[str], name: str, limit: int | None, names: Sequence[str] | None) -> bool:
    """Whether to run a strategy on n records: the one named, or every one up to its size limit
    (those above it join `skipped`)."""
    if names is not None:
        return name in names
    if limit is not None and n > limit:
        skipped.append(name)
        return False
    return True


def _object_plans(problem: Problem, names: Sequence[str] | None, stop_at: Callable[[Outcome], bool] | None
                  ) -> tuple[list[Outcome], list[str], list[tuple[str, str]]]:
    """run_portfolio's shared-object strategies: (outcomes, skipped, not needed)."""
    objects: list[Outcome] = []
    skipped: list[str] = []
    not_needed: list[tuple[str, str]] = []
    for s in (*OBJECT_STRATEGIES, *DELEGATE_OBJECTS):
        if s.named_only and (names is None or s.name not in names):
            continue
        if not _wanted(len(problem.records), skipped, s.name, s.max_records, names):
            continue
        so_far = min(objects, key=lambda o: o.total, default=None)
        if stop_at is not None and so_far and so_far.total <= problem.object_lower_bound:
            not_needed.append(("objects", s.name))
            continue
        if (stop_at is not None and names is None and s.ship_max_records is not None
                and len(problem.records) > s.ship_max_records):
            skipped.append(s.name)  # too large for it in a package (Strategy.ship_max_records)
            continue
        if s.exact and so_far and so_far.total <= problem.object_lower_bound:
            objects.append(_as_is(problem, so_far, s.name))
            continue
        try:
            objects.append(_run(s, problem, so_far))
        except SolverLimitError:
            if names is not None:
                raise  # asked for by name: say why there is no plan
            skipped.append(s.name)
    return objects, skipped, not_needed
