"""The packaged plan as a C header `<prefix>_plan.h`, for C99 and C++ embedded code.

Every table runs over ALL tensors of ALL subgraphs in global order (subgraphs concatenated, as in
TFLite Micro's OfflineMemoryAllocation), with -1 where a tensor has no place in an arena. The header
carries the lifetimes too, so code (and our test) can check the plan from the header alone.

With dynamic shapes the tables hold the largest sizes, and the header adds the symbols' bounds as
macros, each tensor's pass and the multi-pass plan; a static model's header has none of that.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Iterator

import numpy as np

from packager.emit.c_text import block_comment, comment_text, identifier, int_rows, int_rows_text
from packager.emit.text_matrix import choice, decimal, fixed, lines_text, only, strings
from packager.emit.encoded_blocks import encoded_in_blocks
from packager.kernels.tflm_offline_plan import INT32_MAX, offline_plan_of
from packager.errors import PlanError
from packager.model import Model
from packager.package import regions
from packager.package.sidecar import SCRATCH, PackagePlan, end_to_end
from packager.package.standing import SIDE_WORDS
from packager.semantics import SEMANTICS
from packager.plan.records import overhead_pct

NONE = -1


@dataclass
class _Rows:
    """Every tensor's line in every table: a numpy column per number, in global tensor order, and
    what its comment is made from (made as its line is written, never held for every tensor)."""
    offset: np.ndarray
    size: np.ndarray
    first: np.ndarray
    last: np.ndarray
    arena: np.ndarray
    alias_of: np.ndarray
    obj: np.ndarray
    pass_: np.ndarray  # dynamic shapes: the pass its size is known in
    multipass: np.ndarray  # dynamic shapes: its offset in the multi-pass plan
    # The comment: 1 planned (from the columns below), 2 persistent (its text), 0 neither.
    note_kind: np.ndarray
    note_alias: np.ndarray  # the tensor a planned tensor's note names as its buffer's owner, -1: none
    note_pass: np.ndarray  # the pass a planned tensor's note names (> 0 only)
    note_size_expr: dict[int, str | None]  # global id -> its size's expression, where note_pass > 0
    persistent_notes: dict[int, str]
    kept_only: np.ndarray  # bool: placed by a kept OfflineMemoryAllocation only

    @classmethod
    def empty(cls, count: int) -> "_Rows":
        column = lambda value=NONE: np.full(count, value, dtype=np.int64)  # noqa: E731
        return cls(column(), column(0), column(), column(), column(), column(), column(), column(), column(),
                   np.zeros(count, dtype=np.int8), column(), column(0), {}, {}, np.zeros(count, dtype=bool))

    def __len__(self) -> int:
        return len(self.offset)


def _shape(shape: tuple[int, ...]) -> str:
    return "[" + ",".join(map(str, shape)) + "]"


def _lookup(keys: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """values[keys == k] for each k in `at` (a dict's lookups, whole columns at once); a key
    that is missing is a bug in the plan, as a dict's KeyError was."""
    if not len(at):
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    # the last of equal keys wins, as in a dict built in order
    where = np.searchsorted(sorted_keys, at, side="right") - 1
    if (where < 0).any() or (sorted_keys[np.maximum(where, 0)] != at).any():
        raise KeyError("a tensor id the plan does not have")
    return values[order[where]]


def _pairs(pairs: tuple[tuple[int, int], ...]) -> tuple[np.ndarray, np.ndarray]:
    # from one flat iterator: np.array of 100,000 small tuples costs twice as much
    flat = np.fromiter(chain.from_iterable(pairs), dtype=np.int64, count=2 * len(pairs)).reshape(-1, 2)
    return flat[:, 0], flat[:, 1]


def _rows(plan: PackagePlan, model: Model) -> tuple[_Rows, list[int], list[str]]:
    """Rows per global tensor, object sizes (objects numbered across arenas), scratch notes.
    Filled column by column from each offset plan's columns (package/columns.py): per-entry
    objects cost most of the header's time at 100,000 tensors."""
    base = [0]
    for sg in model.subgraphs:
        base.append(base[-1] + len(sg.tensors))
    rows = _Rows.empty(base[-1])
    object_sizes: list[int] = []
    scratch: list[str] = []
    for k, arena in enumerate(plan.arenas):
        first_object = len(object_sizes)
        object_sizes.extend(arena.objects.object_sizes)
        c = arena.offsets.tensors
        index, first, last, size, offset, passes = (c[f] for f in ("index", "first_op", "last_op", "size",
                                                                     "offset", "pass_"))
        is_scratch = np.fromiter((kind == SCRATCH for kind in c.kind), dtype=bool, count=c.count)
        for i in np.flatnonzero(is_scratch).tolist():
            scratch.append(f"{c.name[i]}: steps {first[i]}..{last[i]}, {size[i]} B "
                           f"(planned at run time; the plan leaves room at offset {offset[i]})")
        m = ~is_scratch
        if arena.inline:
            glob = index[m]
        else:
            glob = np.asarray(base, dtype=np.int64)[c["subgraph"][m]] + c["tensor"][m]
        g = _lookup(index[m], glob, index[m])  # ids[i]: the last entry of an id names its row
        alias = c.alias_of[m]  # NONE (-1) where none, as the columns hold it
        has_alias = alias != NONE
        owner = np.where(has_alias, alias, index[m])
        rows.offset[g], rows.size[g], rows.first[g], rows.last[g] = offset[m], size[m], first[m], last[m]
        rows.arena[g] = k
        rows.obj[g] = first_object + _lookup(*_pairs(arena.objects.assignment), owner)
        if arena.passes:
            rows.pass_[g] = passes[m]
            rows.multipass[g] = _lookup(*_pairs(arena.passes.offsets), owner)
        alias_ids = _lookup(index[m], glob, alias[has_alias])
        rows.alias_of[g[has_alias]] = alias_ids
        rows.note_alias[g] = NONE
        rows.note_alias[g[has_alias]] = alias_ids
        rows.note_pass[g] = passes[m]
        rows.note_kind[g] = 1
        for at, j in zip(g[passes[m] > 0].tolist(), np.flatnonzero(m)[passes[m] > 0].tolist()):
            rows.note_size_expr[at] = c.size_expr[j]
        for p in arena.persistent:
            at = base[p.subgraph] + p.tensor
            rows.note_kind[at] = 2
            rows.persistent_notes[at] = f"persistent, {p.size} B (kept out of the arena)"
    return rows, object_sizes, scratch


_BLOCK = 16384  # rows of the offsets table made at a time (a matrix of about 2 MB)


def _offset_blocks(model: Model, rows: _Rows) -> Iterator[str]:
    """The offsets table's lines, a block of rows at a time, each block's text made a column at a
    time (not a string per part of each line: 100,000 lines at 100,000 tensors)."""
    # the blocks run across subgraphs: a model may have many small ones
    tensors = [t for sg in model.subgraphs for t in sg.tensors]
    counts = [len(sg.tensors) for sg in model.subgraphs]
    subgraph = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    sg_base = (np.cumsum(counts, dtype=np.int64) - counts)[subgraph]
    for at in range(0, len(tensors), _BLOCK):
        stop = min(at + _BLOCK, len(tensors))
        yield _offset_block_text(tensors[at:stop], subgraph[at:stop], sg_base[at:stop], rows, at, stop)


def _offset_block_text(block, subgraph: np.ndarray, sg_base: np.ndarray, rows: _Rows, at: int, stop: int) -> str:
    """The lines of tensors rows[at:stop] (`block`, of the subgraphs `subgraph` whose first
    tensors have the global ids `sg_base`), joined by newlines: each line's pieces side by side,
    a column at a time (emit/text_matrix.py)."""
    n = len(block)
    kind, alias, pass_ = rows.note_kind[at:stop], rows.note_alias[at:stop], rows.note_pass[at:stop]
    planned, aliased = kind == 1, (kind == 1) & (alias != NONE)
    with_pass = planned & (pass_ > 0)
    constant = np.fromiter((t.has_data for t in block), dtype=bool, count=n)
    index = [t.index for t in block]
    names = [t.name for t in block]
    # Each free text (name, type, size expression, note) stands between characters that cannot
    # join it into a delimiter or a trigraph (spaces, '[', ':'): each made safe on its own makes
    # the whole comment safe.
    if not _comment_safe(names):
        names = [comment_text(name) for name in names]
    type_shapes: dict[tuple[str, tuple[int, ...]], int] = {}  # a model has few: written from a table
    type_shape = np.fromiter((type_shapes.setdefault((t.type, t.shape), len(type_shapes)) for t in block),
                             dtype=np.int64, count=n)
    texts = [""] * n  # the few free texts: a pass's size expression, a persistent note
    for k in np.flatnonzero((kind == 2) | with_pass).tolist():
        at_id = int(sg_base[k]) + index[k]
        texts[k] = comment_text(rows.persistent_notes[at_id] if kind[k] == 2 else str(rows.note_size_expr[at_id]))
    index_column = np.asarray(index, dtype=np.int64)
    index_text = decimal(index_column)
    status = np.where(kind == 0, np.where(constant, 1, 2), 0)
    return lines_text([
        fixed("    ", n), decimal(rows.offset[at:stop]), fixed(", /* ", n),
        index_text if not sg_base.any() else decimal(index_column + sg_base),
        fixed(" sg", n), decimal(subgraph), fixed(":", n), index_text, fixed(" ", n), strings(names), fixed(" ", n),
        choice([comment_text(type_) + _shape(shape) for type_, shape in type_shapes], type_shape), fixed(" ", n),
        fixed("alias of ", n, aliased), only(lambda: decimal(alias), aliased), fixed(", ", n, aliased),
        fixed("steps ", n, planned), only(lambda: decimal(rows.first[at:stop]), planned), fixed("..", n, planned),
        only(lambda: decimal(rows.last[at:stop]), planned), fixed(", ", n, planned),
        only(lambda: decimal(rows.size[at:stop]), planned), fixed(" B", n, planned),
        fixed(" (pass ", n, with_pass), only(lambda: decimal(pass_), with_pass), fixed(": ", n, with_pass),
        strings(texts), fixed(" B)", n, with_pass),
        choice(("", "constant", "not planned (dynamic or unused)"), status),
        fixed(" (placed by the kept plan)", n, rows.kept_only[at:stop]), fixed(" */", n),
        fixed("\n", n, np.arange(n) < n - 1)])


def _comment_safe(texts: list[str]) -> bool:
    """Whether comment_text would leave every text as it is, asked of the block at once: joined
    by spaces, no two texts can make a delimiter or a trigraph between them."""
    text = " ".join(texts)
    return text.isascii() and text.isprintable() and "*/" not in text and "/*" not in text and "??" not in text


def _kept_offsets(plan: PackagePlan, model: Model, rows: _Rows) -> bool:
    """A model that keeps its own OfflineMemoryAllocation runs with those offsets, not this
    plan's: the header's offsets (the table and the input/output macros) become the kept ones,
    so that what a device program reads is where TFLite Micro puts each tensor."""
    if plan.runtime_arena is None or not plan.runtime_arena.head_plan:
        return False
    offsets = offline_plan_of(model)
    if offsets is None or len(offsets) != len(rows):
        raise PlanError("the kept OfflineMemoryAllocation does not cover every tensor")
    kept = np.asarray(offsets, dtype=np.int64)
    rows.offset[:] = np.where(kept >= 0, kept, NONE)
    rows.kept_only[:] = (kept >= 0) & (rows.size == 0)  # planned by the kept plan only (Vela's scratch tensors)
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
    return "\n".join(_text_blocks(plan, model, prefix))


def render_chunks(plan: PackagePlan, model: Model, prefix: str) -> Iterator[bytes]:
    """render()'s text as ASCII bytes, a block at a time: the lines are made as they are written
    (their text, 11 MB at 100,000 tensors, is never held whole, nor a comment per tensor)."""
    return encoded_in_blocks(_with_newlines(_text_blocks(plan, model, prefix)), encoding="ascii")


def _with_newlines(lines: Iterator[str]) -> Iterator[str]:
    for i, line in enumerate(lines):
        if i:
            yield "\n"
        yield line


def _text_blocks(plan: PackagePlan, model: Model, prefix: str) -> Iterator[str]:
    """The header's text, a block of whole lines at a time (joined by newlines, none at either
    end): its tables are made a block of rows at a time, not a string per line."""
    for lines in _line_blocks(plan, model, prefix):
        if isinstance(lines, str):
            yield lines
        elif lines:
            yield "\n".join(lines)


def _line_blocks(plan: PackagePlan, model: Model, prefix: str) -> Iterator[list[str] | str]:
    """lazy_lines' lines in blocks: a list of lines, or their text joined by newlines."""
    rows, object_sizes, scratch = _rows(plan, model)
    kept = _kept_offsets(plan, model, rows)
    if (np.maximum(rows.offset, rows.multipass) > INT32_MAX - rows.size).any():  # no int64 overflow
        raise PlanError("the plan does not fit the header's int32 offsets")
    return _lines(plan, model, prefix, rows, object_sizes, scratch, kept)


def render_lines(plan: PackagePlan, model: Model, prefix: str) -> list[str]:
    """The header's lines (render() joins them with newlines)."""
    return list(lazy_lines(plan, model, prefix))


def lazy_lines(plan: PackagePlan, model: Model, prefix: str) -> Iterator[str]:
    """The header's lines, made one at a time; a plan the header cannot hold is refused here,
    before the first line."""
    return _lines_of(_line_blocks(plan, model, prefix))


def _lines_of(blocks: Iterator[list[str] | str]) -> Iterator[str]:
    for lines in blocks:
        yield from (lines.split("\n") if isinstance(lines, str) else lines)


def _lines(plan: PackagePlan, model: Model, prefix: str, rows: _Rows, object_sizes: list[int],
           scratch: list[str], kept: bool) -> Iterator[list[str] | str]:
    P = prefix.upper()
    arena_sizes = [a.offsets.arena_bytes for a in plan.arenas]
    bases = list(plan.arena_bases)
    inline = len(plan.arenas) == 1 and plan.arenas[0].inline
    whole = plan.runtime_arena
    out: list[str] = []  # the lines so far, handed on at each table
    out += block_comment([
        *([_declare_line(P, whole)] if whole else []),  # the number first
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
    if whole:  # the whole arena to declare first, the plan (its head) after it under another name
        out += [f"#define {P}_TENSOR_ARENA_BYTES {whole.arena_bytes}  /* declare this: see below */", ""]
    plan_bytes = (f"#define {P}_PLAN_BYTES {plan.arena_bytes}  /* this plan: TFLite Micro's head, "
                  "not the arena to declare */" if whole else
                  f"#define {P}_ARENA_BYTES {plan.arena_bytes}" + ("" if inline else "  /* all arenas end to end */"))
    out += [plan_bytes,
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
    out += _whole_arena_macros(P, whole) if whole else _arena_macro(P, plan.semantics)
    out += regions.header_lines(P, prefix, plan, model) if plan.regions else []
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
    yield out
    yield from _offset_blocks(model, rows)
    out = ["};", ""]
    tables = [
        ("TENSOR_SIZES", "Planned bytes of each tensor (rounded as the runtime rounds); 0 when not planned.", rows.size),
        ("TENSOR_FIRST_OP", "First step (op or allocation scope, see above) each tensor is alive; -1 when not planned.", rows.first),
        ("TENSOR_LAST_OP", "Last step (inclusive) each tensor is alive; -1 when not planned.", rows.last),
        ("TENSOR_ARENA", "The arena each tensor lives in; -1 when not planned.", rows.arena),
        ("TENSOR_ALIAS_OF", "The tensor whose buffer each tensor shares (in-place ops); -1: its own.", rows.alias_of),
        ("TENSOR_OBJECTS", "Shared-object plan (texture runtimes): each tensor's object; -1 when not planned.", rows.obj),
    ]
    for name, doc, values in tables:
        yield out
        yield from _tensor_table_blocks(P, name, doc, values)
        out = [""]
    if plan.is_dynamic:
        out += _multipass_tables(P, plan, rows)
    out += ["/* Size of each shared object. */",
            f"static const int32_t {P}_OBJECT_SIZES[{P}_OBJECT_COUNT > 0 ? {P}_OBJECT_COUNT : 1] = {{",
            *int_rows(object_sizes), "};", ""]
    if scratch:
        out += block_comment(["Scratch buffers the runtime's kernels request (not in the tables):", *scratch])
        out.append("")
    out += ["#ifdef __cplusplus", "}  /* extern \"C\" */", "#endif", "", f"#endif  /* {guard} */", ""]
    yield out


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


def _tensor_table(P: str, name: str, doc: str, values: np.ndarray) -> list[str]:
    return [f"/* {doc} */", f"static const int32_t {P}_{name}[{P}_TENSOR_COUNT] = {{", *int_rows(values.tolist()),
            "};", ""]


def _tensor_table_blocks(P: str, name: str, doc: str, values: np.ndarray) -> Iterator[list[str] | str]:
    """_tensor_table's lines but the last (its empty line), the rows as one text."""
    yield [f"/* {doc} */", f"static const int32_t {P}_{name}[{P}_TENSOR_COUNT] = {{"]
    yield int_rows_text(values)
    yield ["};"]


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


def _declare_line(P: str, arena) -> str:
    """The header's first comment line: the whole arena to declare, and its standing (said
    first when no build of the target ran the model)."""
    before = f"Not run on TFLite Micro ({arena.not_run}): declare" if arena.not_run else "Declare"
    return (f"{before} {P}_TENSOR_ARENA_BYTES = {arena.arena_bytes} bytes of TFLite Micro arena "
            f"(target {arena.target}, {SIDE_WORDS[arena.bound]}).")


def _whole_arena_macros(P: str, arena) -> list[str]:
    """TFLite Micro's whole arena: the number to give MicroInterpreter, its standing, its parts."""
    side = SIDE_WORDS[arena.bound]
    quality = [f"{side[0].upper()}{side[1:]}: {arena.reason}."]
    quality.append(f"{'Modelled, not measured' if arena.modelled else 'Figures'}: {arena.rule}.")
    binding = ("the set-up room" if arena.setup_bytes > arena.head_bytes + arena.tail_bytes
               else "head + tail")
    return [
        *block_comment([
            f"TFLite Micro's whole arena ({arena.runtime}, target {arena.target}):",
            f"give MicroInterpreter {P}_TENSOR_ARENA_BYTES bytes, starting on a 16-byte boundary.",
            (f"{P}_ARENA_HEAD_BYTES: the head, this plan (tensors and kernel scratch buffers);"
             if not arena.head_plan and not arena.target.endswith("+cmsis-nn") else
             f"{P}_ARENA_HEAD_BYTES: the head, this plan's tensors and the scratch buffers CMSIS-NN's kernels "
             "ask for, which TFLite Micro places around them;"
             if not arena.head_plan else
             f"{P}_ARENA_HEAD_BYTES: the head, {arena.head_plan} (kept in the model: TFLite Micro uses "
             f"its offsets, not this header's {P}_PLAN_BYTES plan);"),
            f"{P}_ARENA_TAIL_BYTES: the tail, TFLite Micro's persistent memory (its structs, every",
            "kernel's persistent buffers, variables, the input and output tensors);",
            f"{P}_ARENA_SETUP_BYTES: the arena TFLite Micro's planning step needs while it sets the",
            f"model up. {P}_TENSOR_ARENA_BYTES is the larger of head + tail and the set-up room,",
            f"rounded up to 16 (here: {binding}).",
            f"{P}_ARENA_BOUND: which side of TFLite Micro's need {P}_TENSOR_ARENA_BYTES is on: \"exact\",",
            "\"upper\" (it needs at most this), \"lower\" (at least this) or \"unknown\"; "
            f"{P}_ARENA_EXACT is 1 only",
            "when a build of the target ran the packaged model in it and not in 16 bytes less, or when every",
            "kernel form in the model is proven on the target's build (its coverage matrix).",
            *quality,
            f"{P}_DECLARE_ARENA(name, section_name) declares `uint8_t name[{P}_TENSOR_ARENA_BYTES]`,",
            f"aligned to {P}_ARENA_ALIGNMENT bytes, in the linker section `section_name` (a string literal,",
            'e.g. ".bss.tensor_arena"; ignored by compilers other than GCC and Clang).',
            "C99 has no standard alignment syntax: GCC/Clang attributes are used, else C11/C++11 alignas.",
        ]),
        f'#define {P}_ARENA_BOUND "{arena.bound}"',
        f"#define {P}_ARENA_EXACT {1 if arena.exact else 0}",
        f"#define {P}_ARENA_HEAD_BYTES {arena.head_bytes}",
        f"#define {P}_ARENA_TAIL_BYTES {arena.tail_bytes}",
        f"#define {P}_ARENA_SETUP_BYTES {arena.setup_bytes}",
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
