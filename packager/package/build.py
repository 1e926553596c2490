"""`package`: plan a model, prove the plan, and write everything a device build needs, at once.

    plan (every arena, validated; dynamic shapes at their largest sizes, plus the multi-pass plan)
        ->  PackagePlan  ->  check against the model (the gate)
        ->  files one at a time, each written into a temporary folder as soon as it is built:
            first the offline-planned .tflite (tflm only, re-read and re-checked), which
            TFLite Micro then runs (verify.py): what it shows settles the whole arena's
            standing (standing.py) before any file states the figure; then the sidecar
            FlatBuffer (read back and checked), C header, model array, report page, and last
            the sidecar JSON (read back and checked), which records the others with their sha256
        ->  the temporary folder becomes DIR's files atomically, and an earlier run's files of
            ours that this one does not write are removed in the same step (owned_files.py)
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from packager.arenas import Bindings, PlannedArena, bindings_for, plan_arenas
from packager.dynamic.stored_batch import stored_batch
from packager.emit import model_array
from packager.package import c_header, op_resolver
from packager.package import plan_flatbuffer, plan_json
from packager.emit.c_text import identifier, is_identifier
from packager.package.offline_plan import with_offline_plan
from packager.emit.report import report_html_chunks
from packager.pictures import arena_picture
from packager.errors import PackagerError, PlanError
from packager.emit.encoded_blocks import encoded_in_blocks
from packager.model import Model
from packager.package.output_dir import StagedFolder, staged_folder
from packager.package.owned_files import refuse_to_replace_input, survey
from packager.package.existing_plan import (existing_plan, existing_plan_note, head_plan_name, refuse_to_keep,
                                           unproven)
from packager.package.stored_shapes import with_stored_sizes
from packager.package.verify import skipped, verify_package
from packager.package.regions_verify import verify_regions
from packager.package.target_verify import verify_on_target
from packager.package.runtime_arena import (check_target, needed_bytes, whole_arena_sentences, with_runtime_arena,
                                           with_standing)
from packager.package.notes import model_notes
from packager.package.regions import overflow, parse_regions as region_specs, split as split_figures, with_regions
from packager.package.assemble import package_plan
from packager.package.sidecar import TENSOR, PackagePlan, SourceModel, WrittenFile
from packager.package.check import check_offline_model, check_package_plan
from packager.package.read_back import reads_back
from packager.reader import read_model
from packager.semantics import SEMANTICS, TFLM
from packager.size_limits import check_tensor_sizes


class BudgetExceeded(PlanError):
    """The best plan does not fit the memory budget the user gave."""


class RegionOverflow(BudgetExceeded):
    """A part of TFLite Micro's memory does not fit the region `--regions` gives it."""


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
    removed: tuple[str, ...] = ()  # an earlier run's files of ours that this run removed


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

@dataclass(frozen=True)
class PlannedModel:
    plan: PackagePlan  # checked against the model
    arenas: tuple[PlannedArena, ...]
    unmodelled_ops: tuple[str, ...]  # ops whose runtime scratch requests are not modelled


def make_plan(model: Model, semantics: str, strategy: str, source: SourceModel,
              bindings: Bindings | None = None) -> PlannedModel:
    """Plan every arena on the one path (at the largest sizes, with dynamic shapes), build the
    packaged plan and pass it through the gate."""
    planned = plan_arenas(model, semantics, bindings, strategy, to_ship=True)
    unmodelled = {op for p in planned for op in p.arena.unmodelled_ops}
    plan = package_plan(model, semantics, source, planned, bindings)
    check_package_plan(plan, model, proven=[o.proven for p in planned for o in (p.offsets, p.result.best_objects)
                                            if o is not None and o.proven is not None])
    return PlannedModel(plan, tuple(planned), tuple(sorted(unmodelled)))


# -- files -------------------------------------------------------------------------------------

def offline_offsets(plan: PackagePlan) -> list[int]:
    """Every tensor's offset in TFLite Micro's global numbering, -1 where it has none."""
    offsets = [-1] * sum(plan.source.subgraph_tensor_counts)
    tensors = plan.arenas[0].offsets.tensors
    index, offset = tensors.index.tolist(), tensors.offset.tolist()
    for k, (kind, planned) in enumerate(zip(tensors.kind, tensors.planned.tolist())):
        if kind == TENSOR and planned:
            offsets[index[k]] = offset[k]
    return offsets


def checked_plan_file(data: bytes | str, plan: PackagePlan) -> bytes | str:
    """What is written is what was checked: the file must read back as the checked plan."""
    if not reads_back(data, plan):
        raise PlanError("the plan does not read back from its own files (a bug in a plan writer)")
    return data


def file_names(prefix: str, semantics: str, report: bool) -> list[str]:
    """Every file a run writes, known before it plans."""
    names = [f"{prefix}{end}" for end in ("_plan.json", "_plan.tplan", "_plan.h", "_model.h", "_model.c")]
    tflm = SEMANTICS[semantics].offline_plan  # the files only TFLite Micro reads
    return (names + [f"{prefix}.tflite", f"{prefix}_op_resolver.h"] * tflm
            + [f"{prefix}_report.html"] * report)


PLAN_JSON_WHAT = "plan (JSON, schemas/plan.schema.json)"


def plan_json_file(plan: PackagePlan, folder: StagedFolder) -> bytes:
    """The plan JSON, recording every file already in the folder with its sha256 and size."""
    written = [WrittenFile(name, folder.sha256[name], size) for name, size in folder.sizes.items()]
    return checked_plan_file(plan_json.dumps(plan, written), plan)


def runtime_model(plan: PackagePlan, model: Model, prefix: str,
                  keep_offline_plan: bool = False) -> tuple[str, bytes, str] | None:
    """(name, bytes, what it is) of the model TFLite Micro runs, tflm only: written before the
    other files, so that it runs before any of them states its arena."""
    if not SEMANTICS[plan.semantics].offline_plan:
        return None
    if keep_offline_plan:
        return f"{prefix}.tflite", model.raw, "the model unchanged, with its own OfflineMemoryAllocation"
    packed = with_offline_plan(model.raw, offline_offsets(plan), len(model.subgraphs))
    check_offline_model(packed, plan, model)
    return f"{prefix}.tflite", packed, "the model with its OfflineMemoryAllocation plan"


def files_one_by_one(plan: PackagePlan, model: Model, prefix: str, notes: list[str],
                     unmodelled_ops: tuple[str, ...] = (), keep_offline_plan: bool = False,
                     embedded: Callable[[], bytes] | None = None) -> Iterator[tuple[str, bytes | Iterator[bytes], str]]:
    """(name, bytes or its chunks in order, what it is) for each file but runtime_model's and the
    plan JSON (written last, see plan_json_file), built and checked one at a time so that a
    caller writing each before asking for the next holds one file in memory (the largest, the C
    array, a chunk at a time); `embedded`: reads runtime_model's bytes, for the C array (tflm); notes
    for the user are appended to `notes` (complete once the files are)."""
    yield (f"{prefix}_plan.tplan", checked_plan_file(plan_flatbuffer.dumps(plan), plan),
           "plan (FlatBuffer, schemas/plan.fbs)")
    yield (f"{prefix}_plan.h", c_header.render_chunks(plan, model, prefix),  # encoded as written
           "C header: arena size, offsets, lifetimes, objects")
    if SEMANTICS[plan.semantics].offline_plan and keep_offline_plan:
        data, embedded_note = model.raw, "unchanged, with its own OfflineMemoryAllocation"
    elif SEMANTICS[plan.semantics].offline_plan:
        data, embedded_note = embedded(), "with its OfflineMemoryAllocation plan"
    else:
        data, embedded_note = model.raw, "the input model unchanged"
        notes.append(f"no offline-planned {prefix}.tflite: TFLite Micro's OfflineMemoryAllocation "
                     f"describes a tflm plan only (this one is {plan.semantics}; use --semantics tflm)")
    source_name = f"{prefix}.tflite" if SEMANTICS[plan.semantics].offline_plan else plan.source.file
    yield (f"{prefix}_model.h", model_array.render_header(prefix, source_name, len(data), embedded_note)
           .encode("ascii"), "C array declaration (16-byte aligned, const)")
    yield (f"{prefix}_model.c", model_array.source_chunks(prefix, data),  # written as formatted
           f"C array of the model bytes ({embedded_note})")
    del data
    if SEMANTICS[plan.semantics].offline_plan:
        yield (f"{prefix}_op_resolver.h", op_resolver.render(model, prefix, source_name),
               "C++ op resolver: MicroMutableOpResolver<N> with exactly the model's operators")
    notes += model_notes(plan, model, unmodelled_ops)
    if SEMANTICS[plan.semantics].offline_plan and op_resolver.resolver_note(model):
        notes.append(op_resolver.resolver_note(model))


def write_files(folder: StagedFolder, plan: PackagePlan, model: Model, prefix: str, notes: list[str],
                unmodelled_ops: tuple[str, ...] = (), keep_offline_plan: bool = False) -> dict[str, str]:
    """Build each file, write it into the temporary folder and drop it before building the next,
    so that one file at a time is held in memory; name -> what it is. runtime_model's file is
    in the folder already (tflm): the C array is read back from it."""
    whats: dict[str, str] = {}
    embedded = lambda: folder.read(f"{prefix}.tflite")  # noqa: E731
    for name, data, what in files_one_by_one(plan, model, prefix, notes, unmodelled_ops, keep_offline_plan,
                                             embedded):
        folder.add(name, data)
        whats[name] = what
        del data
    return whats


def report_html(planned: PlannedModel, model: Model, strategy: str,
                first: Sequence[str] = ()) -> Iterator[bytes]:
    """The report page of the plan as written: no planning times and no measured runtime (that
    would run TFLite in a child process), so the same inputs give the same bytes. Its pictures are
    made (and checked) here; its text is made and encoded a block at a time as it is written."""
    pictures = [arena_picture(model, p, strategy,
                              layout_outcome=p.offsets,  # validated when made, or again before it is drawn
                              labels=p.arena.scratch)  # names of TFLite Micro's scratch buffers
                for p in planned.arenas]
    return encoded_in_blocks(report_html_chunks(pictures, source_name=planned.plan.source.file,
                                                semantics=planned.plan.semantics, strategy=strategy,
                                                include_times=False, first=first))


# -- the whole job -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Prepared:
    """A model planned as `package` plans it, before any file is made."""
    plan: PackagePlan  # checked, with TFLite Micro's whole arena for tflm
    planned: PlannedModel
    model: Model  # as planned (stored -1 sizes given by --dim)
    stored: object  # package/stored_shapes.py's StoredSizes: the model and --dim as planned, and its note
    existing: object | None  # the model's own OfflineMemoryAllocation, when it has one (tflm)
    keep: bool  # the model's own plan is kept
    why_not: str | None  # why the model's own plan cannot be kept, when it cannot
    batch_note: str


def prepare(model: Model, source_name: str, semantics: str = TFLM.name, strategy: str = "best",
            dims: Sequence[str] = (), target: str = "host", keep_offline_plan: bool = False) -> Prepared:
    """Plan a model and state TFLite Micro's whole arena for it, exactly as `package` does, without
    writing anything (`package`, the library API and the batch all plan through here)."""
    stored = with_stored_sizes(model, semantics, dims)  # a stored -1 gets the size --dim gives
    model, dims = stored.model, stored.dims
    check_tensor_sizes(model, source_name)  # a tensor no plan can address, named before planning
    source = SourceModel(source_name, hashlib.sha256(model.raw).hexdigest(), len(model.raw),
                         tuple(len(sg.tensors) for sg in model.subgraphs))
    batch = stored_batch(model, dims)  # a batch -1 only in shape_signature: the stored shape
    batch_note = batch.note(semantics) if batch is not None else None
    planned = make_plan(model, semantics, strategy, source, bindings_for(model, dims))
    existing = existing_plan(model) if SEMANTICS[semantics].offline_plan else None
    # Never worse than the original: a smaller plan the model already has is kept, if the
    # validator proves it (every plan passes it before it is written).
    why_not = unproven(model, existing) if existing is not None else None
    if keep_offline_plan and existing is not None and why_not:
        raise refuse_to_keep(existing, why_not)
    keep = existing is not None and not why_not and (keep_offline_plan or existing.head < planned.plan.arena_bytes)
    plan = with_runtime_arena(planned.plan, model, check_target(target),
                              head=existing.head if keep else None,
                              head_plan=head_plan_name(existing) if keep else "")
    return Prepared(plan, planned, model, stored, existing, keep, why_not, batch_note)


def package(model_path: str | Path, out_dir: str | Path, semantics: str = TFLM.name,
            strategy: str = "best", budget: int | None = None, name: str | None = None,
            dims: Sequence[str] = (), report: bool = True, target: str = "host",
            verify: bool = False, keep_offline_plan: bool = False, regions: str | None = None) -> PackageResult:
    """`dims`: --dim specs bounding the symbols of a model with dynamic shapes; `report`: also
    write `<prefix>_report.html`; `target`: the TFLite Micro build the whole arena is for;
    `verify`: run the packaged model on tflite-micro first (package/verify.py);
    `keep_offline_plan`: keep an OfflineMemoryAllocation the model already has (Vela's);
    `regions`: --regions, TFLite Micro's memory in two buffers (package/regions.py)."""
    model_path, out_dir = Path(model_path), Path(out_dir)
    if semantics not in SEMANTICS:
        raise PackagerError(f"unknown semantics '{semantics}' (choose from {', '.join(SEMANTICS)})")
    prefix = name if name is not None else default_prefix(model_path)
    if not is_identifier(prefix):
        raise PackagerError(f"--name '{prefix}' is not a C identifier (letters, digits, '_'; "
                            "not starting with a digit)")
    names = file_names(prefix, semantics, report)
    specs = region_specs(regions) if regions is not None else None
    refuse_to_replace_input(model_path, out_dir, names)
    model = read_model(model_path)
    # Refused before planning when a file of this run would overwrite a user's file.
    earlier = survey(out_dir, names, model_path)
    prepared = prepare(model, model_path.name, semantics, strategy, dims, target, keep_offline_plan)
    plan, planned, stored, existing = prepared.plan, prepared.planned, prepared.stored, prepared.existing
    keep, why_not, batch_note, model = prepared.keep, prepared.why_not, prepared.batch_note, prepared.model
    needed, bound, what = needed_bytes(plan)
    if budget is not None and needed > budget:
        why = ("no plan can fit: the lower bound is over the budget" if bound > budget
               else f"the lower bound {bound:,} B would fit; try another --strategy")
        raise BudgetExceeded(f"{model_path.name}: the plan needs {needed:,} B {what}, "
                             f"{needed - budget:,} B over the budget of {budget:,} B ({why})")
    figures = split_figures(plan, model) if specs is not None else None
    if specs is not None and overflow(model_path.name, specs, figures):
        raise RegionOverflow(overflow(model_path.name, specs, figures))
    notes: list[str] = []
    target_note, target_shown = None, None
    with staged_folder(out_dir) as folder:
        whats: dict[str, str] = {}
        runnable = runtime_model(plan, model, prefix, keep_offline_plan=keep)
        if runnable is not None:
            folder.add(runnable[0], runnable[1])
            whats[runnable[0]] = runnable[2]
        del runnable
        verification = None
        if verify and plan.runtime_arena is not None:  # the target's own TFLite Micro, when built
            plan, target_note, target_shown = verify_on_target(plan, model,
                                                               lambda: folder.read(f"{prefix}.tflite"))
        if plan.runtime_arena is not None:
            original = model.raw if stored.note else model_path  # the model TFLite Micro runs
            # verified as written: the offline-planned model read back from the temporary folder
            verification = (verify_package(original, folder.read(f"{prefix}.tflite"), plan, model) if verify
                            else skipped())
            plan = with_standing(plan, target_shown or verification.shown, verification.not_run)
        plan = with_regions(plan, specs, figures, model)  # their standing follows the whole arena's
        regions_note = None
        if verify and specs is not None:  # two buffers on the target's own TFLite Micro, when built
            plan, regions_note = verify_regions(plan, model, lambda: folder.read(f"{prefix}.tflite"))
        whats |= write_files(folder, plan, model, prefix, notes, planned.unmodelled_ops, keep_offline_plan=keep)
        if existing is not None:
            notes.insert(0, existing_plan_note(existing, plan.arena_bytes, keep, keep_offline_plan, why_not))
        if batch_note:
            notes.insert(0, batch_note)
        if stored.note:
            notes.insert(0, stored.note)
        if verification is not None:
            notes.insert(0, verification.line)
            if target_note:
                notes.insert(1, target_note)
            if regions_note:
                notes.insert(2 if target_note else 1, regions_note)
        if report:
            name = f"{prefix}_report.html"
            folder.add(name, report_html(planned, model, strategy, whole_arena_sentences(plan.runtime_arena)))
            whats[name] = "report: the plan as pictures (open in a browser)"
        # The plan JSON and its read-back (the run's peak) need only `plan`: every strategy's
        # plans and the model itself are let go first.
        del prepared, planned, model, stored, existing
        name = f"{prefix}_plan.json"
        folder.add(name, plan_json_file(plan, folder))
        whats[name] = PLAN_JSON_WHAT
        if set(folder.sizes) != set(names):  # only the names surveyed may land in DIR
            raise PlanError(f"wrote {sorted(folder.sizes)}, expected {sorted(names)} (a bug in file_names)")
        # A re-run into a used folder leaves exactly this run's files of ours beside the user's.
        earlier.check_unchanged(out_dir)
        paths = folder.commit(remove=earlier.stale)
    written = tuple(PackagedFile(p, folder.sizes[p.name], whats[p.name]) for p in paths)
    return PackageResult(plan, written, tuple(notes), out_dir, earlier.stale)
