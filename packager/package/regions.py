"""`package --regions`: TFLite Micro's memory split over two buffers in two memory regions, as
`MicroAllocator::Create(persistent, P, non_persistent, NP)` takes it.

    --regions non-persistent=SECTION:SIZE,persistent=SECTION:SIZE

The non-persistent buffer holds the head (the plan: every activation, read and written by each
inference) and the temporaries TFLite Micro takes while it sets the model up; the persistent one
holds the tail (its structs, kernels' persistent buffers, variables, the input and output
tensors). SECTION is the linker section the header declares the buffer in (the linker script
maps it to a memory region); SIZE is what that region offers (bytes, or 64K, 1M), for the fit
verdict. Each figure comes from kernels/tflm_regions.py; exit 3 when a part does not fit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from packager.emit.c_text import block_comment
from packager.errors import PackagerError
from packager.kernels import tflm_arena
from packager.kernels.tflm_arena import X86_64_LINUX, target_named
from packager.kernels.tflm_shared_arena import DIFFER_FROM_HOST
from packager.kernels.tflm_regions import Split, predict_split
from packager.model import Model
from packager.package.sidecar import PackagePlan, Region
from packager.package.standing import EXACT, LOWER, SIDE_WORDS, UNKNOWN

NON_PERSISTENT, PERSISTENT = "non-persistent", "persistent"
PARTS = (NON_PERSISTENT, PERSISTENT)
WHAT = {NON_PERSISTENT: "head and set-up temporaries", PERSISTENT: "tail: TFLite Micro's persistent memory"}
SYNTAX = "non-persistent=SECTION:SIZE,persistent=SECTION:SIZE (e.g. non-persistent=.dtcm:64K,persistent=.sram:512K)"
_SECTION = re.compile(r"[A-Za-z0-9_.$]+")  # a section name a C string and a linker script both take
_SIZE = re.compile(r"(\d+)([kKmM]?)(?:i?[bB])?")


@dataclass(frozen=True)
class RegionSpec:
    part: str
    section: str
    capacity: int


def parse_regions(text: str) -> tuple[RegionSpec, RegionSpec]:
    """The two regions `--regions` names, non-persistent first; PackagerError in one line."""
    given: dict[str, RegionSpec] = {}
    for item in text.split(","):
        part, eq, rest = item.strip().partition("=")
        section, colon, size = rest.rpartition(":")
        m = _SIZE.fullmatch(size.strip())
        if not eq or part not in PARTS or not colon or not _SECTION.fullmatch(section) or m is None:
            raise PackagerError(f"--regions '{text}': expected {SYNTAX}")
        if part in given:
            raise PackagerError(f"--regions '{text}': {part} is given twice")
        scale = {"": 1, "k": 1 << 10, "m": 1 << 20}[m.group(2).lower()]
        given[part] = RegionSpec(part, section, int(m.group(1)) * scale)
    missing = [p for p in PARTS if p not in given]
    if missing:
        raise PackagerError(f"--regions '{text}': the {missing[0]} region is missing: give both, {SYNTAX}")
    return given[NON_PERSISTENT], given[PERSISTENT]


def split(plan: PackagePlan, model: Model) -> Split:
    """The two figures for the packaged model (its head: the plan, or a kept offline plan)."""
    arena = plan.runtime_arena
    if arena is None:
        raise PackagerError(f"--regions: the {plan.semantics} semantics has no TFLite Micro arena to split "
                            "(use --semantics tflm)")
    return predict_split(model, target_named(arena.target), head=arena.head_bytes)


def overflow(source: str, specs: tuple[RegionSpec, RegionSpec], figures: Split) -> str | None:
    """One line naming every region a part does not fit (None: both fit)."""
    over = [f"the {s.part} part needs {n:,} B in {s.section}, {n - s.capacity:,} B over its {s.capacity:,} B"
            for s, n in zip(specs, (figures.non_persistent, figures.persistent)) if n > s.capacity]
    return f"{source}: {'; '.join(over)}" if over else None


def regions(plan: PackagePlan, specs: tuple[RegionSpec, RegionSpec], figures: Split,
            model: Model | None = None) -> tuple[Region, Region]:
    """The two regions with their standing, once the whole arena's is settled: exact when the
    whole arena was shown exact on the host or x86_64-linux build (the two-buffer rule is shown
    exact on x86_64-linux, every model of the test suite; package/regions_verify.py runs it there);
    a lower bound when a kernel's memory is not modelled; else not proven either way. The host
    figure of a model with FULLY_CONNECTED is modelled: the wheel's parameters are larger than
    those of the build the rule is proven on."""
    arena = plan.runtime_arena
    differ = sorted({op.name for sg in model.subgraphs for op in sg.operators} & DIFFER_FROM_HOST) if model else []
    if figures.unmodelled:
        bound, reason = LOWER, (f"the memory of TFLite Micro's {', '.join(figures.unmodelled)} kernel(s) is "
                                "not modelled (the runtime may need more)")
    elif arena.target == "host" and differ and arena.bound == EXACT:
        bound, reason = UNKNOWN, wheel_modelled(differ)
    elif arena.target in ("host", X86_64_LINUX.name) and arena.bound == EXACT:
        bound, reason = EXACT, (f"the whole arena shown exact ({arena.reason}); split by the two-buffer rule, "
                                "which TFLite Micro's x86-64 library shows exact, each buffer, on every model "
                                "of the test suite")
    elif arena.target in ("host", X86_64_LINUX.name):
        bound, reason = UNKNOWN, f"the whole arena is not shown exact: {arena.reason}"
    else:
        bound, reason = UNKNOWN, (f"the two-buffer rule is measured on the host build; {arena.target}'s "
                                  "figures are modelled from its structure sizes")
    return tuple(Region(s.part, s.section, s.capacity, n, bound, reason)
                 for s, n in zip(specs, (figures.non_persistent, figures.persistent)))


def wheel_modelled(differ: list[str]) -> str:
    """Why a host (wheel) figure of a model running `differ` is modelled, in one short line."""
    return f"modelled: proven on x86_64-linux, whose {', '.join(differ)} parameters are smaller than the wheel's"


def with_regions(plan: PackagePlan, specs: tuple[RegionSpec, RegionSpec] | None, figures: Split | None,
                 model: Model | None = None) -> PackagePlan:
    return plan if specs is None else replace(plan, regions=regions(plan, specs, figures, model))


def verdict(r: Region) -> str:
    if r.fits:
        return f"fits, {r.capacity - r.bytes:,} B free"
    return f"DOES NOT FIT, {r.bytes - r.capacity:,} B over"


def summary_lines(plan: PackagePlan) -> list[str]:
    lines = []
    for r in plan.regions:
        lines.append(f"  {r.part} buffer ({WHAT[r.part]}): {r.bytes:,} B in {r.section} of {r.capacity:,} B: "
                     f"{verdict(r)}")
    if plan.regions:
        lines.append(f"    two buffers: {SIDE_WORDS[plan.regions[0].bound]}: {plan.regions[0].reason}")
    return lines


def summary_json(plan: PackagePlan) -> dict:
    return {"regions": [{"part": r.part, "section": r.section, "capacity": r.capacity, "bytes": r.bytes,
                         "fits": r.fits, "bound": r.bound, "reason": r.reason} for r in plan.regions]}


def header_lines(P: str, prefix: str, plan: PackagePlan, model: Model) -> list[str]:
    """The header's two-buffer block: each buffer's figure and section, the macros declaring them,
    and the lines that create the allocator and the interpreter over them."""
    non, per = plan.regions
    variables = tflm_arena.resource_variable_count(model)
    create = ["tflite::MicroAllocator* allocator = tflite::MicroAllocator::Create(",
              f"    {prefix}_persistent_arena, {P}_PERSISTENT_BYTES,",
              f"    {prefix}_non_persistent_arena, {P}_NON_PERSISTENT_BYTES);"]
    if variables:
        create += ["tflite::MicroResourceVariables* variables =",
                   f"    tflite::MicroResourceVariables::Create(allocator, {P}_RESOURCE_VARIABLES);",
                   f"tflite::MicroInterpreter interpreter(tflite::GetModel({prefix}_model), resolver, allocator, "
                   "variables);"]
    else:
        create.append(f"tflite::MicroInterpreter interpreter(tflite::GetModel({prefix}_model), resolver, allocator);")
    lines = block_comment([
        f"TFLite Micro's memory in two buffers (package --regions; target {plan.runtime_arena.target}), for",
        "MicroAllocator::Create(persistent, P, non_persistent, NP) instead of one arena:",
        f"{P}_NON_PERSISTENT_BYTES: {WHAT[NON_PERSISTENT]}, in {non.section}",
        f"(capacity {non.capacity}: {verdict(non)});",
        f"{P}_PERSISTENT_BYTES: {WHAT[PERSISTENT]}, in {per.section}",
        f"(capacity {per.capacity}: {verdict(per)}).",
        f"{P}_REGIONS_BOUND: {SIDE_WORDS[non.bound]}: {non.reason}.",
        "At file scope:",
        f"    {P}_DECLARE_NON_PERSISTENT_ARENA({prefix}_non_persistent_arena);",
        f"    {P}_DECLARE_PERSISTENT_ARENA({prefix}_persistent_arena);",
        f"then, with {prefix}_model.h and {prefix}_op_resolver.h (resolver: a {prefix}_op_resolver"
        f" after {prefix}_register_ops):",
        *[f"    {line}" for line in create],
        "then AllocateTensors() and Invoke() as with one arena.",
    ])
    lines += [f"#define {P}_NON_PERSISTENT_BYTES {non.bytes}",
              f'#define {P}_NON_PERSISTENT_SECTION "{non.section}"',
              f"#define {P}_NON_PERSISTENT_CAPACITY {non.capacity}",
              f"#define {P}_PERSISTENT_BYTES {per.bytes}",
              f'#define {P}_PERSISTENT_SECTION "{per.section}"',
              f"#define {P}_PERSISTENT_CAPACITY {per.capacity}",
              f'#define {P}_REGIONS_BOUND "{non.bound}"']
    if variables:
        lines.append(f"#define {P}_RESOURCE_VARIABLES {variables}  /* distinct VAR_HANDLE shared names */")
    for part in ("NON_PERSISTENT", "PERSISTENT"):
        lines += ["#if defined(__GNUC__) || defined(__clang__)",
                  f"#define {P}_DECLARE_{part}_ARENA(name) \\",
                  f"    uint8_t name[{P}_{part}_BYTES] \\",
                  f"        __attribute__((__aligned__(16), __section__({P}_{part}_SECTION)))",
                  "#elif defined(__cplusplus) && __cplusplus >= 201103L  /* the section is then yours to place */",
                  f"#define {P}_DECLARE_{part}_ARENA(name) alignas(16) uint8_t name[{P}_{part}_BYTES]",
                  "#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L",
                  f"#define {P}_DECLARE_{part}_ARENA(name) _Alignas(16) uint8_t name[{P}_{part}_BYTES]",
                  "#endif"]
    return lines + [""]
