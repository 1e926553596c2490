"""The packaged plan as a C header `<prefix>_plan.h`, for C99 and C++ embedded code.

Every table runs over ALL tensors of ALL subgraphs in global order (subgraphs concatenated, as in
TFLite Micro's OfflineMemoryAllocation), with -1 where a tensor has no place in an arena. The header
carries the lifetimes too, so code (and our test) can check the plan from the header alone.

With dynamic shapes the tables hold the largest sizes, and the header adds the symbols' bounds as
macros, each tensor's pass and the multi-pass plan; a static model's header has none of that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from packager.emit.c_text import block_comment, comment_text, identifier, int_rows
from packager.emit.encoded_blocks import encoded_in_blocks
from packager.kernels.tflm_offline_plan import INT32_MAX, offline_plan_of
from packager.errors import PlanError
from packager.model import Model
from packager.package.columns import tensor_columns
from packager.package.sidecar import SCRATCH, PackagePlan, end_to_end
from packager.semantics import SEMANTICS
from packager.plan.records import overhead_pct

NONE = -1


@dataclass
class _Rows:
    """Every tensor's line in every table: a list per column, in global tensor order."""
    offset: list[int]
    size: list[int]
    first: list[int]
    last: list[int]
    arena: list[int]
    alias_of: list[int]
    obj: list[int]
    pass_: list[int]  # dynamic shapes: the pass its size is known in
    multipass: list[int]  # dynamic shapes: its offset in the multi-pass plan
    note: list[str]

    @classmethod
    def empty(cls, count: int) -> "_Rows":
        return cls(*([NONE] * count for _ in range(9)), [""] * count)

    def __len__(self) -> int:
        return len(self.offset)


def _shape(shape: tuple[int, ...]) -> str:
    return "[" + ",".join(map(str, shape)) + "]"


def _rows(plan: PackagePlan, model: Model) -> tuple[_Rows, list[int], list[str]]:
    """Rows per global tensor, object sizes (objects numbered across arenas), scratch notes.
    Filled column by column from each offset plan's columns (package/columns.py): per-entry
    objects cost most of the header's time at 100,000 tensors."""
    base = [0]
    for sg in model.subgraphs:
        base.append(base[-1] + len(sg.tensors))
    rows = _Rows.empty(base[-1])
    rows.size = [0] * base[-1]
    object_sizes: list[int] = []
    scratch: list[str] = []
    for k, arena in enumerate(plan.arenas):
        first_object = len(object_sizes)
        object_sizes.extend(arena.objects.object_sizes)
        objects = dict(arena.objects.assignment)
        multipass = dict(arena.passes.offsets) if arena.passes else {}
        try:
            c = tensor_columns(arena.offsets)
        except OverflowError:
            raise PlanError("the plan does not fit the header's int32 offsets") from None
        index, first, last, size = (c[f].tolist() for f in ("index", "first_op", "last_op", "size"))
        offset, passes = c["offset"].tolist(), c["pass_"].tolist()
        glob = index if arena.inline else [base[s] + t for s, t in zip(c["subgraph"].tolist(), c["tensor"].tolist())]
        ids = {i: g for i, g, kind in zip(index, glob, c.kind) if kind != SCRATCH}
        for i, g, kind, o, f, l, s, a, p, e, name in zip(index, glob, c.kind, offset, first, last, size,
                                                          c.alias_of, passes, c.size_expr, c.name):
            if kind == SCRATCH:
                scratch.append(f"{name}: steps {f}..{l}, {s} B "
                               f"(planned at run time; the plan leaves room at offset {o})")
                continue
            g = ids[i]
            rows.offset[g], rows.size[g], rows.first[g], rows.last[g], rows.arena[g] = o, s, f, l, k
            owner = a if a is not None else i
            rows.obj[g] = first_object + objects[owner]
            if arena.passes:
                rows.pass_[g], rows.multipass[g] = p, multipass[owner]
            if a is not None:
                rows.alias_of[g] = ids[a]
                note = f"alias of {ids[a]}, steps {f}..{l}, {s} B"
            else:
                note = f"steps {f}..{l}, {s} B"
            rows.note[g] = note if p <= 0 else f"{note} (pass {p}: {e} B)"
        for p in arena.persistent:
            rows.note[base[p.subgraph] + p.tensor] = f"persistent, {p.size} B (kept out of the arena)"
    notes = rows.note
    for s, sg in enumerate(model.subgraphs):
        at = base[s]
        for t in sg.tensors:
            g = at + t.index
            status = notes[g] or ("constant" if t.is_constant else "not planned (dynamic or unused)")
            notes[g] = f"{g} sg{s}:{t.index} {t.name} {t.type}{_shape(t.shape)} {status}"
    return rows, object_sizes, scratch


def _kept_offsets(plan: PackagePlan, model: Model, rows: _Rows) -> bool:
    """A model that keeps its own OfflineMemoryAllocation runs with those offsets, not this
    plan's: the header's offsets (the table and the input/output macros) become the kept ones,
    so that what a device program reads is where TFLite Micro puts each tensor."""
    if plan.runtime_arena is None or not plan.runtime_arena.head_plan:
        return False
    offsets = offline_plan_of(model)
    if offsets is None or len(offsets) != len(rows):
        raise PlanError("the kept OfflineMemoryAllocation does not cover every tensor")
    for g, offset in enumerate(offsets):
        rows.offset[g] = offset if offset >= 0 else NONE
        if offset >= 0 and rows.size[g] == 0:  # planned by the kept plan only (Vela's scratch tensors)
            rows.note[g] += " (placed by the kept plan)"
    return True


def _io_names(model: Model, which: str) -> list[tuple[str, int]]:
    """(macro stem, tensor index) of the main subgraph's inputs or outputs, in interpreter order;
    named by the serving signature when it names them, else by the tensor's name."""
    indices = model.main.inputs if which == "inputs" else model.main.outputs
    sig = next((s for s in model.signature_defs if s.subgraph == 0), None)
    by_tensor = {t: n for n, t in (getattr(sig, which).items() if sig else ())}
    stems, out = set(), []
    for position, t in enumerate(indices):
        name = by_tensor.get(t) or model.main.tensors[t].name if t >= 0 else ""
        stem = identifier(name, fallback=which[:-1]).upper()
        if stem in stems:
            stem = f"{stem}_{position}"
        stems.add(stem)
        out.append((stem, t))
    return out


def render(plan: PackagePlan, model: Model, prefix: str) -> str:
    return "\n".join(render_lines(plan, model, prefix))


def render_chunks(plan: PackagePlan, model: Model, prefix: str) -> Iterator[bytes]:
    """render()'s text as ASCII bytes, a block at a time: the lines are made here, their text
    (11 MB at 100,000 tensors) is joined and encoded as it is written, never whole."""
    return encoded_in_blocks(_with_newlines(render_lines(plan, model, prefix)), encoding="ascii")


def _with_newlines(lines: list[str]) -> Iterator[str]:
    for i, line in enumerate(lines):
        if i:
            yield "\n"
        yield line


def render_lines(plan: PackagePlan, model: Model, prefix: str) -> list[str]:
    """The header's lines (render() joins them with newlines)."""
    P = prefix.upper()
    rows, object_sizes, scratch = _rows(plan, model)
    kept = _kept_offsets(plan, model, rows)
    if any(max(o, m) + s > INT32_MAX for o, m, s in zip(rows.offset, rows.multipass, rows.size)):
        raise PlanError("the plan does not fit the header's int32 offsets")
    arena_sizes = [a.offsets.arena_bytes for a in plan.arenas]
    bases = list(plan.arena_bases)
    inline = len(plan.arenas) == 1 and plan.arenas[0].inline
    out: list[str] = []
    out += block_comment([
        f"{prefix}_plan.h: the tensor memory plan of {plan.source.file}, written by {plan.generator}.",
        "Generated: do not edit; run `tflpack package` again instead.",
        f"Model sha256 {plan.source.sha256} ({plan.source.bytes} bytes).",
        f"Semantics {plan.semantics}, offsets multiples of {plan.alignment} B from the start of "
        + ("the arena (TFLite Micro's head), one arena for every subgraph." if inline
           else "each subgraph's arena; the arenas laid end to end start at "
                f"{P}_ARENA_BASES[arena]."),
        *[f"Arena {k} (subgraph {a.subgraph}): {a.offsets.arena_bytes} B by {a.offsets.strategy}, "
          f"lower bound {a.offsets.lower_bound} B (+{overhead_pct(a.offsets.arena_bytes, a.offsets.lower_bound)}%"
          + (", proven optimal: no offset plan is smaller); " if a.offsets.optimal else "); ") +
          f"shared objects {a.objects.total_bytes} B by {a.objects.strategy}, lower bound "
          f"{a.objects.lower_bound} B" + (" (optimal: no plan is smaller)." if a.objects.optimal else ".")
          for k, a in enumerate(plan.arenas)],
        "Steps: " + ("TFLite Micro allocation scopes (0: graph inputs; each op opens the next scope, "
                     "a control-flow op's subgraphs run inside it)." if inline
                     else "operator indices of the tensor's subgraph."),
    ])
    guard = f"{P}_PLAN_H_"
    out += ["", f"#ifndef {guard}", f"#define {guard}", "", "#include <stdint.h>", "",
            "#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
    out += [f"#define {P}_ARENA_BYTES {plan.arena_bytes}" + ("" if inline else "  /* all arenas end to end */"),
            f"#define {P}_ARENA_LOWER_BOUND {plan.lower_bound}",
            f"#define {P}_OFFSET_ALIGNMENT {plan.alignment}  /* every offset is a multiple of it */",
            f"#define {P}_ARENA_ALIGNMENT {max(plan.alignment, 16)}  /* of the arena's start */",
            f"#define {P}_ARENA_COUNT {len(plan.arenas)}",
            f"#define {P}_SUBGRAPH_COUNT {len(model.subgraphs)}",
            f"#define {P}_TENSOR_COUNT {len(rows)}",
            f"#define {P}_OBJECT_COUNT {len(object_sizes)}",
            f"#define {P}_OBJECTS_BYTES {sum(object_sizes)}", ""]
    if plan.is_dynamic:
        out += _symbol_macros(P, plan)
    out += _whole_arena_macros(P, plan.runtime_arena) if plan.runtime_arena else _arena_macro(P, plan.semantics)
    out += _io_macros(P, model, rows)
    out += ["/* Each arena's size and its start when the arenas are laid end to end. */",
            f"static const int32_t {P}_ARENA_SIZES[{P}_ARENA_COUNT] = {{", *int_rows(arena_sizes), "};",
            f"static const int32_t {P}_ARENA_BASES[{P}_ARENA_COUNT] = {{", *int_rows(bases), "};", ""]
    out += block_comment([
        "Byte offset of every tensor from the start of its arena, in TFLite Micro's convention: -1 for",
        "tensors with no place in an arena (constants, persistent variables, dynamic or unused ones).",
        "One line per tensor: global id, subgraph:index, name, type and shape, lifetime in steps, size.",
        *([f"The offsets are those of {plan.runtime_arena.head_plan}, kept in the model: the ones",
           f"TFLite Micro uses (its head is {P}_ARENA_HEAD_BYTES); this plan's own offsets, unused, are",
           "in the sidecar."]
          if kept else []),
    ])
    out.append(f"static const int32_t {P}_TENSOR_OFFSETS[{P}_TENSOR_COUNT] = {{")
    out += [f"    {o}, /* {comment_text(n)} */" for o, n in zip(rows.offset, rows.note)]
    out += ["};", ""]
    tables = [
        ("TENSOR_SIZES", "Planned bytes of each tensor (rounded as the runtime rounds); 0 when not planned.", rows.size),
        ("TENSOR_FIRST_OP", "First step (op or allocation scope, see above) each tensor is alive; -1 when not planned.", rows.first),
        ("TENSOR_LAST_OP", "Last step (inclusive) each tensor is alive; -1 when not planned.", rows.last),
        ("TENSOR_ARENA", "The arena each tensor lives in; -1 when not planned.", rows.arena),
        ("TENSOR_ALIAS_OF", "The tensor whose buffer each tensor shares (in-place ops); -1: its own.", rows.alias_of),
        ("TENSOR_OBJECTS", "Shared-object plan (texture runtimes): each tensor's object; -1 when not planned.", rows.obj),
    ]
    for name, doc, values in tables:
        out += _tensor_table(P, name, doc, values)
    if plan.is_dynamic:
        out += _multipass_tables(P, plan, rows)
    out += ["/* Size of each shared object. */",
            f"static const int32_t {P}_OBJECT_SIZES[{P}_OBJECT_COUNT > 0 ? {P}_OBJECT_COUNT : 1] = {{",
            *int_rows(object_sizes), "};", ""]
    if scratch:
        out += block_comment(["Scratch buffers the runtime's kernels request (not in the tables):", *scratch])
        out.append("")
    out += ["#ifdef __cplusplus", "}  /* extern \"C\" */", "#endif", "", f"#endif  /* {guard} */", ""]
    return out


def _symbol_macros(P: str, plan: PackagePlan) -> list[str]:
    """The symbols' bounds and the multi-pass plan's size, for a model with dynamic shapes."""
    passes = max(t.pass_ for a in plan.arenas for t in a.offsets.tensors) + 1
    sizes = [a.passes.arena_bytes for a in plan.arenas if a.passes]
    out = block_comment([
        "Dynamic shapes: the plan holds for every binding of the symbols inside these bounds (sizes",
        "and offsets above and below are at the largest). Pass 0: sizes fixed in the file; pass 1:",
        "known once the inputs are bound; each later pass: known after a data-dependent op runs.",
    ])
    out += [f"#define {P}_SYMBOL_COUNT {len(plan.symbols)}",
            f"#define {P}_PASS_COUNT {passes}  /* passes 0..{passes - 1}; a pass may hold no tensor */"]
    used: set[str] = set()
    for s in plan.symbols:
        stem = identifier(s.name, fallback="sym").upper()
        stem = stem if stem not in used else f"{stem}_{len(used)}"
        used.add(stem)
        kind = "data-dependent, " if s.data_dependent else ""
        out += [f"#define {P}_SYM_{stem}_MIN {s.min}  /* {comment_text(s.source)}, {kind}pass {s.pass_} */",
                f"#define {P}_SYM_{stem}_MAX {s.max}"]
    out += [f"#define {P}_MULTIPASS_ARENA_BYTES {end_to_end(sizes, plan.alignment)[1]}"
            "  /* the multi-pass plan, all arenas end to end */", ""]
    return out


def _multipass_tables(P: str, plan: PackagePlan, rows: _Rows) -> list[str]:
    sizes = [a.passes.arena_bytes if a.passes else 0 for a in plan.arenas]
    tables = [
        ("TENSOR_PASSES", "The pass each tensor's size is known in; -1 when not planned.", rows.pass_),
        ("MULTIPASS_OFFSETS", "Each tensor's offset in the multi-pass plan; -1 when not planned.",
         rows.multipass),
    ]
    out = [*block_comment([
        "The multi-pass plan: each pass placed with the earlier passes fixed, so a runtime may keep",
        "the offsets of the passes it knows and re-plan a later pass at the real sizes. Each arena's",
        "size in it, and its start when the arenas are laid end to end.",
    ]),
           f"static const int32_t {P}_MULTIPASS_ARENA_SIZES[{P}_ARENA_COUNT] = {{", *int_rows(sizes), "};",
           f"static const int32_t {P}_MULTIPASS_ARENA_BASES[{P}_ARENA_COUNT] = {{",
           *int_rows(end_to_end(sizes, plan.alignment)[0]), "};", ""]
    for name, doc, values in tables:
        out += _tensor_table(P, name, doc, values)
    return out


def _tensor_table(P: str, name: str, doc: str, values: list[int]) -> list[str]:
    return [f"/* {doc} */", f"static const int32_t {P}_{name}[{P}_TENSOR_COUNT] = {{", *int_rows(values), "};", ""]


def _arena_macro(P: str, semantics: str) -> list[str]:
    tail = SEMANTICS[semantics].runtime_tail or "whatever your runtime needs beyond the planned tensors"
    return [
        *block_comment([
            f"{P}_DECLARE_ARENA(name, section_name) declares `uint8_t name[{P}_TOTAL_ARENA_BYTES]`,",
            f"aligned to {P}_ARENA_ALIGNMENT bytes, in the linker section `section_name` (a string literal,",
            'e.g. ".bss.tensor_arena"; ignored by compilers other than GCC and Clang).',
            f"{P}_TOTAL_ARENA_BYTES is {P}_ARENA_BYTES plus {P}_TAIL_BYTES: define {P}_TAIL_BYTES before",
            f"including this header as {tail}.",
            "With a very small head, TFLite Micro also needs room for its set-up temporaries.",
            "C99 has no standard alignment syntax: GCC/Clang attributes are used, else C11/C++11 alignas.",
        ]),
        f"#ifndef {P}_TAIL_BYTES", f"#define {P}_TAIL_BYTES 0", "#endif",
        f"#define {P}_TOTAL_ARENA_BYTES ({P}_ARENA_BYTES + {P}_TAIL_BYTES)",
        "#if defined(__GNUC__) || defined(__clang__)",
        f"#define {P}_DECLARE_ARENA(name, section_name) \\",
        f"    uint8_t name[{P}_TOTAL_ARENA_BYTES] \\",
        f"        __attribute__((__aligned__({P}_ARENA_ALIGNMENT), __section__(section_name)))",
        "#elif defined(__cplusplus) && __cplusplus >= 201103L",
        f"#define {P}_DECLARE_ARENA(name, section_name) \\",
        f"    alignas({P}_ARENA_ALIGNMENT) uint8_t name[{P}_TOTAL_ARENA_BYTES]",
        "#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L",
        f"#define {P}_DECLARE_ARENA(name, section_name) \\",
        f"    _Alignas({P}_ARENA_ALIGNMENT) uint8_t name[{P}_TOTAL_ARENA_BYTES]",
        "#endif  /* otherwise: declare the arena yourself, aligned as above */",
        "",
    ]


def _declare_macro(P: str, size_macro: str) -> list[str]:
    return [
        "#if defined(__GNUC__) || defined(__clang__)",
        f"#define {P}_DECLARE_ARENA(name, section_name) \\",
        f"    uint8_t name[{size_macro}] \\",
        f"        __attribute__((__aligned__({P}_ARENA_ALIGNMENT), __section__(section_name)))",
        "#elif defined(__cplusplus) && __cplusplus >= 201103L",
        f"#define {P}_DECLARE_ARENA(name, section_name) \\",
        f"    alignas({P}_ARENA_ALIGNMENT) uint8_t name[{size_macro}]",
        "#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L",
        f"#define {P}_DECLARE_ARENA(name, section_name) \\",
        f"    _Alignas({P}_ARENA_ALIGNMENT) uint8_t name[{size_macro}]",
        "#endif  /* otherwise: declare the arena yourself, aligned as above */",
        "",
    ]


def _whole_arena_macros(P: str, arena) -> list[str]:
    """TFLite Micro's whole arena: the number to give MicroInterpreter, and its parts."""
    quality = ["Exact for this build: the smallest arena with which it sets the model up and runs it",
               "(16 bytes less fails)."]
    if not arena.exact:
        quality = [f"NOT EXACT: {arena.reason}; the arena may need more."]
    quality.append(f"{'Modelled, not measured' if arena.modelled else 'Figures'}: {arena.rule}.")
    binding = ("the set-up room" if arena.setup_bytes > arena.head_bytes + arena.tail_bytes
               else "head + tail")
    return [
        *block_comment([
            f"TFLite Micro's whole arena ({arena.runtime}, target {arena.target}):",
            f"give MicroInterpreter {P}_TENSOR_ARENA_BYTES bytes, starting on a 16-byte boundary.",
            (f"{P}_ARENA_HEAD_BYTES: the head, this plan (tensors and kernel scratch buffers);"
             if not arena.head_plan else
             f"{P}_ARENA_HEAD_BYTES: the head, {arena.head_plan} (kept in the model: TFLite Micro uses "
             f"its offsets, not this header's {P}_ARENA_BYTES plan);"),
            f"{P}_ARENA_TAIL_BYTES: the tail, TFLite Micro's persistent memory (its structs, every",
            "kernel's persistent buffers, variables, the input and output tensors);",
            f"{P}_ARENA_SETUP_BYTES: the arena TFLite Micro's planning step needs while it sets the",
            f"model up. {P}_TENSOR_ARENA_BYTES is the larger of head + tail and the set-up room,",
            f"rounded up to 16 (here: {binding}).",
            *quality,
            f"{P}_DECLARE_ARENA(name, section_name) declares `uint8_t name[{P}_TENSOR_ARENA_BYTES]`,",
            f"aligned to {P}_ARENA_ALIGNMENT bytes, in the linker section `section_name` (a string literal,",
            'e.g. ".bss.tensor_arena"; ignored by compilers other than GCC and Clang).',
            "C99 has no standard alignment syntax: GCC/Clang attributes are used, else C11/C++11 alignas.",
        ]),
        f"#define {P}_TENSOR_ARENA_BYTES {arena.arena_bytes}",
        f"#define {P}_ARENA_HEAD_BYTES {arena.head_bytes}",
        f"#define {P}_ARENA_TAIL_BYTES {arena.tail_bytes}",
        f"#define {P}_ARENA_SETUP_BYTES {arena.setup_bytes}",
        f"#define {P}_ARENA_EXACT {1 if arena.exact else 0}",
        f"#define {P}_TOTAL_ARENA_BYTES {P}_TENSOR_ARENA_BYTES",
        *_declare_macro(P, f"{P}_TENSOR_ARENA_BYTES"),
    ]


def _io_macros(P: str, model: Model, rows: _Rows) -> list[str]:
    out = ["/* The model's inputs and outputs (subgraph 0): <NAME> is the position the interpreter uses",
           "   (input(i) / output(i)), <NAME>_TENSOR the tensor's id in the tables below. */"]
    for which in ("inputs", "outputs"):
        names = _io_names(model, which)
        kind = which[:-1].upper()
        out.append(f"#define {P}_{kind}_COUNT {len(names)}")
        for position, (stem, t) in enumerate(names):
            tensor = model.main.tensors[t] if t >= 0 else None
            note = f" /* {comment_text(tensor.name)} {tensor.type}{_shape(tensor.shape)} */" if tensor else ""
            out += [f"#define {P}_{kind}_{stem} {position}{note}",
                    f"#define {P}_{kind}_{stem}_TENSOR {t}",
                    f"#define {P}_{kind}_{stem}_BYTES {(tensor.nbytes or 0) if tensor else 0}"]
    return out + [""]
