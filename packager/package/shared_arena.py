"""`package A.tflite B.tflite ... -o DIR`: several models in ONE TFLite Micro arena, set up in the given
order on one MicroAllocator (a MicroInterpreter each) and run one at a time.

    each model packaged as `package` packages one (its plan validated, its offline-planned .tflite run
    and checked alone, its files written)
        ->  the one figure, from the packaged models and their plans (kernels/tflm_shared_arena.py)
        ->  run on TFLite Micro's own code sharing one allocator, when that build is here
            (runtimes/tflm_shared.py): it must work in N and not in N - 16, and each model's outputs
            must equal its outputs alone; what it shows is the figure's standing (standing.py)
        ->  <name>_arena.h (the arena, each model's part, the set-up code),
            <name>_op_resolver.h (every model's operators, once) and <name>_arena.json
            (the figures, and a record of the files, so a later run knows them as its own)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Sequence

import packager
from packager.emit.c_text import block_comment, is_identifier
from packager.emit.json_text import dumps
from packager.errors import PackagerError
from packager.kernels.tflm_arena import X86_64_LINUX, target_named
from packager.kernels.tflm_shared_arena import DIFFER_FROM_HOST, SharedArena, predict_shared_arena
from packager.package import op_resolver
from packager.package.build import (BudgetExceeded, PackagedFile, PackageResult, default_prefix, file_names, package,
                                    prepare)
from packager.package.output_dir import staged_folder
from packager.package.regions import wheel_modelled
from packager.package.owned_files import SHARED_FILES, SHARED_FORMAT, refuse_to_replace_input, survey
from packager.package.standing import ARENA_STEP, UNKNOWN, Shown, Standing, decide, declare_words
from packager.package.verify import VerifyError
from packager.reader import read_model
from packager.runtimes import tflm_shared
from packager.semantics import TFLM

DEFAULT_NAME = "shared"


@dataclass(frozen=True)
class SharedResult:
    name: str
    figure: SharedArena
    standing: Standing
    prefixes: tuple[str, ...]  # each model's prefix, in set-up order
    sources: tuple[str, ...]  # each model's file name
    packages: tuple[PackageResult, ...]  # each model as packaged alone
    files: tuple[PackagedFile, ...]  # the shared files
    notes: tuple[str, ...]
    out_dir: Path
    record: dict  # the figures as <name>_arena.json holds them
    removed: tuple[str, ...] = ()


def _prefixes(paths: Sequence[Path], name: str) -> list[str]:
    prefixes = [default_prefix(p) for p in paths]
    for i, p in enumerate(prefixes):
        if p in prefixes[:i]:
            raise PackagerError(f"two models would be packaged as '{p}' ({paths[prefixes.index(p)].name} and "
                                f"{paths[i].name}): give each a file name of its own")
    if name in prefixes:
        raise PackagerError(f"--name '{name}' is also a model's prefix: choose another --name")
    return prefixes


def _run_shared(figure: SharedArena, models: list, heads: list[int], packed: list[Path]
                ) -> tuple[Shown | None, str, str]:
    """(what the shared build showed of `figure`, or None; why nothing settled it, or ""; the line to
    print). The build here is the x86_64-linux target's (TFLite Micro's sources): it runs the figure
    the same rules give for its own structure sizes, which is the host figure itself when no model
    runs an operator whose memory differs between the two builds."""
    exe = tflm_shared.program()
    if exe is None:
        why = f"no shared-arena build here: bash .ci/build_tflm_shared.sh, or set {tflm_shared.ENV}"
        return None, why, f"not run sharing one arena on TFLite Micro ({why})"
    built = figure if figure.target == X86_64_LINUX.name else predict_shared_arena(models, heads, X86_64_LINUX)
    n = built.arena
    at = tflm_shared.run(exe, packed, n)
    if not at.fits:
        if not tflm_shared.run(exe, packed, tflm_shared.ARENA_MAX).fits:
            why = f"the shared-arena build does not run these models ({at.said})"
            return None, why, f"not run sharing one arena on TFLite Micro: {why}"
        raise VerifyError(f"the models do not run in {n:,} B sharing one arena on {tflm_shared.RUNTIME} "
                          f"({at.said})")
    for path, outputs in zip(packed, at.outputs):
        alone = tflm_shared.run(exe, [path], tflm_shared.ARENA_MAX)
        if not alone.fits or alone.outputs[0] != outputs:
            raise VerifyError(f"{path.name}'s outputs sharing the arena differ from its outputs alone on "
                              f"{tflm_shared.RUNTIME}")
    below = tflm_shared.run(exe, packed, n - ARENA_STEP).fits
    if below and built.side == "exact":
        raise VerifyError(f"the models also run in {n - ARENA_STEP:,} B sharing one arena on {tflm_shared.RUNTIME}: "
                          f"the rules' {n:,} B is not the smallest")
    ran = (f"runs in {n:,} B and in 16 B less too" if below else f"runs in {n:,} B and not in 16 B less")
    differ = sorted({op.name for m in models for sg in m.subgraphs for op in sg.operators} & DIFFER_FROM_HOST)
    if figure.target == X86_64_LINUX.name or (not differ and figure.target == "host"):
        return (Shown(figure.target, tflm_shared.RUNTIME, n, True, below), "",
                f"run sharing one arena on {tflm_shared.RUNTIME}: {ran}, each model's outputs the same as alone")
    if figure.target == "host":
        # The wheel cannot share an allocator from Python: its figure is the rule proven on x86_64-linux,
        # with the wheel's own measured sizes; no run shows either side of it.
        return None, wheel_modelled(differ), (f"run sharing one arena on {tflm_shared.RUNTIME} (x86_64-linux's "
                                              f"figure, {n:,} B): {ran}, each model's outputs the same as alone")
    why = f"no {figure.target} build here runs models sharing an arena"
    return None, why, f"not run sharing one arena on the target's build: {why}"


def header_text(name: str, figure: SharedArena, standing: Standing, prefixes: Sequence[str],
                sources: Sequence[str]) -> bytes:
    P, n = name.upper(), len(prefixes)
    lines = block_comment([
        f"{name}_arena.h, written by tflpack: {declare_words(standing.bound, figure.arena)} of TFLite "
        f"Micro arena for {n} models sharing it ({standing.bound}: {standing.reason}).",
        f"Set up in this order on ONE tflite::MicroAllocator, a MicroInterpreter each, and run one at a time "
        f"(running one overwrites the others' tensors): {', '.join(sources)}.",
        f"Largest plan {figure.head:,} B + every model's persistent tail {figure.tail:,} B"
        + (f"; the {figure.binding} decides" if figure.binding != "head + tail" else "") + ".",
        "",
        f"    {P}_DECLARE_ARENA({name}_arena, \".bss.tensor_arena\");  // at file scope",
        f"    tflite::MicroAllocator* allocator = tflite::MicroAllocator::Create({name}_arena, {P}_TENSOR_ARENA_BYTES);",
        f"    static {name}_op_resolver resolver;  // {name}_op_resolver.h",
        f"    if ({name}_register_ops(resolver) != kTfLiteOk) return;",
        *[f"    static tflite::MicroInterpreter {p}_interpreter(tflite::GetModel({p}_model), resolver, allocator);"
          f"  // {k + 1}." for k, p in enumerate(prefixes)],
        *[f"    if ({p}_interpreter.AllocateTensors() != kTfLiteOk) return;" for p in prefixes],
        "",
        "A model with VAR_HANDLE ops also gets `tflite::MicroResourceVariables::Create(allocator, count)`,",
        "made just before its interpreter and passed to it: the figure counts it there.",
        "Each model's plan is its own OfflineMemoryAllocation (<prefix>.tflite, <prefix>_model.c).",
    ])
    guard = f"{P}_ARENA_H_"
    lines += [f"#ifndef {guard}", f"#define {guard}", "", "#include <stdint.h>", "",
              f"#define {P}_TENSOR_ARENA_BYTES {figure.arena}",
              f"#define {P}_ARENA_EXACT {int(standing.exact)}",
              f"#define {P}_ARENA_HEAD_BYTES {figure.head}  /* the largest plan: the head every model reuses */",
              f"#define {P}_ARENA_TAIL_BYTES {figure.tail}  /* every model's persistent memory, stacked */",
              f"#define {P}_ARENA_ALIGNMENT 16",
              f"#define {P}_MODEL_COUNT {n}", ""]
    for k, (p, source, part, tail) in enumerate(zip(prefixes, sources, figure.models, figure.tails)):
        Q = f"{P}_{p.upper()}"
        lines += [f"/* {k + 1}. {source} ({p}_model.h): its plan, its part of the tail, the arena its set-up needs */",
                  f"#define {Q}_PLAN_BYTES {part.head}", f"#define {Q}_TAIL_BYTES {tail}",
                  f"#define {Q}_SETUP_BYTES {part.setup}", ""]
    lines += [
        "#if defined(__GNUC__) || defined(__clang__)",
        f"#define {P}_DECLARE_ARENA(name, section_name) \\",
        f"    uint8_t name[{P}_TENSOR_ARENA_BYTES] \\",
        f"        __attribute__((__aligned__({P}_ARENA_ALIGNMENT), __section__(section_name)))",
        "#elif defined(__cplusplus) && __cplusplus >= 201103L",
        f"#define {P}_DECLARE_ARENA(name, section_name) \\",
        f"    alignas({P}_ARENA_ALIGNMENT) uint8_t name[{P}_TENSOR_ARENA_BYTES]",
        "#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L",
        f"#define {P}_DECLARE_ARENA(name, section_name) \\",
        f"    _Alignas({P}_ARENA_ALIGNMENT) uint8_t name[{P}_TENSOR_ARENA_BYTES]",
        "#endif  /* otherwise: declare the arena yourself, aligned as above */",
        "", f"#endif /* {guard} */", ""]
    return "\n".join(lines).encode("ascii")


def record_doc(name: str, figure: SharedArena, standing: Standing, not_run: str, prefixes: Sequence[str],
               sources: Sequence[str]) -> dict:
    """The figures <name>_arena.json holds (and `package --json` prints), without its record of files."""
    return {
        "format": SHARED_FORMAT, "format_version": 1, "generator": f"tflpack {packager.__version__}",
        "name": name, "target": figure.target, "arena_bytes": figure.arena, "bound": standing.bound,
        "reason": standing.reason, "not_run": not_run, "head_bytes": figure.head, "tail_bytes": figure.tail,
        "binding": figure.binding,
        "models": [{"file": s, "prefix": p, "plan_bytes": m.head, "tail_bytes": t, "setup_bytes": m.setup}
                   for s, p, m, t in zip(sources, prefixes, figure.models, figure.tails)],
    }


def record_json(doc: dict, files: dict[str, tuple[str, int]]) -> bytes:
    files_list = [{"name": n, "sha256": h, "bytes": b} for n, (h, b) in sorted(files.items())]
    return (dumps({**doc, "files": files_list}) + "\n").encode("utf-8")


def package_shared(model_paths: Sequence[str | Path], out_dir: str | Path, name: str | None = None,
                   strategy: str = "best", budget: int | None = None, report: bool = True, target: str = "host",
                   verify: bool = False, keep_offline_plan: bool = False) -> SharedResult:
    paths, out_dir = [Path(p) for p in model_paths], Path(out_dir)
    name = DEFAULT_NAME if name is None else name
    if not is_identifier(name):
        raise PackagerError(f"--name '{name}' is not a C identifier (letters, digits, '_'; not starting with a digit)")
    prefixes = _prefixes(paths, name)
    shared_names = [pattern.format(name) for pattern in SHARED_FILES]
    taken = {f for p in prefixes for f in file_names(p, TFLM.name, report)}
    if taken & set(shared_names):
        raise PackagerError(f"--name '{name}': its files would be a model's; choose another --name")
    key = Path("+".join(p.name for p in paths))  # the record's source: this list of models
    for path in paths:
        refuse_to_replace_input(path, out_dir, shared_names)
    tflm_target = target_named(target)
    if budget is not None:  # refused before anything is written, as for one model
        ready = [prepare(read_model(p), p.name, TFLM.name, strategy, (), target, keep_offline_plan) for p in paths]
        early = predict_shared_arena([r.model for r in ready], [r.plan.runtime_arena.head_bytes for r in ready],
                                     tflm_target)
        if early.arena > budget:
            raise BudgetExceeded(f"the {len(paths)} models need {early.arena:,} B of shared TFLite Micro arena, "
                                 f"{early.arena - budget:,} B over the budget of {budget:,} B")
    survey(out_dir, shared_names, key)  # a user's file in the way: refused before anything is written
    packages = tuple(package(p, out_dir, semantics=TFLM.name, strategy=strategy, name=prefix, report=report,
                             target=target, verify=verify, keep_offline_plan=keep_offline_plan)
                     for p, prefix in zip(paths, prefixes))
    packed = [out_dir / f"{p}.tflite" for p in prefixes]
    models = [read_model(p) for p in packed]
    figure = predict_shared_arena(models, [r.plan.runtime_arena.head_bytes for r in packages], tflm_target)
    if not verify:
        shown, not_run, line = None, "--no-verify", "not run sharing one arena on TFLite Micro (--no-verify)"
    else:
        shown, not_run, line = _run_shared(figure, models, [r.plan.runtime_arena.head_bytes for r in packages],
                                           packed)
    modelled_as = (f"from {tflm_target.name}'s 32-bit structure sizes"
                   if tflm_target.name not in ("host", X86_64_LINUX.name) else "")
    if not_run.startswith("modelled: proven on x86_64-linux") and figure.side == "exact":
        standing = Standing(UNKNOWN, not_run)  # the rule's side is none: the wheel's sizes are measured
    else:
        standing = decide(figure.arena, figure.target, figure.side, figure.why_inexact, shown, not_run, modelled_as)
    sources = tuple(p.name for p in paths)
    earlier = survey(out_dir, shared_names, key)  # again: the models' own files have just changed
    resolver_source = SimpleNamespace(subgraphs=[sg for m in models for sg in m.subgraphs])
    with staged_folder(out_dir) as folder:
        header, resolver, record = shared_names[1], shared_names[2], shared_names[0]
        folder.add(header, header_text(name, figure, standing, prefixes, sources))
        folder.add(resolver, op_resolver.render(resolver_source, name, " + ".join(sources)))
        files = {n: (hashlib.sha256(folder.read(n)).hexdigest(), folder.sizes[n]) for n in (header, resolver)}
        doc = record_doc(name, figure, standing, not_run, prefixes, sources)
        folder.add(record, record_json(doc, files))
        earlier.check_unchanged(out_dir)
        written = folder.commit(remove=earlier.stale)
    whats = {shared_names[0]: "the shared arena's figures and a record of these files (JSON)",
             shared_names[1]: "C header: one arena for every model, each model's part, the set-up code",
             shared_names[2]: "C++ op resolver: every model's operators, once"}
    files_out = tuple(PackagedFile(p, folder.sizes[p.name], whats[p.name]) for p in written)
    notes = [line] + [f"{r.plan.source.file}: {r.notes[0]}" for r in packages if r.notes]
    return SharedResult(name, figure, standing, tuple(prefixes), sources, packages, files_out, tuple(notes),
                        out_dir, doc, earlier.stale)
