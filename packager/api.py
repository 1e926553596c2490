"""The library API: plan, package and compare a model from Python, the figures as plain dataclasses.

    from packager import api
    figures = api.plan("model.tflite")              # or the model's bytes
    figures.tflm.arena_bytes, figures.tflm.standing  # TFLite Micro's whole arena, and how sure it is
    api.package("model.tflite", "build/model")       # the files `tflpack package` writes
    api.package_shared(["a.tflite", "b.tflite"], "build/both")  # several models, one arena
    api.compare("model.tflite")                      # the real runtimes' arenas beside ours

Every figure is the one `tflpack package` states for the same model and options (`plan` plans
through the same code, packager/package/build.py's `prepare`, and writes nothing). Errors are
`packager.errors.PackagerError` with the one-line message the command line prints. docs/api.md.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence, Union

from packager.package.sidecar import PackagePlan
from packager.semantics import SEMANTICS, TFLM

ModelInput = Union[str, Path, bytes]

NOT_RUN = "planned only: nothing was run (package verifies)"


@dataclass(frozen=True)
class ArenaFigures:
    """One planned arena (the whole model for tflm; each subgraph for tflite)."""
    subgraph: int
    inline: bool  # control-flow subgraphs planned in the caller's arena
    arena_bytes: int  # the best plan's
    lower_bound: int  # no plan of these tensors is smaller
    strategy: str  # the planner that made the best plan
    objects_bytes: int  # the shared-object plan's total
    persistent_bytes: int  # kept apart from the arena


@dataclass(frozen=True)
class TflmArena:
    """TFLite Micro's whole arena: the number to give MicroInterpreter."""
    arena_bytes: int
    head_bytes: int  # the plan (non-persistent tensors and scratch buffers)
    tail_bytes: int  # persistent: TFLite Micro's structs and the kernels' buffers
    setup_bytes: int  # what TFLite Micro's set-up needs
    standing: str  # "exact" | "upper" | "lower" | "unknown": which side of the runtime's need (package/standing.py)
    reason: str  # one line: how it was shown exact, or why it lies on that side
    target: str  # "host", "cortex-m4", "armhf-linux", ...
    head_plan: str  # "" when the head is this plan; else whose plan is kept (the model's own)


@dataclass(frozen=True)
class Figures:
    source: str  # the model's file name
    sha256: str
    semantics: str
    alignment: int
    arena_bytes: int  # the best plan, every arena end to end
    lower_bound: int
    objects_bytes: int
    arenas: tuple[ArenaFigures, ...]
    tflm: TflmArena | None  # tflm semantics only


@dataclass(frozen=True)
class Packaged:
    figures: Figures
    files: tuple[Path, ...]  # every file written
    notes: tuple[str, ...]  # the lines `package` prints after `note:`
    removed: tuple[str, ...]  # an earlier run's files of ours this run removed


def figures_of(plan: PackagePlan) -> Figures:
    r = plan.runtime_arena
    return Figures(
        source=plan.source.file, sha256=plan.source.sha256, semantics=plan.semantics, alignment=plan.alignment,
        arena_bytes=plan.arena_bytes, lower_bound=plan.lower_bound, objects_bytes=plan.objects_bytes,
        arenas=tuple(ArenaFigures(a.subgraph, a.inline, a.offsets.arena_bytes, a.offsets.lower_bound,
                                  a.offsets.strategy, a.objects.total_bytes, a.persistent_bytes)
                     for a in plan.arenas),
        tflm=None if r is None else TflmArena(r.arena_bytes, r.head_bytes, r.tail_bytes, r.setup_bytes,
                                              r.bound, r.reason, r.target, r.head_plan))


def _read(model: ModelInput, name: str | None):
    """(the model, its file name) from a path or the model's bytes."""
    from packager.errors import PackagerError
    from packager.reader import parse_model, read_model
    if isinstance(model, (bytes, bytearray, memoryview)):
        return parse_model(bytes(model)), name or "model.tflite"
    if not isinstance(model, (str, Path)):
        raise PackagerError(f"a model is a path or its bytes, not {type(model).__name__}")
    return read_model(model), name or Path(model).name


def _check_semantics(semantics: str) -> None:
    from packager.errors import PackagerError
    if semantics not in SEMANTICS:
        raise PackagerError(f"unknown semantics '{semantics}' (choose from {', '.join(SEMANTICS)})")


def plan(model: ModelInput, *, semantics: str = TFLM.name, strategy: str = "best", dims: Sequence[str] = (),
         target: str = "host", name: str | None = None) -> Figures:
    """The figures `tflpack package` would state (default semantics tflm, as package's), validated,
    without writing anything. `dims`: --dim specs ("batch=1..8"); `name`: the file name to report
    when `model` is bytes."""
    from packager.package.build import prepare
    from packager.package.runtime_arena import with_standing
    _check_semantics(semantics)
    m, source = _read(model, name)
    planned = prepare(m, source, semantics, strategy, tuple(dims), target).plan
    return figures_of(with_standing(planned, None, NOT_RUN))


def package(model: ModelInput, out_dir: str | Path, *, semantics: str = TFLM.name, strategy: str = "best",
            budget: int | None = None, name: str | None = None, dims: Sequence[str] = (),
            report: bool = True, target: str = "host", verify: bool = False,
            keep_offline_plan: bool = False) -> Packaged:
    """`tflpack package`: writes the files into `out_dir` (all or none) and returns their figures.
    `verify=True` runs the packaged model on tflite-micro first, as the command does by default.
    Over `budget`: packager.package.build.BudgetExceeded (a PackagerError)."""
    from packager.package.build import package as package_model
    if isinstance(model, (bytes, bytearray, memoryview)):  # the packager reads a file: a private copy
        with tempfile.TemporaryDirectory(prefix="tflpack-api-") as tmp:
            path = Path(tmp) / f"{name or 'model'}.tflite"
            path.write_bytes(bytes(model))
            return package(path, out_dir, semantics=semantics, strategy=strategy, budget=budget, name=name,
                           dims=dims, report=report, target=target, verify=verify,
                           keep_offline_plan=keep_offline_plan)
    result = package_model(model, out_dir, semantics=semantics, strategy=strategy, budget=budget, name=name,
                           dims=tuple(dims), report=report, target=target, verify=verify,
                           keep_offline_plan=keep_offline_plan)
    return Packaged(figures_of(result.plan), tuple(f.path for f in result.files), result.notes, result.removed)


@dataclass(frozen=True)
class SharedModel:
    """One model's part of a shared arena, in set-up order."""
    source: str  # its file name
    prefix: str  # its files' and C names' prefix
    plan_bytes: int  # its plan: the head while it runs
    tail_bytes: int  # its own part of the stacked tail (the first's includes the allocator's objects)
    setup_bytes: int  # the arena its set-up needs, counted from the tails above it
    figures: Figures  # the model as packaged alone


@dataclass(frozen=True)
class SharedPackaged:
    """Several models in one TFLite Micro arena (`tflpack package A B ...`)."""
    name: str
    target: str
    arena_bytes: int  # the one figure: give MicroAllocator::Create this
    head_bytes: int  # the largest plan
    tail_bytes: int  # every model's tail, stacked
    binding: str  # "head + tail", or "set-up of model k" when that decides
    standing: str  # exact | upper | lower | unknown, as package states it
    reason: str
    models: tuple[SharedModel, ...]
    files: tuple[Path, ...]  # every file written: each model's and the shared ones
    notes: tuple[str, ...]


def package_shared(models: Sequence[str | Path], out_dir: str | Path, *, name: str | None = None,
                   strategy: str = "best", budget: int | None = None, report: bool = True, target: str = "host",
                   verify: bool = False, keep_offline_plan: bool = False) -> SharedPackaged:
    """`tflpack package A.tflite B.tflite ... -o DIR`: each model packaged as `package` packages one,
    then the one arena they share, set up in this order on one MicroAllocator and run one at a time
    (<name>_arena.h, <name>_op_resolver.h, <name>_arena.json; `name` default "shared"). `verify=True`
    runs each model alone and, when the shared-arena build is here, all of them sharing the arena."""
    from packager.package.shared_arena import package_shared as package_models
    from packager.errors import PackagerError
    if isinstance(models, (str, Path)) or not all(isinstance(m, (str, Path)) for m in models):
        raise PackagerError("package_shared takes a list of model paths")
    r = package_models(models, out_dir, name=name, strategy=strategy, budget=budget, report=report, target=target,
                       verify=verify, keep_offline_plan=keep_offline_plan)
    f = r.figure
    parts = tuple(SharedModel(source, prefix, part.head, tail, part.setup, figures_of(p.plan))
                  for source, prefix, part, tail, p in zip(r.sources, r.prefixes, f.models, f.tails, r.packages))
    files = tuple(x.path for p in r.packages for x in p.files) + tuple(x.path for x in r.files)
    return SharedPackaged(r.name, f.target, f.arena, f.head, f.tail, f.binding, r.standing.bound,
                          r.standing.reason, parts, files, r.notes)


def compare(model: str | Path, *, measure: bool = True):
    """`tflpack compare` on one model file: TFLite's and TFLite Micro's measured arenas (each in a
    child process) beside our predictions and the best plans; a
    packager.compare.comparison.ModelComparison (dataclasses all the way down)."""
    from packager.compare.comparison import compare_model
    from packager.errors import PackagerError
    if not isinstance(model, (str, Path)):
        raise PackagerError("compare runs the real runtimes on a file: give its path")
    return compare_model(Path(model), measure=measure)
