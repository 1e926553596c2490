"""The three SVG charts of an arena: the layout (tensors as rectangles over time and address), the
operator-breadth curve, and the shared objects as rows over time. All share one x scale, so the
charts line up one above the other on the page.
"""

from __future__ import annotations

import functools
from itertools import chain
from typing import Iterable, Iterator, Sequence

from packager.emit.report_data import ArenaPicture, ObjectRow, PlacedTensor, TensorInfo
from packager.emit.scale import BYTES_FORMAT, TimeAddressScale, byte_ticks, format_bytes, short_bytes, step_ticks
from packager.emit.svg import element, escape, line, num, svg, svg_chunks, text, title

LEFT, RIGHT, TOP, BOTTOM = 84.0, 160.0, 14.0, 40.0  # margins: tick labels left, line labels right
PLOT_WIDTH = 900.0
LAYOUT_HEIGHT = 320.0
BREADTH_HEIGHT = 150.0
OBJECT_ROW = 20.0  # pixels per shared object
OBJECT_BAR = 16.0  # the tallest bar inside a row: a tensor as big as its object


def tensor_hue(tensor_id: int) -> int:
    """Neighbouring ids get far-apart hues (golden angle), the same in SVG and PNG."""
    return round(tensor_id * 137.508) % 360


@functools.lru_cache(maxsize=1 << 16)  # each drawn tensor's, asked by the layout and by the shared objects
def fill_of(tensor_id: int) -> str:
    return f"hsl({tensor_hue(tensor_id)},55%,62%)"


def shape_text(t: TensorInfo) -> str:
    if not t.dtype:
        return "(not a tensor of the file)"
    return f"{t.dtype} [{_dims_text(t.shape)}]"


@functools.lru_cache(maxsize=4096)  # a model has few distinct shapes; a page asks for each tensor's twice
def _dims_text(shape: tuple[int, ...]) -> str:
    return ", ".join(map(str, shape))


# describe(t) as str.format fields (id, name, type, dims): a tensor of the file, or the label of
# a buffer the file lacks (its other fields written as nothing); the charts' batches use them too.
_DESCRIBED, _LABELLED = "tensor {} '{}' {} [{}]", "{!s:.0}{}{!s:.0}{!s:.0}"


def describe(t: TensorInfo) -> str:
    """"tensor 12 'conv' FLOAT32 [1, 8, 8, 4]", or just the label of a buffer the file lacks."""
    return _DESCRIBED.format(t.id, t.name, t.dtype, _dims_text(t.shape)) if t.dtype else t.name


def ops_text(first: int, last: int, step_name: str) -> str:
    return f"{step_name} {first}" if first == last else f"{step_name}s {first}–{last}"


def layout_scale(steps: int, top_bytes: int) -> TimeAddressScale:
    return TimeAddressScale.fit(steps, top_bytes, LEFT, TOP, PLOT_WIDTH, LAYOUT_HEIGHT)


def _frame(scale: TimeAddressScale, steps: int, top_bytes: int, height: float, step_name: str,
           y_label: str) -> list[str]:
    """Plot background, grid, tick labels and axis names."""
    right = scale.x(steps)
    parts = [element("rect", {"class": "plot", "x": scale.left, "y": scale.bottom - height,
                              "width": right - scale.left, "height": height})]
    for value, label in byte_ticks(top_bytes, most=5 if height > 200 else 3):
        y = scale.y(value)
        parts.append(line(scale.left, y, right, y, **{"class": "grid"}))
        parts.append(text(scale.left - 6, y + 4, label, **{"class": "tick", "text-anchor": "end"}))
    for step in step_ticks(steps):
        x = scale.x(step + 0.5)
        parts.append(line(x, scale.bottom, x, scale.bottom + 4, **{"class": "axis"}))
        parts.append(text(x, scale.bottom + 16, str(step), **{"class": "tick", "text-anchor": "middle"}))
    parts.append(text((scale.left + right) / 2, scale.bottom + 32, step_name,
                      **{"class": "axis-name", "text-anchor": "middle"}))
    mid = scale.bottom - height / 2
    parts.append(text(14, mid, y_label, **{"class": "axis-name", "text-anchor": "middle",
                                          "transform": f"rotate(-90 14 {mid:g})"}))
    return parts


def levels(lower_bound: int, arena: int) -> list[tuple[str, int, str, float]]:
    """(kind, bytes, label, label offset in pixels) of the horizontal lines: the arena's label sits
    above its line and the bound's below, so the two never collide; one label when they are equal."""
    if arena and arena == lower_bound:
        return [("bound", lower_bound, "", 0.0), ("arena", arena, "arena = bound", -4.0)]
    out = [("bound", lower_bound, "lower bound", 12.0)]
    if arena:
        out.append(("arena", arena, "arena", -4.0))
    return out


def _levels(scale: TimeAddressScale, steps: int, lower_bound: int, arena: int) -> list[str]:
    right, parts = scale.x(steps), []
    for kind, value, label, dy in levels(lower_bound, arena):
        y = scale.y(value)
        parts.append(line(scale.left, y, right, y, **{"class": kind, "data-bytes": value}))
        if label:
            parts.append(text(right + 6, y + dy, f"{label} {short_bytes(value)}", **{"class": f"{kind}-label"}))
    return parts


def tensor_tooltip(p: PlacedTensor, step_name: str) -> str:
    t = p.tensor
    text = (f"{describe(t)}\n{format_bytes(t.size)} at offset {format_bytes(p.offset)} "
            f"(to {format_bytes(p.offset + t.size)})\nalive over {ops_text(p.first_op, p.last_op, step_name)}")
    for a in p.aliases:
        text += f"\nalso holds {describe(a.tensor)}, {ops_text(a.first_op, a.last_op, step_name)}"
    return text


class _Numbers(dict):
    """num() of each coordinate, worked out once per chart (most repeat: rows, lifetimes, sizes)."""

    def __missing__(self, value: float) -> str:
        text = self[value] = num(value)
        return text


def chart_numbers() -> _Numbers:
    """num() texts to share between the charts of one arena: the layout and the shared objects
    have the same x scale, so their rectangles start and end on the same coordinates."""
    return _Numbers()


def layout_svg(placed: Sequence[PlacedTensor], steps: int, arena: int, lower_bound: int,
               step_name: str = "operator", label: str = "layout") -> str:
    """One <rect class="tensor"> per planned tensor, aliases marked over their owner's rectangle."""
    return "".join(layout_svg_chunks(placed, steps, arena, lower_bound, step_name, label))


def layout_svg_chunks(placed: Sequence[PlacedTensor], steps: int, arena: int, lower_bound: int,
                      step_name: str = "operator", label: str = "layout",
                      numbers: _Numbers | None = None) -> Iterator[str]:
    """layout_svg()'s text in pieces, made as they are written; `numbers`: num() texts shared
    with the arena's other charts (chart_numbers())."""
    top = max(arena, lower_bound, 1)
    scale = layout_scale(steps, top)
    return svg_chunks(scale.x(steps) + RIGHT, scale.bottom + BOTTOM,
                      _layout_children(placed, steps, arena, lower_bound, step_name, scale, top, numbers),
                      **{"class": "chart", "data-chart": label, "role": "img", **scale.data_attributes()})


# Elements handed on joined, this many at a time: every piece passes several generators on its
# way to the file, and a chart has tens of thousands.
ELEMENTS_PER_PIECE = 512


def _in_pieces(elements: Iterable[str]) -> Iterator[str]:
    """The elements' text joined a few hundred at a time (the same text, fewer pieces)."""
    held: list[str] = []
    for element_text in elements:
        held.append(element_text)
        if len(held) >= ELEMENTS_PER_PIECE:
            yield "".join(held)
            held.clear()
    if held:
        yield "".join(held)


def _layout_children(placed: Sequence[PlacedTensor], steps: int, arena: int, lower_bound: int,
                     step_name: str, scale: TimeAddressScale, top: int,
                     numbers: _Numbers | None = None) -> Iterator[str]:
    yield from _frame(scale, steps, top, LAYOUT_HEIGHT, step_name, "address")
    yield from _tensor_rects(placed, step_name, scale, numbers)
    for p in placed:  # after every tensor, so the marks stay visible on top
        for a in p.aliases:
            x, y, w, h = scale.box(a.first_op, a.last_op, p.offset, p.tensor.size)
            yield element("rect", {
                "class": "alias", "data-tensor": a.tensor.id, "data-alias-of": p.tensor.id,
                "x": x, "y": y, "width": w, "height": h},
                [title(f"{describe(a.tensor)} uses the buffer "
                       f"of tensor {p.tensor.id} over {ops_text(a.first_op, a.last_op, step_name)}")])
    yield from _levels(scale, steps, lower_bound, arena)


# A layout rectangle as element() writes it, every coordinate a float and every other value an
# int, its tooltip as tensor_tooltip() writes it: one str.format makes a batch of them (tens of
# thousands on a large page), with the description of each tensor's kind.
_TENSOR_RECT_HEAD = ('<rect class="tensor{}" data-tensor="{}" data-offset="{}" data-size="{}" data-first-op="{}" '
                     'data-last-op="{}" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>')
_TENSOR_RECT_TAIL = ("\n" + BYTES_FORMAT + " at offset " + BYTES_FORMAT + " (to " + BYTES_FORMAT
                     + ")\nalive over {}{}</title></rect>")
_TENSOR_RECTS = {True: _TENSOR_RECT_HEAD + _DESCRIBED + _TENSOR_RECT_TAIL,
                 False: _TENSOR_RECT_HEAD + _LABELLED + _TENSOR_RECT_TAIL}


def _descriptions(tensors: Sequence[TensorInfo]) -> tuple[list[bool], list[str], list[str], list[str]]:
    """Whether each tensor is one of the file, and the names, types and dims its description is
    made of, escaped. Each stands between characters that escape() leaves alone and that no
    '/' can follow or precede (quotes, spaces, brackets, a newline), so the parts escaped one
    by one are the description escaped whole."""
    names, dtypes = [t.name for t in tensors], [t.dtype for t in tensors]
    joined = "\n".join(names + dtypes)
    if "&" in joined or "<" in joined or ">" in joined or '"' in joined or "//" in joined:
        names, dtypes = list(map(escape, names)), list(map(escape, dtypes))
    return list(map(bool, dtypes)), names, dtypes, [_dims_text(t.shape) for t in tensors]


def _tensor_rects(placed: Sequence[PlacedTensor], step_name: str, scale: TimeAddressScale,
                  numbers: _Numbers | None = None) -> Iterator[str]:
    """The layout's rectangles, ELEMENTS_PER_PIECE at a time."""
    nums = _Numbers() if numbers is None else numbers
    for start in range(0, len(placed), ELEMENTS_PER_PIECE):
        yield _tensor_rects_text(placed[start:start + ELEMENTS_PER_PIECE], step_name, scale, nums)


def _tensor_rects_text(placed: Sequence[PlacedTensor], step_name: str, scale: TimeAddressScale,
                       nums: "_Numbers") -> str:
    tensors = [p.tensor for p in placed]
    ids, sizes = [t.id for t in tensors], [t.size for t in tensors]
    firsts, lasts, offsets = [p.first_op for p in placed], [p.last_op for p in placed], [p.offset for p in placed]
    left, step_width, bottom, byte_height = scale.left, scale.step_width, scale.bottom, scale.byte_height
    if not (_all_int(ids, sizes, firsts, lasts, offsets) and _all_float(left, step_width, bottom, byte_height)):
        return "".join(_tensor_rect(p, step_name, scale) for p in placed)
    # scale.box()'s arithmetic, a column at a time; the tooltip escaped a part at a time (no part
    # can end in '/' where the next starts with one)
    x0 = [left + first * step_width for first in firsts]
    widths = [left + (last + 1) * step_width - x for x, last in zip(x0, lasts)]
    ends = [offset + size for offset, size in zip(offsets, sizes)]
    step_text = escape(step_name)
    aliased = [" has-alias" if p.aliases else "" for p in placed]
    also = ["".join(f"\nalso holds {escape(describe(a.tensor))}, {ops_text(a.first_op, a.last_op, step_text)}"
                    for a in p.aliases) if p.aliases else "" for p in placed]
    of_file, names, dtypes, dims = _descriptions(tensors)
    return "".join(map(_TENSOR_RECTS.__getitem__, of_file)).format(*chain.from_iterable(zip(
        aliased, ids, offsets, sizes, firsts, lasts, map(nums.__getitem__, x0),
        [nums[bottom - end * byte_height] for end in ends], map(nums.__getitem__, widths),
        [nums[size * byte_height] for size in sizes], map(fill_of, ids), ids, names, dtypes, dims,
        sizes, offsets, ends, [ops_text(first, last, step_text) for first, last in zip(firsts, lasts)], also)))


def _tensor_rect(p: PlacedTensor, step_name: str, scale: TimeAddressScale) -> str:
    x, y, w, h = scale.box(p.first_op, p.last_op, p.offset, p.tensor.size)
    return element("rect", {
        "class": "tensor" + (" has-alias" if p.aliases else ""), "data-tensor": p.tensor.id,
        "data-offset": p.offset, "data-size": p.tensor.size, "data-first-op": p.first_op,
        "data-last-op": p.last_op, "x": x, "y": y, "width": w, "height": h,
        "fill": fill_of(p.tensor.id)}, [title(tensor_tooltip(p, step_name))])


def _all_int(*columns: Sequence[object]) -> bool:
    """Every value exactly an int: element() writes it as is."""
    return all(set(map(type, column)) <= {int} for column in columns)


def _all_float(*values: object) -> bool:
    """Every value exactly a float: element() writes it through num()."""
    return all(type(value) is float for value in values)


# Above this many steps the breadth curve is drawn per group of steps (each at the group's
# largest breadth, so the peak, the lower bound, stays exact): a chart 900 pixels wide cannot
# show more columns.
BREADTH_MAX_COLUMNS = 20_000
BREADTH_GROUPS = 1_000


def breadth_group_width(steps: int) -> int:
    """Steps per group of the breadth curve: 1 when the curve fits."""
    return 1 if steps <= BREADTH_MAX_COLUMNS else -(-steps // BREADTH_GROUPS)


def breadth_groups(breadths: Sequence[int]) -> tuple[int, list[tuple[int, int, int]]]:
    """(steps per group, [(first step, last step, largest breadth)]); one step per group when the
    curve fits."""
    n = len(breadths)
    width = breadth_group_width(n)
    return width, [(a, min(a + width, n) - 1, max(breadths[a:a + width])) for a in range(0, n, width)]


def breadth_note(picture: ArenaPicture) -> str:
    width = breadth_group_width(len(picture.breadths))
    if width == 1:
        return ""
    return (f'<p class="note">{len(picture.breadths):,} {picture.step_name}s drawn in groups of '
            f"{width:,}, each at its largest breadth (the peak is exact).</p>")


def breadth_svg(picture: ArenaPicture) -> str:
    """Bytes alive at each operator as a step curve, with the lower bound and the arena lines."""
    steps, breadths = picture.steps, picture.breadths
    top = max(picture.arena, picture.lower_bound, 1)
    scale = TimeAddressScale.fit(steps, top, LEFT, TOP, PLOT_WIDTH, BREADTH_HEIGHT)
    parts = _frame(scale, steps, top, BREADTH_HEIGHT, picture.step_name, "bytes alive")
    width, groups = breadth_groups(breadths)
    if breadths and width > 1:
        path = [f"M{scale.x(0):.3f} {scale.y(0):.3f}"]
        for first, last, value in groups:
            path.append(f"V{scale.y(value):.3f}H{scale.x(last + 1):.3f}")
        path.append(f"V{scale.y(0):.3f}Z")
        parts.append(element("path", {"class": "breadth", "d": "".join(path)}))
        for first, last, value in groups:
            parts.append(element("rect", {"class": "hit", "data-step": first, "data-bytes": value,
                                          "x": scale.x(first), "y": scale.y(top),
                                          "width": scale.x(last + 1) - scale.x(first), "height": BREADTH_HEIGHT},
                                 [title(f"{picture.step_name}s {first}–{last}: at most "
                                        f"{format_bytes(value)} alive")]))
    elif breadths:
        path = [f"M{scale.x(0):.3f} {scale.y(0):.3f}"]
        for step, value in enumerate(breadths):
            path.append(f"V{scale.y(value):.3f}H{scale.x(step + 1):.3f}")
        path.append(f"V{scale.y(0):.3f}Z")
        parts.append(element("path", {"class": "breadth", "d": "".join(path)}))
        for step, value in enumerate(breadths):  # invisible columns that carry the tooltips
            parts.append(element("rect", {"class": "hit", "data-step": step, "data-bytes": value,
                                          "x": scale.x(step), "y": scale.y(top),
                                          "width": scale.step_width, "height": BREADTH_HEIGHT},
                                 [title(f"{picture.step_name} {step}: {format_bytes(value)} alive")]))
    parts += _levels(scale, steps, picture.lower_bound, picture.arena)
    return svg(scale.x(steps) + RIGHT, scale.bottom + BOTTOM, parts,
               **{"class": "chart", "data-chart": "breadth", "role": "img", **scale.data_attributes()})


def _object_rows(scale: TimeAddressScale, rows: Sequence[ObjectRow], step_name: str,
                 nums: _Numbers | None = None) -> Iterator[str]:
    """Each row's label, then its members, the members ELEMENTS_PER_PIECE at a time across rows
    (a row may hold one member: a chart may have tens of thousands of rows); `nums`: the chart's
    num() texts."""
    nums = _Numbers() if nums is None else nums
    ks = [k for k, row in enumerate(rows) for _ in row.tensors]
    members = [member for row in rows for member in row.tensors]
    before = [""] * len(members)  # the labels written just before each member: its row's, if it is the first
    pending: list[str] = []
    at = 0
    for k, row in enumerate(rows):
        pending.append(_row_label(scale, k, row, nums))
        if row.tensors:
            before[at] = "".join(pending)
            pending.clear()
            at += len(row.tensors)
    for start in range(0, len(members), ELEMENTS_PER_PIECE):
        stop = start + ELEMENTS_PER_PIECE
        yield _members_text(scale, rows, ks[start:stop], members[start:stop], before[start:stop], step_name, nums)
    if pending:
        yield "".join(pending)


def _row_label(scale: TimeAddressScale, k: int, row: ObjectRow, nums: _Numbers) -> str:
    """text(scale.left - 6, y_row + OBJECT_ROW / 2 + 4, label, class="tick", text-anchor="end"), in one format."""
    y_row = TOP + k * OBJECT_ROW
    return (f'<text x="{nums[float(scale.left - 6)]}" y="{nums[float(y_row + OBJECT_ROW / 2 + 4)]}" '
            f'class="tick" text-anchor="end">{escape(f"#{k} {short_bytes(row.size)}")}</text>')


# A shared object's member as element() writes it, every coordinate a float and every other
# value an int (see _TENSOR_RECTS), after the labels that come before it: one str.format makes a
# batch of them.
_MEMBER_HEAD = ('{}<rect class="member" data-tensor="{}" data-object="{}" data-size="{}" data-first-op="{}" '
                'data-last-op="{}" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>')
_MEMBER_TAIL = "\n" + BYTES_FORMAT + " in object #{} of {}\nalive over {}</title></rect>"
_MEMBERS = {True: _MEMBER_HEAD + _DESCRIBED + _MEMBER_TAIL, False: _MEMBER_HEAD + _LABELLED + _MEMBER_TAIL}


def _members_text(scale: TimeAddressScale, rows: Sequence[ObjectRow], ks: Sequence[int],
                  members: Sequence[tuple[TensorInfo, int, int]], before: Sequence[str], step_name: str,
                  nums: _Numbers) -> str:
    tensors = [t for t, _, _ in members]
    ids, sizes = [t.id for t in tensors], [t.size for t in tensors]
    firsts, lasts = [first for _, first, _ in members], [last for _, _, last in members]
    row_sizes = [rows[k].size for k in ks]
    left, step_width = scale.left, scale.step_width
    if not (_all_int(ids, sizes, firsts, lasts, ks, row_sizes) and _all_float(TOP, OBJECT_ROW, left, step_width)):
        return "".join(label + _member(scale, k, rows[k], t, first, last, step_name)
                       for label, k, (t, first, last) in zip(before, ks, members))
    # _member()'s arithmetic, a column at a time; the tooltip escaped a part at a time
    heights = [OBJECT_BAR * (size / row_size if row_size else 0) for size, row_size in zip(sizes, row_sizes)]
    x0 = [left + first * step_width for first in firsts]
    widths = [left + (last + 1) * step_width - x for x, last in zip(x0, lasts)]
    ys = [TOP + k * OBJECT_ROW + (OBJECT_ROW + OBJECT_BAR) / 2 - h for k, h in zip(ks, heights)]
    row_bytes: dict[int, str] = {}
    step_text = escape(step_name)
    of_file, names, dtypes, dims = _descriptions(tensors)
    return "".join(map(_MEMBERS.__getitem__, of_file)).format(*chain.from_iterable(zip(
        before, ids, ks, sizes, firsts, lasts, map(nums.__getitem__, x0), map(nums.__getitem__, ys),
        map(nums.__getitem__, widths), map(nums.__getitem__, heights), map(fill_of, ids), ids, names, dtypes,
        dims, sizes, ks, [row_bytes.get(k) or row_bytes.setdefault(k, format_bytes(rows[k].size)) for k in ks],
        [ops_text(first, last, step_text) for first, last in zip(firsts, lasts)])))


def _member(scale: TimeAddressScale, k: int, row: ObjectRow, t: TensorInfo, first: int, last: int,
            step_name: str) -> str:
    h = OBJECT_BAR * (t.size / row.size if row.size else 0)
    x0, x1 = scale.x(first), scale.x(last + 1)
    y_row = TOP + k * OBJECT_ROW
    return element("rect", {
        "class": "member", "data-tensor": t.id, "data-object": k, "data-size": t.size,
        "data-first-op": first, "data-last-op": last, "x": x0,
        "y": y_row + (OBJECT_ROW + OBJECT_BAR) / 2 - h, "width": x1 - x0, "height": h,
        "fill": fill_of(t.id)},
        [title(f"{describe(t)}\n{format_bytes(t.size)} in object #{k} "
               f"of {format_bytes(row.size)}\nalive over {ops_text(first, last, step_name)}")])


def objects_svg(picture: ArenaPicture) -> str:
    """One row per shared object; a tensor's bar is as tall as its share of the object."""
    return "".join(objects_svg_chunks(picture))


def objects_svg_chunks(picture: ArenaPicture, numbers: _Numbers | None = None) -> Iterator[str]:
    """objects_svg()'s text in pieces, made as they are written; `numbers`: num() texts shared
    with the arena's other charts (chart_numbers())."""
    rows, steps = picture.object_rows, picture.steps
    height = max(len(rows), 1) * OBJECT_ROW
    scale = TimeAddressScale(left=LEFT, step_width=layout_scale(steps, 1).step_width,
                             bottom=TOP + height, byte_height=0.0)
    right = scale.x(steps)
    return svg_chunks(right + RIGHT, scale.bottom + BOTTOM, _objects_children(picture, scale, height, numbers),
                      **{"class": "chart", "data-chart": "objects", "role": "img"})


def _row_lines(count: int, right: float) -> Iterator[str]:
    """The grid lines between `count` object rows, as line() writes them (one format each)."""
    x1, x2 = num(LEFT), num(float(right))
    for k in range(1, count):
        y = num(TOP + k * OBJECT_ROW)
        yield f'<line x1="{x1}" y1="{y}" x2="{x2}" y2="{y}" class="grid"/>'


def _objects_children(picture: ArenaPicture, scale: TimeAddressScale, height: float,
                      numbers: _Numbers | None = None) -> Iterator[str]:
    rows, steps, right = picture.object_rows, picture.steps, scale.x(picture.steps)
    yield element("rect", {"class": "plot", "x": LEFT, "y": TOP, "width": right - LEFT, "height": height})
    yield from _in_pieces(_row_lines(len(rows), right))
    nums = _Numbers() if numbers is None else numbers
    yield from _object_rows(scale, rows, picture.step_name, nums)  # already a batch of members a piece
    for step in step_ticks(steps):
        x = scale.x(step + 0.5)
        yield text(x, scale.bottom + 16, str(step), **{"class": "tick", "text-anchor": "middle"})
    yield text((LEFT + right) / 2, scale.bottom + 32, picture.step_name,
               **{"class": "axis-name", "text-anchor": "middle"})
