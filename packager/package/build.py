"""`package`: plan a model, prove the plan, and write everything a device build needs, at once.

    plan (every arena, validated; dynamic shapes at their largest sizes, plus the multi-pass plan)
        ->  PackagePlan  ->  check against the model (the gate)
        ->  files in memory: sidecar JSON + FlatBuffer, C header, model array, offline-planned
            .tflite (tflm only, re-read and re-checked), report page  ->  written atomically into DIR
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Sequence

import packager
from packager.dynamic.shapes import PassPlan, plan_passes, require_bounds
from packager.emit import c_header, model_array
from packager.package import plan_flatbuffer, plan_json
from packager.emit.c_text import identifier, is_identifier
from packager.package.offline_plan import with_offline_plan
from packager.emit.report import render_report_html
from packager.errors import PackagerError, PlanError
from packager.model import Model
from packager.package.output_dir import write_all
from packager.package.existing_plan import existing_plan, existing_plan_note
from packager.package.stored_shapes import stored_batch_note
from packager.package.verify import skipped, verify_package
from packager.package.runtime_arena import check_target, needed_bytes, with_runtime_arena
from packager.package.notes import OFFLINE_SEMANTICS, model_notes
from packager.package.sidecar import (TENSOR, ArenaToPlan, DynamicBinding, PackagePlan, SourceModel,
                                   arena_section, arenas_to_plan, symbol_entries)
from packager.plan.offsets import greedy_by_size_tflm
from packager.plan.portfolio import Outcome, PortfolioResult, run_portfolio, validate
from packager.package.check import check_offline_model, check_package_plan
from packager.package.load import parse_plan
from packager.arenas import ArenaPlan, dynamic_shapes, problem_of, select
from packager.reader import read_model
from packager.semantics import SEMANTICS


class BudgetExceeded(PlanError):
    """The best plan does not fit the memory budget the user gave."""


@dataclass(frozen=True)
class PackagedFile:
    path: Path
    size: int
    what: str


@dataclass(frozen=True)
class PackageResult:
    plan: PackagePlan
    files: tuple[PackagedFile, ...]
    notes: tuple[str, ...]
    out_dir: Path


def parse_bytes(text: str) -> int:
    """'200000', '256K', '1.5M', '64KiB' -> bytes (K and M are 1024-based)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)(?:i?[bB])?\s*", text)
    if not m:
        raise PackagerError(f"budget '{text}' is not a size in bytes (e.g. 200000, 256K, 1M)")
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]
    return int(float(m.group(1)) * scale)


def default_prefix(model_path: Path) -> str:
    return identifier(model_path.stem)


# -- planning ----------------------------------------------------------------------------------

def _with_tflm_scratch_placement(result: PortfolioResult, scratch: Mapping[int, str]) -> Outcome:
    """The best offset plan once TFLite Micro has placed the scratch buffers its way: tensors keep
    their offsets (they go into the offline plan), scratch buffers go where TFLite Micro's own
    planner will put them (given offsets first, then largest first into the first gap), so the
    plan's arena is the head TFLite Micro will report. Tried on every strategy's plan."""
    problem = result.problem
    best: Outcome | None = None
    for outcome in result.offsets:
        fixed = {i: o for i, (r, o) in enumerate(zip(problem.records, outcome.plan.offsets))
                 if r.tensor not in scratch}
        placed = greedy_by_size_tflm.plan(problem.records, problem.alignment, fixed=fixed)
        placed = replace(placed, strategy=outcome.strategy)
        validate(problem, placed)
        if best is None or placed.arena < best.plan.arena:
            best = Outcome(outcome.strategy, "offsets", placed, outcome.seconds)
    assert best is not None
    return best


@dataclass(frozen=True)
class PlannedArena:
    arena: ArenaToPlan
    result: PortfolioResult  # every strategy tried
    offsets: Outcome  # the offset plan written (TFLite Micro's scratch buffers placed its way)
    passes: PassPlan | None  # the multi-pass plan (dynamic shapes)


@dataclass(frozen=True)
class PlannedModel:
    plan: PackagePlan  # checked against the model
    arenas: tuple[PlannedArena, ...]
    unmodelled_ops: tuple[str, ...]  # ops whose runtime scratch requests are not modelled


def dynamic_binding(model: Model, dims: Sequence[str] = ()) -> DynamicBinding | None:
    """The model's symbols and their bounds from --dim (or derived); None for a static model.
    A device needs one static plan, so every symbol must be bounded: DimError names the first
    that is not."""
    shapes, bounds = dynamic_shapes(model, dims)
    if not shapes.is_dynamic:
        return None
    require_bounds(shapes, bounds)
    return DynamicBinding(shapes, bounds)


def make_plan(model: Model, semantics: str, strategy: str, source: SourceModel,
              dynamic: DynamicBinding | None = None) -> PlannedModel:
    """Plan every arena (at the largest sizes, with dynamic shapes), build the packaged plan and
    pass it through the gate."""
    offset_names, object_names = select(strategy)
    if offset_names == []:
        raise PackagerError(f"'{strategy}' is a shared-object strategy only; package needs an offset "
                            "plan: use best or an offset strategy")
    planned, unmodelled = [], set()
    for arena in arenas_to_plan(model, semantics, dynamic):
        unmodelled.update(arena.unmodelled_ops)
        result = run_portfolio(problem_of(arena.lifetimes), offset_names=offset_names,
                               object_names=object_names or None, baselines=False)
        if result.best_offsets is None or result.best_objects is None:
            raise PlanError(f"strategy '{strategy}' gave no plan")
        offsets = (_with_tflm_scratch_placement(result, arena.scratch) if arena.scratch
                   else result.best_offsets)
        # The records are already at their largest sizes, which plan_passes computes again.
        passes = None if dynamic is None else plan_passes(arena.lifetimes, dynamic.shapes, dynamic.bounds)
        planned.append(PlannedArena(arena, result, offsets, passes))
    sections = tuple(arena_section(model, p.arena, p.result, p.offsets, p.result.best_objects,
                                   None if p.passes is None else p.passes.plan) for p in planned)
    plan = PackagePlan(source=source, semantics=semantics, alignment=SEMANTICS[semantics].alignment,
                       arenas=sections, generator=f"tflpack {packager.__version__}",
                       symbols=() if dynamic is None else symbol_entries(dynamic.shapes, dynamic.bounds))
    check_package_plan(plan, model)
    return PlannedModel(plan, tuple(planned), tuple(sorted(unmodelled)))


# -- files -------------------------------------------------------------------------------------

def offline_offsets(plan: PackagePlan) -> list[int]:
    """Every tensor's offset in TFLite Micro's global numbering, -1 where it has none."""
    offsets = [-1] * sum(plan.source.subgraph_tensor_counts)
    for t in plan.arenas[0].offsets.tensors:
        if t.kind == TENSOR and t.alias_of is None:
            offsets[t.index] = t.offset
    return offsets


def build_files(plan: PackagePlan, model: Model, prefix: str,
                unmodelled_ops: tuple[str, ...] = (),
                keep_offline_plan: bool = False) -> tuple[dict[str, tuple[bytes, str]], list[str]]:
    """name -> (bytes, what it is), and notes for the user. Everything in memory, checked."""
    as_json, as_flatbuffer = plan_json.dumps(plan), plan_flatbuffer.dumps(plan)
    # What is written is what was checked: both forms must read back as the checked plan.
    if parse_plan(as_json) != plan or parse_plan(as_flatbuffer) != plan:
        raise PlanError("the plan does not read back from its own files (a bug in a plan writer)")
    files: dict[str, tuple[bytes, str]] = {
        f"{prefix}_plan.json": (as_json, "plan (JSON, schemas/plan.schema.json)"),
        f"{prefix}_plan.tplan": (as_flatbuffer, "plan (FlatBuffer, schemas/plan.fbs)"),
        f"{prefix}_plan.h": (c_header.render(plan, model, prefix).encode("ascii"),
                             "C header: arena size, offsets, lifetimes, objects"),
    }
    notes: list[str] = []
    embedded, embedded_note = model.raw, "the input model unchanged"
    if plan.semantics == OFFLINE_SEMANTICS and keep_offline_plan:
        files[f"{prefix}.tflite"] = (model.raw, "the model unchanged, with its own OfflineMemoryAllocation")
        embedded, embedded_note = model.raw, "unchanged, with its own OfflineMemoryAllocation"
    elif plan.semantics == OFFLINE_SEMANTICS:
        packed = with_offline_plan(model.raw, offline_offsets(plan), len(model.subgraphs))
        check_offline_model(packed, plan, model)
        files[f"{prefix}.tflite"] = (packed, "the model with its OfflineMemoryAllocation plan")
        embedded, embedded_note = packed, "with its OfflineMemoryAllocation plan"
    else:
        notes.append(f"no offline-planned {prefix}.tflite: TFLite Micro's OfflineMemoryAllocation "
                     f"describes a tflm plan only (this one is {plan.semantics}; use --semantics tflm)")
    source_name = f"{prefix}.tflite" if plan.semantics == OFFLINE_SEMANTICS else plan.source.file
    files[f"{prefix}_model.h"] = (model_array.render_header(prefix, source_name, len(embedded), embedded_note)
                                  .encode("ascii"), "C array declaration (16-byte aligned, const)")
    files[f"{prefix}_model.c"] = (model_array.render_source(prefix, embedded).encode("ascii"),
                                  f"C array of the model bytes ({embedded_note})")
    notes += model_notes(plan, model, unmodelled_ops)
    return files, notes


def report_html(planned: PlannedModel, model: Model, strategy: str) -> bytes:
    """The report page of the plan as written: no planning times and no measured runtime (that
    would run TFLite in a child process), so the same inputs give the same bytes."""
    html = render_report_html(
        model, [ArenaPlan(p.arena.lifetimes, p.result, p.passes) for p in planned.arenas],
        source_name=planned.plan.source.file, semantics=planned.plan.semantics, strategy=strategy,
        include_times=False, measured=None,
        layouts=[p.offsets for p in planned.arenas],  # validated again before it is drawn
        labels=[p.arena.scratch for p in planned.arenas])  # names of TFLite Micro's scratch buffers
    return html.encode("utf-8")


# -- the whole job -----------------------------------------------------------------------------

def package(model_path: str | Path, out_dir: str | Path, semantics: str = OFFLINE_SEMANTICS,
            strategy: str = "best", budget: int | None = None, name: str | None = None,
            dims: Sequence[str] = (), report: bool = True, target: str = "host",
            verify: bool = False, keep_offline_plan: bool = False) -> PackageResult:
    """`dims`: --dim specs bounding the symbols of a model with dynamic shapes; `report`: also
    write `<prefix>_report.html`; `target`: the TFLite Micro build the whole arena is for;
    `verify`: run the packaged model on tflite-micro first (package/verify.py);
    `keep_offline_plan`: keep an OfflineMemoryAllocation the model already has (Vela's)."""
    model_path, out_dir = Path(model_path), Path(out_dir)
    if semantics not in SEMANTICS:
        raise PackagerError(f"unknown semantics '{semantics}' (choose from {', '.join(SEMANTICS)})")
    prefix = name if name is not None else default_prefix(model_path)
    if not is_identifier(prefix):
        raise PackagerError(f"--name '{prefix}' is not a C identifier (letters, digits, '_'; "
                            "not starting with a digit)")
    model = read_model(model_path)
    source = SourceModel(model_path.name, hashlib.sha256(model.raw).hexdigest(), len(model.raw),
                         tuple(len(sg.tensors) for sg in model.subgraphs))
    batch_note = stored_batch_note(model, semantics, dims)
    planned = make_plan(model, semantics, strategy, source,
                        None if batch_note else dynamic_binding(model, dims))
    existing = existing_plan(model) if semantics == OFFLINE_SEMANTICS else None
    # Never worse than the original: a smaller plan the model already has is kept.
    keep = existing is not None and (keep_offline_plan or existing.head < planned.plan.arena_bytes)
    plan = with_runtime_arena(planned.plan, model, check_target(target),
                              head=existing.head if keep else None)
    needed, bound, what = needed_bytes(plan)
    if budget is not None and needed > budget:
        why = ("no plan can fit: the lower bound is over the budget" if bound > budget
               else f"the lower bound {bound:,} B would fit; try another --strategy")
        raise BudgetExceeded(f"{model_path.name}: the plan needs {needed:,} B {what}, "
                             f"{needed - budget:,} B over the budget of {budget:,} B ({why})")
    files, notes = build_files(plan, model, prefix, planned.unmodelled_ops, keep_offline_plan=keep)
    if existing is not None:
        notes.insert(0, existing_plan_note(existing, plan.arena_bytes, keep, keep_offline_plan))
    if batch_note:
        notes.insert(0, batch_note)
    if plan.runtime_arena is not None:
        packed = files[f"{prefix}.tflite"][0]
        notes.insert(0, (verify_package(model_path, packed, plan, model) if verify else skipped()).line)
    if report:
        files[f"{prefix}_report.html"] = (report_html(planned, model, strategy),
                                          "report: the plan as pictures (open in a browser)")
    paths = write_all(out_dir, {n: data for n, (data, _) in files.items()})
    written = tuple(PackagedFile(p, len(files[p.name][0]), files[p.name][1]) for p in paths)
    return PackageResult(plan, written, tuple(notes), out_dir)
