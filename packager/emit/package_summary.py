"""The one-screen summary `package` prints: arena against its lower bound, shared objects, what is
kept apart, the files written, and the notes."""

from __future__ import annotations

from packager.plan_view import overhead_pct


def summary_lines(result) -> list[str]:
    """`result` is a packager.package.PackageResult."""
    plan = result.plan
    lines = [f"{plan.source.file} -> {result.out_dir}/  ({plan.semantics} semantics, "
             f"offsets aligned to {plan.alignment} B)"]
    for a in plan.arenas:
        where = "arena (all subgraphs)" if a.inline else f"arena of subgraph {a.subgraph}"
        o, b = a.offsets, a.objects
        lines.append(f"  {where}: {o.arena_bytes:,} B by {o.strategy}; lower bound {o.lower_bound:,} B "
                     f"(+{overhead_pct(o.arena_bytes, o.lower_bound):.1f}%)")
        lines.append(f"    shared objects: {b.total_bytes:,} B in {len(b.object_sizes)} by "
                     f"{b.strategy}; lower bound {b.lower_bound:,} B "
                     f"(+{overhead_pct(b.total_bytes, b.lower_bound):.1f}%)")
        if a.persistent:
            lines.append(f"    persistent, kept apart: {len(a.persistent)} tensors, {a.persistent_bytes:,} B")
    if len(plan.arenas) > 1:
        lines.append(f"  all arenas end to end (aligned): {plan.arena_bytes:,} B; lower bound {plan.lower_bound:,} B "
                     f"(+{overhead_pct(plan.arena_bytes, plan.lower_bound):.1f}%); "
                     f"shared objects {plan.objects_bytes:,} B")
    if plan.semantics == "tflm":
        lines.append("  TFLite Micro's arena = this head + its tail (print_allocations() reports it)")
    lines.append("files:")
    width = max(len(f.path.name) for f in result.files)
    for f in result.files:
        lines.append(f"  {f.path.name:<{width}}  {f.size:>11,} B  {f.what}")
    lines += [f"note: {n}" for n in result.notes]
    return lines
