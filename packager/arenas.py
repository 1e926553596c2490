"""Model -> plans: turns each arena's lifetimes into a Problem and runs the portfolio on it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from packager.dynamic.shapes import (DynamicShapes, PassPlan, analyse, bounds_of, parse_dim, plan_passes,
                              renames_of, require_bounds, worst_case_lifetimes)
from packager.errors import PackagerError
from packager.lifetimes import ArenaLifetimes, model_lifetimes
from packager.model import Model
from packager.plan.portfolio import PortfolioResult, run_portfolio
from packager.plan.problem import Problem
from packager.plan.registry import strategy_names
from packager.semantics import SEMANTICS


@dataclass(frozen=True)
class ArenaPlan:
    lifetimes: ArenaLifetimes  # at the worst-case sizes when the model has dynamic shapes
    result: PortfolioResult
    passes: PassPlan | None = None  # the multi-pass plan, for models with dynamic shapes


def problem_of(arena: ArenaLifetimes) -> Problem:
    sem = SEMANTICS[arena.semantics]
    return Problem(records=arena.records, alignment=sem.alignment, whole_run=arena.whole_run,
                   aliases=dict(arena.aliases), alias_intervals=dict(arena.alias_intervals))


def select(strategy: str) -> tuple[list[str] | None, list[str] | None]:
    """`best`/`all`: every strategy; otherwise the one named (offsets or objects, or both)."""
    if strategy in ("best", "all"):
        return None, None
    offsets = [n for n in strategy_names("offsets") if n == strategy]
    objects = [n for n in strategy_names("objects") if n == strategy]
    if not offsets and not objects:
        known = sorted(set(strategy_names("offsets")) | set(strategy_names("objects")))
        raise PackagerError(f"unknown strategy '{strategy}' (choose best, all, or one of: {', '.join(known)})")
    return offsets, objects


def dynamic_shapes(model: Model, dims: Sequence[str] = ()) -> tuple[DynamicShapes, dict[str, tuple[int, int]]]:
    """The main subgraph's symbolic shapes and each symbol's bounds from --dim (or derived)."""
    specs = [parse_dim(d) for d in dims]
    shapes = analyse(model, 0, renames_of(specs))
    return shapes, bounds_of(shapes, specs)


def plan_model(model: Model, semantics: str, strategy: str = "best",
               dims: Sequence[str] = ()) -> list[ArenaPlan]:
    """Plan every arena. With dynamic shapes, every symbol needs a bound: the plans are made at
    the largest sizes (valid for every binding), and the multi-pass plan is kept beside them."""
    offsets, objects = select(strategy)
    shapes, bounds = dynamic_shapes(model, dims)
    if shapes.is_dynamic:
        require_bounds(shapes, bounds)
    plans = []
    for arena in model_lifetimes(model, semantics, plan_dynamic=shapes.is_dynamic):
        passes = None
        if shapes.is_dynamic:
            passes = plan_passes(arena, shapes, bounds)
            arena = worst_case_lifetimes(arena, shapes, bounds)[0]
        result = run_portfolio(problem_of(arena), offset_names=offsets, object_names=objects,
                               baselines=strategy in ("best", "all"))
        plans.append(ArenaPlan(arena, result, passes))
    return plans


def plan_records(records: Sequence, strategy: str = "best", alignment: int = 1) -> PortfolioResult:
    offsets, objects = select(strategy)
    return run_portfolio(Problem(records=tuple(records), alignment=alignment),
                         offset_names=offsets, object_names=objects,
                         baselines=strategy in ("best", "all"))
