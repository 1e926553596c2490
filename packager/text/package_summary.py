"""The one-screen summary `package` prints: arena against its lower bound with its breadth curve,
shared objects, the multi-pass plan of a model with dynamic shapes, what is kept apart, the files
written, an earlier run's files removed, and the notes."""

from __future__ import annotations

from packager.package import regions
from packager.package.runtime_arena import parts_text
from packager.package.sidecar import ArenaSection, PackagePlan, RuntimeArena, offset_plan_of
from packager.package.standing import SIDE_WORDS, declare_words
from packager.plan.records import breadth_by_step, num_ops, overhead_pct
from packager.text.breadth_text import breadth_lines
from packager.semantics import SEMANTICS

INDENT = "    "
WIDTH = 80


def summary_lines(result) -> list[str]:
    """`result` is a packager.package.build.PackageResult."""
    plan = result.plan
    lines = [f"{plan.source.file} -> {result.out_dir}/  ({plan.semantics} semantics, "
             f"offsets aligned to {plan.alignment} B)"]
    if plan.runtime_arena is not None:
        lines = declare_lines(plan.runtime_arena, lines[0])
    lines += regions.summary_lines(plan)  # --regions: each buffer, its region and its verdict
    if plan.is_dynamic:
        bounds = ", ".join(f"{s.name} in [{s.min}, {s.max}]" for s in plan.symbols)
        lines.append(f"  dynamic shapes ({bounds}): sizes are the largest, so the plan holds for every binding")
    for a in plan.arenas:
        where = "arena (all subgraphs)" if a.inline else f"arena of subgraph {a.subgraph}"
        if plan.runtime_arena is not None and plan.runtime_arena.head_plan:
            where = f"this plan, not used ({plan.runtime_arena.head_plan} is kept)"
        o, b = a.offsets, a.objects
        lines.append(f"  {where}: {o.arena_bytes:,} B by {o.strategy}; lower bound {o.lower_bound:,} B "
                     f"(+{overhead_pct(o.arena_bytes, o.lower_bound):.1f}%)")
        lines.append(f"    shared objects: {b.total_bytes:,} B in {len(b.object_sizes)} by "
                     f"{b.strategy}; lower bound {b.lower_bound:,} B "
                     f"(+{overhead_pct(b.total_bytes, b.lower_bound):.1f}%)")
        if a.passes is not None:
            passes = sorted({t.pass_ for t in a.planned})
            lines.append(f"    multi-pass plan (pass{'es' if len(passes) > 1 else ''} "
                         f"{', '.join(map(str, passes))}, each placed with the earlier ones fixed): "
                         f"{a.passes.arena_bytes:,} B (+{overhead_pct(a.passes.arena_bytes, o.lower_bound):.1f}%)")
        if a.persistent:
            lines.append(f"    persistent, kept apart: {len(a.persistent)} tensors, {a.persistent_bytes:,} B")
        lines += [INDENT + line for line in arena_breadth_lines(a, plan)]
    if len(plan.arenas) > 1:
        lines.append(f"  all arenas end to end (aligned): {plan.arena_bytes:,} B; lower bound {plan.lower_bound:,} B "
                     f"(+{overhead_pct(plan.arena_bytes, plan.lower_bound):.1f}%); "
                     f"shared objects {plan.objects_bytes:,} B")
    if SEMANTICS[plan.semantics].arena_note and plan.runtime_arena is None:
        lines.append(f"  {SEMANTICS[plan.semantics].arena_note}")
    lines.append("files:")
    width = max(len(f.path.name) for f in result.files)
    for f in result.files:
        lines.append(f"  {f.path.name:<{width}}  {f.size:>11,} B  {f.what}")
    if result.removed:
        lines.append("removed (an earlier run's files of ours that this run does not write):")
        lines += [f"  {name}" for name in result.removed]
    lines += [f"note: {n}" for n in result.notes]
    return lines


def arena_breadth_lines(arena: ArenaSection, plan: PackagePlan) -> list[str]:
    """The compact breadth curve of the plan as written (scaled to its arena, which for tflm is
    the arena after TFLite Micro's scratch placement, not the portfolio's best)."""
    records = offset_plan_of(arena, plan.alignment)[0]
    return breadth_lines(breadth_by_step(records, num_ops(records)), arena.offsets.lower_bound,
                         arena.offsets.arena_bytes, "scope" if arena.inline else "op",
                         width=WIDTH - len(INDENT))


def summary_json(result) -> dict:
    """`package --json`: the figures of the summary and every file written, as data."""
    plan = result.plan
    return {
        "source": plan.source.file,
        "semantics": plan.semantics,
        "alignment": plan.alignment,
        "out_dir": str(result.out_dir),
        "arena_bytes": plan.arena_bytes,
        "lower_bound": plan.lower_bound,
        "objects_bytes": plan.objects_bytes,
        "symbols": [{"name": s.name, "min": s.min, "max": s.max} for s in plan.symbols] if plan.is_dynamic else [],
        "arenas": [{
            "subgraph": a.subgraph, "inline": a.inline,
            "arena_bytes": a.offsets.arena_bytes, "lower_bound": a.offsets.lower_bound,
            "strategy": a.offsets.strategy,
            "objects_bytes": a.objects.total_bytes, "objects_lower_bound": a.objects.lower_bound,
            "objects_strategy": a.objects.strategy, "objects": len(a.objects.object_sizes),
            "multipass_arena_bytes": a.passes.arena_bytes if a.passes is not None else None,
            "persistent_bytes": a.persistent_bytes,
        } for a in plan.arenas],
        "files": [{"name": f.path.name, "path": str(f.path), "bytes": f.size, "what": f.what}
                  for f in result.files],
        "removed": list(result.removed),  # an earlier run's files of ours that this run removed
        "notes": list(result.notes),
        # tflm: TFLite Micro's whole arena to declare, its parts and its standing, as the sidecar has it
        **({"runtime_arena": runtime_arena_json(plan.runtime_arena)} if plan.runtime_arena else {}),
        **(regions.summary_json(plan) if plan.regions else {}),
    }


def runtime_arena_json(arena: RuntimeArena) -> dict:
    return {"arena_bytes": arena.arena_bytes, "bound": arena.bound, "exact": arena.exact,
            "reason": arena.reason, "not_run": arena.not_run, "head_bytes": arena.head_bytes,
            "tail_bytes": arena.tail_bytes, "setup_bytes": arena.setup_bytes, "target": arena.target,
            "runtime": arena.runtime, "modelled": arena.modelled, "head_plan": arena.head_plan}


def declare_lines(arena: RuntimeArena, first_line: str) -> list[str]:
    """The summary's first figure on its first line, which says first when no runtime ran the
    model and which side of the runtime's need a figure not shown exact is on; then what it is
    made of (figures that add up) and the one-line reason for its standing."""
    before = f"not run on TFLite Micro ({arena.not_run}): " if arena.not_run else ""
    side = "" if arena.exact else f", {SIDE_WORDS[arena.bound]}"  # exact: as it always said
    head = "the plan's tensors, CMSIS-NN's scratch around them" if arena.target.endswith("+cmsis-nn") else "the plan"
    parts = (f" ({arena.head_plan or head})", " (persistent)")
    return [f"{before}{declare_words(arena.bound, arena.arena_bytes)} of TFLite Micro arena "
            f"({arena.target}{side}): {first_line}",
            f"  = {parts_text(arena, parts)}; {arena.reason}"]
