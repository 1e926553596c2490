"""The one-screen summary `package` prints: arena against its lower bound with its breadth curve,
shared objects, the multi-pass plan of a model with dynamic shapes, what is kept apart, the files
written, an earlier run's files removed, and the notes."""

from __future__ import annotations

from packager.package.sidecar import ArenaSection, PackagePlan, RuntimeArena, offset_plan_of
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
        "runtime_arena": runtime_arena_json(plan.runtime_arena),  # TFLite Micro's whole arena (tflm)
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
    }


def runtime_arena_json(arena: RuntimeArena | None) -> dict | None:
    if arena is None:
        return None
    return {"arena_bytes": arena.arena_bytes, "head_bytes": arena.head_bytes, "tail_bytes": arena.tail_bytes,
            "setup_bytes": arena.setup_bytes, "exact": arena.exact, "modelled": arena.modelled,
            "target": arena.target, "head_plan": arena.head_plan}


def declare_lines(arena: RuntimeArena, first_line: str) -> list[str]:
    """The summary's first figure, on its first line, then the split."""
    # The notes name the kernels (custom ops have a note of their own).
    quality = "" if arena.exact else "; NOT EXACT: a kernel's memory is not modelled (see the notes)"
    if arena.modelled:
        quality += f"; modelled, not measured ({arena.rule})"
    bound = "set-up room" if arena.setup_bytes > arena.head_bytes + arena.tail_bytes else "head + tail"
    at_least = "" if arena.exact else "at least "  # unmodelled memory only ever adds
    exact = "" if arena.exact else ", not exact"  # the first line says so; the second names the kernels
    return [f"declare {at_least}{arena.arena_bytes:,} bytes of TFLite Micro arena ({arena.target}{exact}): {first_line}",
            f"  = head {arena.head_bytes:,} ({arena.head_plan or 'the plan'}) + tail {arena.tail_bytes:,} (persistent), "
            f"16-aligned; set-up needs {arena.setup_bytes:,}; set by {bound}{quality}"]
