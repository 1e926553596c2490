"""Plain-data views of planning results, shared by `plan --json`, the table and the emitters."""

from __future__ import annotations

from packager.plan.portfolio import Outcome, PortfolioResult
from packager.plan.records import OffsetPlan, overhead_pct


def outcome_view(outcome: Outcome, result: PortfolioResult, tensor_ids: list[int] | None = None) -> dict:
    problem = result.problem
    bound = problem.object_lower_bound if outcome.kind == "objects" else problem.offset_lower_bound
    tensors = []
    for i, r in enumerate(problem.records):
        place = ({"offset": outcome.plan.offsets[i]} if isinstance(outcome.plan, OffsetPlan)
                 else {"object": outcome.plan.assignment[i]})
        tensors.append({"index": r.tensor if tensor_ids is None else tensor_ids[i], **place,
                        "size": r.size, "first_op": r.first_op, "last_op": r.last_op})
    view = {"name": outcome.strategy, "kind": outcome.kind, "total": outcome.total,
            "lower_bound": bound, "overhead_pct": overhead_pct(outcome.total, bound),
            "tensors": tensors}
    if outcome.kind == "objects":
        view["object_sizes"] = list(outcome.plan.object_sizes)
    if isinstance(outcome.plan, OffsetPlan) and outcome.plan.time_limit_hit:
        view["time_limit_hit"] = True  # a search's safety net stopped it: may depend on the machine
    if outcome.plan.search_stopped:
        view["search_stopped"] = outcome.plan.search_stopped  # gap left open, by a rule counting work
    return view


def result_view(result: PortfolioResult, with_tensors: bool = True) -> dict:
    best_off, best_obj = result.best_offsets, result.best_objects
    strategies = []
    for o in (*result.offsets, *result.objects, *result.baselines):
        v = outcome_view(o, result)
        if not with_tensors:
            v.pop("tensors")
        strategies.append(v)
    return {
        "offset_lower_bound": result.problem.offset_lower_bound,
        "object_lower_bound": result.problem.object_lower_bound,
        "alignment": result.problem.alignment,
        "records": len(result.problem.records),
        "best_offsets": best_off.strategy if best_off else None,
        "best_objects": best_obj.strategy if best_obj else None,
        "best_objects_optimal": result.objects_optimal,
        "best_offsets_optimal": result.offsets_optimal,
        "strategies": strategies,
        "skipped": list(result.skipped),
    }


def passes_view(passes) -> dict:
    """The multi-pass plan of a dynamic-shape arena (nothing for static models)."""
    if passes is None:
        return {}
    return {"dynamic": {
        "bounds": {k: list(v) for k, v in sorted(passes.bounds.items())},
        "passes": len(set(passes.passes)),
        "arena": passes.plan.arena,
        "lower_bound": passes.lower_bound,
        "tensors": [{"index": r.tensor, "pass": p, "size_expr": str(e), "max_size": r.size,
                     "offset": o} for r, p, e, o in zip(passes.lifetimes.records, passes.passes,
                                                       passes.size_expressions, passes.plan.offsets)],
    }}
