"""The one path from a model to its validated plans. `plan`, `package`, `compare`, `report` and the
plan-file checker all come through here:

    model + semantics + bindings (dynamic shapes)
        -> arenas_to_plan: each arena's usage records (the runtime's kernel scratch buffers added
           where the semantics says the runtime plans them; every record at its largest size when
           the model has dynamic shapes)
        -> plan_arenas: the strategy portfolio on each arena (every plan validated there), the
           offset plan to ship (scratch buffers where the runtime will put them, validated again)
           and, with dynamic shapes, the multi-pass plan

The plan-file checker takes the first half only: it compares a plan's records with the model's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from packager.dynamic.shapes import (DynamicShapes, PassPlan, analyse, bounds_of, is_static, parse_dim,
                                     plan_passes_at_largest, renames_of, require_bounds,
                                     worst_case_lifetimes)
from packager.dynamic.stored_batch import stored_batch
from packager.dynamic.symbolic import Value
from packager.errors import PackagerError, PlanError
from packager.kernels.tflm_scratch import scratch_records
from packager.lifetimes import ArenaLifetimes, model_lifetimes
from packager.model import Model, derived
from packager.plan.offsets import greedy_by_size_tflm
from packager.plan.offsets._stop import StopRule
from packager.plan.portfolio import Outcome, PortfolioResult, run_offsets_only, run_portfolio, validate
from packager.plan.problem import Problem
from packager.plan.records import UsageRecord
from packager.plan.registry import strategy_names
from packager.semantics import SEMANTICS


# -- what is asked for -------------------------------------------------------------------------

@dataclass(frozen=True)
class Bindings:
    """The symbols of a model with dynamic shapes and the bounds the plans are made for."""
    shapes: DynamicShapes
    bounds: Mapping[str, tuple[int, int]]


@dataclass(frozen=True)
class StrategyChoice:
    offsets: tuple[str, ...] | None  # None: every offset strategy (and the searches)
    objects: tuple[str, ...] | None  # None: every shared-object strategy
    baselines: bool  # also replay the dynamic allocators (figures, not plans to ship)


def choose(strategy: str, *, to_ship: bool = False) -> StrategyChoice:
    """`best`/`all`: every strategy; otherwise the one named (offsets or objects, or both).
    A plan `to_ship` needs an offset plan and a shared-object plan: a named offset strategy then
    comes with every shared-object strategy, and no baselines are replayed."""
    offsets: tuple[str, ...] | None = None
    objects: tuple[str, ...] | None = None
    if strategy not in ("best", "all"):
        offsets = tuple(n for n in strategy_names("offsets") if n == strategy)
        objects = tuple(n for n in strategy_names("objects") if n == strategy)
        if not offsets and not objects:
            known = sorted(set(strategy_names("offsets")) | set(strategy_names("objects")))
            raise PackagerError(f"unknown strategy '{strategy}' (choose best, all, or one of: {', '.join(known)})")
    if not to_ship:
        return StrategyChoice(offsets, objects, baselines=strategy in ("best", "all"))
    if offsets == ():
        raise PackagerError(f"'{strategy}' is a shared-object strategy only; package needs an offset "
                            "plan: use best or an offset strategy")
    return StrategyChoice(offsets, objects or None, baselines=False)


def dynamic_shapes(model: Model, dims: Sequence[str] = ()) -> tuple[DynamicShapes, dict[str, tuple[int, int]]]:
    """The main subgraph's symbolic shapes and each symbol's bounds from --dim (or derived)."""
    specs = [parse_dim(d) for d in dims]
    shapes = analyse(model, 0, renames_of(specs))
    return shapes, bounds_of(shapes, specs)


def bindings_for(model: Model, dims: Sequence[str] = ()) -> Bindings | None:
    """The model's symbols and their bounds from --dim (or derived); None for a static model.
    A plan must hold for every binding, so every symbol needs a bound: DimError names the first
    that has none. Without --dim, a batch that is -1 only in shape_signature is planned at the
    stored shape (dynamic/stored_batch.py): None, the file's sizes, where they are the stored
    batch's; else that batch as the one binding."""
    if not dims and is_static(model):  # no symbol to bound: skip the analysis
        return None
    batch = stored_batch(model, dims)
    if batch is not None:
        return Bindings(batch.shapes, batch.bounds) if batch.placeholders else None
    shapes, bounds = dynamic_shapes(model, dims)
    if not shapes.is_dynamic:
        return None
    require_bounds(shapes, bounds)
    return Bindings(shapes, bounds)


# -- the records of each arena -----------------------------------------------------------------

@dataclass(frozen=True)
class DynamicSizes:
    """A dynamic-shape model's sizes in one arena, per tensor id (records and aliases): the pass
    that knows the size, the size as an expression over the symbols, and its largest value inside
    the bounds (what the plan reserves, rounded as the runtime rounds)."""
    passes: Mapping[int, int]
    expressions: Mapping[int, Value]
    largest: Mapping[int, int]


@dataclass(frozen=True)
class ArenaToPlan:
    lifetimes: ArenaLifetimes  # with the scratch buffers' records appended; largest sizes if dynamic
    scratch: Mapping[int, str]  # record id -> label, for the runtime's scratch buffers
    unmodelled_ops: tuple[str, ...]  # ops whose scratch requests are not known
    sizes: DynamicSizes | None = None  # models with dynamic shapes only


def problem_of(arena: ArenaLifetimes) -> Problem:
    """One Problem per arena: planning, the sidecar plan and its check ask for the same arena's
    lower bounds, which cost seconds at 100,000 records (kept beside the immutable arena; callers
    must not modify it)."""
    memo = arena.__dict__
    if "_problem" not in memo:
        memo["_problem"] = _new_problem(arena)
    return memo["_problem"]


def _new_problem(arena: ArenaLifetimes) -> Problem:
    sem = SEMANTICS[arena.semantics]
    return Problem(records=arena.records, alignment=sem.alignment, whole_run=arena.whole_run,
                   aliases=dict(arena.aliases), alias_intervals=dict(arena.alias_intervals))


def arenas_to_plan(model: Model, semantics: str, bindings: Bindings | None = None,
                   kernel_scratch: bool = True) -> list[ArenaToPlan]:
    """The model's arenas under the semantics. Where the semantics says the runtime plans its
    kernels' scratch buffers in the arena (TFLite Micro), they are records too (unless
    `kernel_scratch` is off: the model's tensors alone), so the plan leaves room for them. With
    dynamic shapes, every record (data-dependent outputs too) is at its largest size."""
    if bindings is None and SEMANTICS.get(semantics) is not None:
        # Once per model (planning, the check of the plan and of the offline model ask again);
        # a new list each time.
        return list(derived(model, ("arenas_to_plan", semantics, kernel_scratch),
                            lambda: tuple(_arenas_to_plan(model, semantics, None, kernel_scratch))))
    return _arenas_to_plan(model, semantics, bindings, kernel_scratch)


def _arenas_to_plan(model: Model, semantics: str, bindings: Bindings | None,
                    kernel_scratch: bool) -> list[ArenaToPlan]:
    sem = SEMANTICS[semantics]
    out = []
    for arena in model_lifetimes(model, semantics, plan_dynamic=bindings is not None):
        labels: dict[int, str] = {}
        unmodelled: tuple[str, ...] = ()
        if kernel_scratch and sem.kernel_scratch_in_arena and arena.inline:
            records, names, missing = scratch_records(model, arena.op_scopes, sem.size_rounding)
            labels = {r.tensor: f"scratch buffer of {name} (steps {r.first_op}..{r.last_op})"
                      for r, name in zip(records, names)}
            arena, unmodelled = replace(arena, records=arena.records + tuple(records)), tuple(missing)
        if bindings is None:
            out.append(ArenaToPlan(arena, labels, unmodelled))
        else:
            worst, sizes = _at_largest_sizes(model, arena, bindings)
            out.append(ArenaToPlan(worst, labels, unmodelled, sizes))
    return out


def alias_bytes(model: Model, lifetimes: ArenaLifetimes, tensor_id: int) -> int:
    """An alias's bytes as the file states them."""
    s, t = lifetimes.tensor_subgraph.get(tensor_id, (lifetimes.subgraph, tensor_id))
    return model.subgraphs[s].tensors[t].nbytes or 0


def _at_largest_sizes(model: Model, arena: ArenaLifetimes,
                      bindings: Bindings) -> tuple[ArenaLifetimes, DynamicSizes]:
    # The aliases ride along as records so that they are sized by the same rules as the tensors
    # (scratch buffers and other subgraphs' tensors keep the size they come with).
    aliases = tuple(UsageRecord(a, *arena.alias_intervals.get(a, (0, 0)), alias_bytes(model, arena, a))
                    for a in sorted(arena.aliases))
    n = len(arena.records)
    worst, passes, exprs = worst_case_lifetimes(replace(arena, records=arena.records + aliases),
                                                bindings.shapes, bindings.bounds)
    ids = [r.tensor for r in worst.records]
    sizes = DynamicSizes(dict(zip(ids, passes)), dict(zip(ids, exprs)),
                         {r.tensor: r.size for r in worst.records})
    return replace(arena, records=worst.records[:n]), sizes


# -- the plans of each arena -------------------------------------------------------------------

@dataclass(frozen=True)
class PlannedArena:
    arena: ArenaToPlan
    result: PortfolioResult  # every strategy tried, each plan validated
    offsets: Outcome | None  # the offset plan to ship: the best, with the runtime's scratch
    #                          buffers where the runtime will put them (validated); None without one
    passes: PassPlan | None = None  # the multi-pass plan (dynamic shapes)

    @property
    def lifetimes(self) -> ArenaLifetimes:
        return self.arena.lifetimes


def plan_arenas(model: Model, semantics: str, bindings: Bindings | None = None, strategy: str = "best", *,
                to_ship: bool = False, kernel_scratch: bool = True,
                extra_records: Sequence[Sequence[UsageRecord]] | None = None,
                only_tensors: Sequence[set[int]] | None = None) -> list[PlannedArena]:
    """Plan every arena of the model. `to_ship`: the plans a package writes (an offset and a
    shared-object plan, no baselines); `extra_records[i]`: buffers a runtime places in arena i
    beside the model's tensors (TFLite's predicted kernel temporaries, for comparing with it);
    `only_tensors[i]`: the model tensors of arena i to plan (those a runtime's arena holds)."""
    choice = choose(strategy, to_ship=to_ship)
    planned = []
    for i, arena in enumerate(arenas_to_plan(model, semantics, bindings, kernel_scratch)):
        problem = problem_of(arena.lifetimes)
        if only_tensors is not None:
            problem = _restricted(problem, only_tensors[i])
        if extra_records is not None:
            problem = replace(problem, records=problem.records + tuple(extra_records[i]))
        memo: dict[int, Outcome] = {}  # id(outcome) -> its plan with the scratch placed, once
        result = run_portfolio(problem, offset_names=choice.offsets, object_names=choice.objects,
                               baselines=choice.baselines,
                               stop_at=_optimal_to_ship(problem, arena.scratch, memo) if to_ship else None,
                               stop_above=(_above_the_bound(problem, arena.scratch)
                                           if to_ship and len(problem.records) >= STOP_ABOVE_FROM else None))
        if to_ship and (result.best_offsets is None or result.best_objects is None):
            raise PlanError(f"strategy '{strategy}' gave no plan")
        offsets = (_with_runtime_scratch_placement(result, arena.scratch, memo) if arena.scratch
                   else result.best_offsets)
        passes = None if arena.sizes is None else _multi_pass_plan(arena, bindings)
        planned.append(PlannedArena(arena, result, offsets, passes))
    return planned


def _restricted(problem: Problem, keep: set[int]) -> Problem:
    """The problem over the kept tensors' records only, still one whole: the positions TFLite
    places first and the fixed offsets renumbered to the records that remain, and an alias whose
    buffer's owner is left out dropped with it (a view of a tensor TFLite allocates only while
    running, after a dynamic op, is not in the arena it measures either)."""
    kept = [k for k, r in enumerate(problem.records) if r.tensor in keep]
    position = {old: new for new, old in enumerate(kept)}
    owners = {problem.records[k].tensor for k in kept}
    aliases = {a: t for a, t in problem.aliases.items() if t in owners}
    return replace(problem, records=tuple(problem.records[k] for k in kept),
                   whole_run=frozenset(position[k] for k in problem.whole_run if k in position),
                   fixed={position[k]: o for k, o in problem.fixed.items() if k in position},
                   aliases=aliases,
                   alias_intervals={a: i for a, i in problem.alias_intervals.items() if a in aliases})


def _optimal_to_ship(problem: Problem, scratch: Mapping[int, str], memo: dict[int, Outcome]):
    """When a package may stop trying strategies: once the plan it would ship (with TFLite
    Micro's scratch buffers moved where the runtime puts them) meets the lower bound, no later
    strategy can be chosen over it, so the package is the same without running them."""
    bound = problem.offset_lower_bound

    def optimal(outcome: Outcome) -> bool:
        if outcome.total > bound or not scratch:
            return outcome.total <= bound
        return _runtime_scratch_placed(problem, outcome, scratch, memo).plan.arena <= bound
    return optimal


# From this many records a package stops the strategies that can no longer meet the bound; below
# it, finishing them costs a few milliseconds and the report shows every strategy's arena.
STOP_ABOVE_FROM = 2_000


def _above_the_bound(problem: Problem, scratch: Mapping[int, str]) -> StopRule:
    """When a strategy can stop: once a record it placed ends above the lower bound, its plan can
    no longer be the one to ship. TFLite Micro's scratch buffers never decide that: they are moved
    where the runtime puts them afterwards, and only the tensors keep the strategy's offsets."""
    ignored = frozenset(i for i, r in enumerate(problem.records) if r.tensor in scratch) if scratch else frozenset()
    return StopRule(problem.offset_lower_bound, ignored)


def _multi_pass_plan(arena: ArenaToPlan, bindings: Bindings) -> PassPlan:
    """Pass by pass, each placed with the earlier passes fixed, from the sizes already computed."""
    records, sizes = arena.lifetimes.records, arena.sizes
    return plan_passes_at_largest(arena.lifetimes, [sizes.passes[r.tensor] for r in records],
                                  [sizes.expressions[r.tensor] for r in records], bindings.bounds)


def _with_runtime_scratch_placement(result: PortfolioResult, scratch: Mapping[int, str],
                                    memo: dict[int, Outcome]) -> Outcome:
    """The best offset plan once the runtime (TFLite Micro) has placed the scratch buffers its way:
    tensors keep their offsets (they go into the offline plan), scratch buffers go where TFLite
    Micro's own planner will put them (given offsets first, then largest first into the first
    gap), so the plan's arena is the head TFLite Micro will report. Tried on every strategy's plan."""
    best: Outcome | None = None
    for outcome in result.offsets:
        candidate = _runtime_scratch_placed(result.problem, outcome, scratch, memo)
        if best is None or candidate.plan.arena < best.plan.arena:
            best = candidate
    assert best is not None
    return best


def _runtime_scratch_placed(problem: Problem, outcome: Outcome, scratch: Mapping[int, str],
                            memo: dict[int, Outcome]) -> Outcome:
    """One strategy's plan with the scratch buffers placed TFLite Micro's way (validated).
    `memo` keeps each outcome's result (by identity: the portfolio's outcomes stay alive), so
    the stop test during planning and the choice after it place and validate each plan once."""
    if id(outcome) in memo:
        return memo[id(outcome)]
    fixed = {i: o for i, (r, o) in enumerate(zip(problem.records, outcome.plan.offsets))
             if r.tensor not in scratch}
    placed = greedy_by_size_tflm.plan(problem.records, problem.alignment, fixed=fixed)
    placed = replace(placed, strategy=outcome.strategy)
    memo[id(outcome)] = Outcome(outcome.strategy, "offsets", placed, outcome.seconds, validate(problem, placed))
    return memo[id(outcome)]


# -- the commands' entry points ----------------------------------------------------------------

def plan_model(model: Model, semantics: str, strategy: str = "best",
               dims: Sequence[str] = ()) -> list[PlannedArena]:
    """`plan` and `report`: the model's own tensors under the semantics. With dynamic shapes,
    every symbol needs a bound: the plans are made at the largest sizes (valid for every binding),
    and the multi-pass plan is kept beside them."""
    return plan_arenas(model, semantics, bindings_for(model, dims), strategy, kernel_scratch=False)


def plan_records(records: Sequence[UsageRecord], strategy: str = "best", alignment: int = 1,
                 offsets_only: bool = False) -> PortfolioResult:
    """`plan --records`: the same portfolio on usage records from a file (`offsets_only`: the best
    offset plan, soonest: portfolio.run_offsets_only)."""
    if offsets_only:
        return run_offsets_only(Problem(records=tuple(records), alignment=alignment))
    choice = choose(strategy)
    return run_portfolio(Problem(records=tuple(records), alignment=alignment), offset_names=choice.offsets,
                         object_names=choice.objects, baselines=choice.baselines)
