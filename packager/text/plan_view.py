"""Plain-data views of planning results, shared by `plan --json`, the table and the emitters.
The per-tensor entries are `Rows` (columns read from the plan, made into dicts only when written,
one strategy at a time), so a view of 100,000 tensors per strategy costs a few lists, not millions
of dicts."""

from __future__ import annotations

from packager.emit.json_text import Rows
from packager.plan.portfolio import Outcome, PortfolioResult
from packager.plan.records import OffsetPlan, overhead_pct


def record_columns(records, tensor_ids: list[int] | None = None) -> dict[str, list[int]]:
    """The columns every strategy's tensor entries share: index, size, first_op, last_op."""
    return {"index": [r.tensor for r in records] if tensor_ids is None else list(tensor_ids),
            "size": [r.size for r in records],
            "first_op": [r.first_op for r in records],
            "last_op": [r.last_op for r in records]}


def outcome_view(outcome: Outcome, result: PortfolioResult, tensor_ids: list[int] | None = None,
                 columns: dict[str, list[int]] | None = None) -> dict:
    """One strategy's plan; `columns` (record_columns) may be passed to share them between views."""
    problem = result.problem
    bound = problem.object_lower_bound if outcome.kind == "objects" else problem.offset_lower_bound
    if columns is None:
        columns = record_columns(problem.records, tensor_ids)
    place = ({"offset": outcome.plan.offsets} if isinstance(outcome.plan, OffsetPlan)
             else {"object": outcome.plan.assignment})
    view = {"name": outcome.strategy, "kind": outcome.kind, "total": outcome.total,
            "lower_bound": bound, "overhead_pct": overhead_pct(outcome.total, bound),
            "tensors": Rows({**columns, **place})}
    if outcome.kind == "objects":
        view["object_sizes"] = list(outcome.plan.object_sizes)
    if isinstance(outcome.plan, OffsetPlan) and outcome.plan.time_limit_hit:
        view["time_limit_hit"] = True  # a search's safety net stopped it: may depend on the machine
    if outcome.plan.search_stopped:
        view["search_stopped"] = outcome.plan.search_stopped  # gap left open, by a rule counting work
    return view


def result_view(result: PortfolioResult, with_tensors: bool = True) -> dict:
    best_off, best_obj = result.best_offsets, result.best_objects
    columns = record_columns(result.problem.records)  # shared by every strategy's entries
    strategies = []
    for o in (*result.offsets, *result.objects, *result.baselines):
        v = outcome_view(o, result, columns=columns)
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


def arena_view(subgraph: int | None, inline: bool, result: PortfolioResult, passes=None) -> dict:
    """One arena of `plan --json`: where it is, its strategies, and its multi-pass plan if any."""
    return {"subgraph": subgraph, "inline": inline, **result_view(result), **passes_view(passes)}


def passes_view(passes) -> dict:
    """The multi-pass plan of a dynamic-shape arena (nothing for static models)."""
    if passes is None:
        return {}
    records = passes.lifetimes.records
    return {"dynamic": {
        "bounds": {k: list(v) for k, v in sorted(passes.bounds.items())},
        "passes": len(set(passes.passes)),
        "arena": passes.plan.arena,
        "lower_bound": passes.lower_bound,
        "tensors": Rows({"index": [r.tensor for r in records], "pass": list(passes.passes),
                         "size_expr": [str(e) for e in passes.size_expressions],
                         "max_size": [r.size for r in records], "offset": list(passes.plan.offsets)}),
    }}
