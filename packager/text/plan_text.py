"""What `plan` prints: each arena's strategies beside the lower bound, and its dynamic shapes."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from packager.plan.portfolio import PortfolioResult
from packager.plan.records import overhead_pct
from packager.text.breadth_text import result_breadth_lines
from packager.text.tables import print_table


def print_result(out: Console, where: str, result: PortfolioResult, timeline: str = "op") -> None:
    """One arena's strategies as a table beside the lower bound, the best of each kind, and the breadth curve."""
    p = result.problem
    out.print(f"\n{where}: {len(p.records)} planned tensors, alignment {p.alignment} B")
    table = Table("plan", "strategy", "bytes", "lower bound", "over bound", "time")
    for o in (*result.offsets, *result.objects, *result.baselines):
        bound = p.object_lower_bound if o.kind == "objects" else p.offset_lower_bound
        is_best = (o is result.best_offsets) or (o is result.best_objects)
        table.add_row(o.kind, ("* " if is_best else "  ") + o.strategy, f"{o.total:,}", f"{bound:,}",
                      f"{overhead_pct(o.total, bound):.1f}%", f"{o.seconds * 1000:.1f} ms")
    print_table(out, table)
    if result.skipped:
        out.print(f"left out at {len(p.records):,} records (too slow at this size; name one with "
                  f"--strategy to run it): {', '.join(result.skipped)}")
    if result.best_offsets:
        b = result.best_offsets
        out.print(f"best offsets: {b.strategy}, {b.total:,} B "
                  f"({overhead_pct(b.total, p.offset_lower_bound):.1f}% over the lower bound "
                  f"{p.offset_lower_bound:,} B)"
                  + ("; proven optimal: the rest of the gap is the bound's"
                     if b.total > p.offset_lower_bound and result.offsets_optimal else ""))
    for name, why in result.offsets_search_stopped:
        if result.best_offsets and not result.offsets_optimal:
            out.print(f"{name} stopped before closing the gap to the bound: {why} "
                      "(a budget of counted work, not time, so every machine gives this plan)")
    if result.offsets_time_limit_hit:
        out.print("stopped by a safety-net time limit, so the plan may differ on another machine: "
                  + ", ".join(result.offsets_time_limit_hit))
    if result.best_objects:
        b = result.best_objects
        gap = b.total > p.object_lower_bound
        out.print(f"best shared objects: {b.strategy}, {b.total:,} B "
                  f"({overhead_pct(b.total, p.object_lower_bound):.1f}% over the lower bound "
                  f"{p.object_lower_bound:,} B)"
                  + ("; proven optimal: the rest of the gap is the bound's"
                     if gap and result.objects_optimal else ""))
    for name, why in result.objects_search_stopped:
        if result.best_objects and not result.objects_optimal:
            out.print(f"{name} stopped before closing the gap to the bound: {why} "
                      "(a rule that counts its work, so every machine gives this plan)")
    for line in result_breadth_lines(result, timeline, width=min(out.width, 80)):
        out.print(line, markup=False, overflow="ignore", crop=False)


def print_dynamic(out: Console, d: dict) -> None:
    """The multi-pass plan of a dynamic-shape arena (plan_view.passes_view)."""
    bounds = ", ".join(f"{k} in [{lo}, {hi}]" for k, (lo, hi) in d["bounds"].items())
    out.print(f"dynamic shapes ({bounds}): sizes above are the largest; the multi-pass plan "
              f"({d['passes']} passes) needs {d['arena']:,} B, lower bound {d['lower_bound']:,} B "
              f"at the largest binding ({overhead_pct(d['arena'], d['lower_bound']):.1f}% over)")
