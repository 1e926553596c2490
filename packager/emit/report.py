"""The one-page HTML report: per arena, the layout of the chosen plan, the operator-breadth curve,
the shared-object plan and the table of strategies, with TFLite's measured layout when given.

The page is self-contained (inline CSS and a few lines of inline JS; no URL of any kind) and its
bytes depend only on the model and the options. Planning times are the one exception, so they are
shown only when `include_times` is true; `tflpack report --no-times` and `package` leave them out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator, Sequence

from packager.emit.atomic_write import write_atomically
from packager.emit.charts import (breadth_note, breadth_svg, chart_numbers, layout_svg, layout_svg_chunks,
                                  objects_svg_chunks, shape_text)
from packager.emit.report_data import ArenaPicture, MeasuredLayout
from packager.emit.scale import format_bytes
from packager.emit.svg import escape
from packager.plan.records import overhead_pct

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1200px;padding:0 16px;color:#222}
h1{font-size:22px}h2{font-size:18px;border-top:1px solid #ccc;padding-top:16px;margin-top:32px}
h3{font-size:15px;margin:20px 0 6px}p.note{color:#555;margin:4px 0}
table{border-collapse:collapse;margin:6px 0}td,th{padding:2px 10px;border-bottom:1px solid #e4e4e4}
th{text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}tr.chosen{font-weight:bold}
.scroll{overflow-x:auto}svg.chart{display:block;font-size:11px}
.plot{fill:#fafafa;stroke:#bbb}.grid{stroke:#e6e6e6}.axis{stroke:#888}.tick{fill:#555}
.axis-name{fill:#333}.tensor,.member{stroke:#333;stroke-width:.5;vector-effect:non-scaling-stroke}
.tensor.has-alias{stroke-width:1.2}
.alias{fill:#fff;fill-opacity:.35;stroke:#000;stroke-dasharray:3 2;stroke-width:1;vector-effect:non-scaling-stroke}
.bound{stroke:#c62828;stroke-dasharray:6 4;stroke-width:1.5}.bound-label{fill:#c62828}
.arena{stroke:#1565c0;stroke-width:1.5}.arena-label{fill:#1565c0}
.breadth{fill:#90caf9;stroke:#1976d2;stroke-width:1}.hit{fill:transparent}.hit:hover{fill:#0001}
.lit{stroke:#000!important;stroke-width:2.5!important}
#info{position:fixed;right:12px;bottom:12px;max-width:420px;background:#fffde7;border:1px solid #ccc;
padding:6px 10px;white-space:pre-wrap;font-size:12px;display:none}
"""

# Hovering a tensor shows its tooltip text in a panel and lights it up in every chart (its layout
# rectangle, its alias marks, its bar among the shared objects). No comments with slashes: the
# page must not contain "//".
_JS = """
(function () {
  var info = document.getElementById('info');
  function marks(id) { return document.querySelectorAll('[data-tensor="' + id + '"]'); }
  document.querySelectorAll('svg [data-tensor]').forEach(function (el) {
    el.addEventListener('mouseenter', function () {
      marks(el.dataset.tensor).forEach(function (m) { m.classList.add('lit'); });
      var t = el.querySelector('title');
      if (t) { info.textContent = t.textContent; info.style.display = 'block'; }
    });
    el.addEventListener('mouseleave', function () {
      marks(el.dataset.tensor).forEach(function (m) { m.classList.remove('lit'); });
      info.style.display = 'none';
    });
  });
})();
"""


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool],
           row_classes: Sequence[str] | None = None) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        cells = "".join(f'<td class="n">{escape(c)}</td>' if n else f"<td>{escape(c)}</td>"
                        for c, n in zip(row, numeric))
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _strategy_table(picture: ArenaPicture, include_times: bool) -> str:
    header = ["plan", "strategy", "bytes", "lower bound", "over bound"] + (["time"] if include_times else [])
    rows, classes = [], []
    for s in picture.strategies:
        row = ([s.kind, ("● " if s.chosen else "") + s.name, f"{s.total:,}", f"{s.bound:,}",
                f"{s.over_bound_pct:.1f}%"] if s.total is not None
               else [s.kind, s.name, "stopped above", f"{s.bound:,}", "—"])
        if include_times:
            row.append(f"{s.seconds * 1000:.1f} ms")
        rows.append(row)
        classes.append("chosen" if s.chosen else "")
    numeric = [False, False, True, True, True, True]
    note = ("● marks the plans drawn above. Baselines are what a dynamic allocator would need, not "
            "plans to ship." + ("" if include_times else " Planning times left out (--no-times) so "
                                "that the page is byte-identical from run to run."))
    if picture.stopped_above:
        names = ", ".join(f"{name} (after {placed:,} of {steps:,} steps)"
                          for name, placed, steps in picture.stopped_above)
        note += (" Stopped above the lower bound, not finished (no arena to show): each stopped once "
                 "its plan could no longer meet the bound (a tensor it placed ended above it, or the "
                 "tensors it had left could not all fit under it), so its plan could not be chosen "
                 f"over the one that meets it: {names}.")
    if picture.not_needed:
        names = "; ".join(f"{kind}: {', '.join(n for k, n in picture.not_needed if k == kind)}"
                          for kind in dict.fromkeys(k for k, _ in picture.not_needed))
        note += (" Not run, because a plan above already meets the lower bound and none can be "
                 f"smaller: {names}.")
    return _table(header, rows, numeric, classes) + f'<p class="note">{escape(note)}</p>'


def _drawn_note(p: ArenaPicture, total: int | None, drawn: int) -> str:
    """What a chart leaves out at scale, in words (empty when it draws everything)."""
    if total is None:
        return ""
    return (f'<p class="note">{drawn:,} of {total:,} tensors drawn: the largest by bytes × '
            f"lifetime. A chart this wide cannot show the others one by one; every tensor is in "
            f"the plan files.</p>")


def _headline(p: ArenaPicture) -> str:
    n = len(p.placed) if p.placed_total is None else p.placed_total
    if p.layout_strategy is None:
        return "No offset plan was made."
    return (f"{n} planned tensors; {escape(p.layout_strategy)} places them in "
            f"<b>{format_bytes(p.arena)}</b>, {overhead_pct(p.arena, p.lower_bound):.1f}% over the "
            f"lower bound {format_bytes(p.lower_bound)} (the largest {p.step_name} breadth); "
            f"alignment {p.alignment} B.")


def _aliases_table(p: ArenaPicture) -> str:
    rows = [[str(a.tensor.id), a.tensor.name, shape_text(a.tensor), str(owner.tensor.id), owner.tensor.name,
             f"{a.first_op}–{a.last_op}"]
            for owner in p.placed for a in owner.aliases]
    if not rows:
        return ""
    rows.sort(key=lambda r: int(r[0]))
    return ("<h3>Aliases (drawn as dashed marks on their owner)</h3>"
            + _table(["tensor", "name", "shape", "uses the buffer of", "owner name", p.step_name + "s"],
                     rows, [True, False, False, True, False, False]))


def _persistent_table(p: ArenaPicture) -> str:
    if not p.persistent:
        return ""
    rows = [[str(t.id), t.name, shape_text(t), f"{t.size:,}"] for t in p.persistent]
    return (f"<h3>Persistent tensors (kept apart from this arena: {format_bytes(p.persistent_bytes)})</h3>"
            + _table(["tensor", "name", "shape", "bytes"], rows, [True, False, False, True]))


def _measured_section(p: ArenaPicture, measured: MeasuredLayout | None) -> str:
    if measured is None:
        return ""
    ours = f"ours: {format_bytes(p.arena)}" if p.arena else "no offset plan of ours"
    notes = [f"{measured.runtime} measured a working arena of {format_bytes(measured.arena)} ({ours}). "
             f"Rectangles: our tensors on our lifetimes, at TFLite's offsets.", *measured.notes]
    if measured.unmatched:
        extra = "; ".join(f"{what}: {size:,} B" for what, size in measured.unmatched)
        notes.append(f"In TFLite's arena but not drawn (op temporaries are not in the file, so their "
                     f"lifetimes are unknown): {extra}.")
    chart = layout_svg(measured.placed, p.steps, measured.arena, p.lower_bound, p.step_name, "measured")
    return ("<h3>TFLite's measured layout</h3>"
            + "".join(f'<p class="note">{escape(n)}</p>' for n in notes)
            + f'<div class="scroll">{chart}</div>')


def _lines(parts: Iterable[str | Iterator[str]]) -> Iterator[str]:
    """The parts one per line, as "\n".join of the non-empty ones; a part given as an iterator
    of pieces (a chart) is passed on piece by piece (those are never empty)."""
    first = True
    for part in parts:
        if isinstance(part, str) and not part:
            continue
        if not first:
            yield "\n"
        first = False
        if isinstance(part, str):
            yield part
        else:
            yield from part


def _scroll(chunks: Iterator[str]) -> Iterator[str]:
    yield '<div class="scroll">'
    yield from chunks
    yield "</div>"


def _arena_section(index: int, p: ArenaPicture, include_times: bool, measured: MeasuredLayout | None) -> Iterator[str]:
    """One arena's section in pieces: its charts are made as they are written."""
    numbers = chart_numbers()
    parts: list[str | Iterator[str]] = [f'<section class="arena" id="arena-{index}">', f"<h2>{escape(p.title)}</h2>",
             f"<p>{_headline(p)}</p>"]
    if p.dynamic_bounds:
        bounds = ", ".join(f"{name} in [{lo}, {hi}]" for name, lo, hi in p.dynamic_bounds)
        parts.append(f'<p class="note">Dynamic shapes ({escape(bounds)}): sizes are drawn at the largest '
                     f"binding, and a plan made at those sizes is valid for every binding; shapes are as "
                     f"stored in the file.</p>")
    if p.layout_strategy is not None:
        parts += [f"<h3>Layout: {escape(p.layout_strategy)}</h3>",
                  f'<p class="note">{escape(p.layout_note)}; x: {p.step_name}, y: address. '
                  f"Hover a tensor for its name, shape, size, lifetime and offset.</p>",
                  _drawn_note(p, p.placed_total, len(p.placed)),
                  _scroll(layout_svg_chunks(p.placed, p.steps, p.arena, p.lower_bound, p.step_name,
                                            numbers=numbers))]
    parts += [f"<h3>{p.step_name.capitalize()} breadth</h3>",
              f'<p class="note">Bytes alive at each {p.step_name}; no plan can be smaller than its '
              f"largest value, the lower bound.</p>",
              breadth_note(p),
              f'<div class="scroll">{breadth_svg(p)}</div>']
    if p.objects_strategy is not None:
        total = sum(r.size for r in p.object_rows)
        parts += [f"<h3>Shared objects: {escape(p.objects_strategy)}</h3>",
                  f'<p class="note">{len(p.object_rows)} objects, {format_bytes(total)}, '
                  f"{overhead_pct(total, p.object_lower_bound):.1f}% over their lower bound "
                  f"{format_bytes(p.object_lower_bound)}; one row per object, each bar as tall as the "
                  f"tensor's share of it.</p>",
                  _drawn_note(p, p.object_members_total, sum(len(r.tensors) for r in p.object_rows)),
                  _scroll(objects_svg_chunks(p, numbers))]
    parts += [_measured_section(p, measured), _aliases_table(p), _persistent_table(p),
              "<h3>Strategies</h3>", _strategy_table(p, include_times), "</section>"]
    return _lines(parts)


def render_report_html(pictures: Sequence[ArenaPicture], *, source_name: str, semantics: str,
                       strategy: str = "best", include_times: bool = True,
                       measured: Sequence[MeasuredLayout | None] | None = None,
                       first: Sequence[str] = ()) -> str:
    """The page as text, one section per arena picture (packager/pictures.py makes them);
    `measured[i]`, when given, is TFLite's layout of arena i; `first`: as report_html_chunks."""
    return "".join(report_html_chunks(pictures, source_name=source_name, semantics=semantics,
                                      strategy=strategy, include_times=include_times, measured=measured,
                                      first=first))


def report_html_chunks(pictures: Sequence[ArenaPicture], *, source_name: str, semantics: str,
                       strategy: str = "best", include_times: bool = True,
                       measured: Sequence[MeasuredLayout | None] | None = None,
                       first: Sequence[str] = ()) -> Iterator[str]:
    """render_report_html()'s text in pieces, made as they are written: a page of a hundred
    thousand tensors is never one string. `first`: sentences said before anything else (the
    whole arena `package` states, with its standing), one paragraph each."""
    def nth(items: Sequence | None, i: int):
        return items[i] if items is not None and i < len(items) else None

    name = escape(source_name)
    sections = (_arena_section(i, p, include_times, nth(measured, i)) for i, p in enumerate(pictures))
    summary = (f"{len(pictures)} arena{'s' if len(pictures) != 1 else ''} under {escape(semantics)} "
               f"semantics, strategy: {escape(strategy)}. Every plan shown passed the independent validator.")
    yield from _lines([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f"<title>tflpack report: {name}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
        f"<h1>{name}: tensor memory plan</h1>",
        *[f'<p class="first">{escape(line)}</p>' for line in first], f"<p>{summary}</p>", *sections,
        '<div id="info"></div>', f"<script>{_JS}</script>", "</body>", "</html>"])
    yield "\n"


def write_report(path: Path, pictures: Sequence[ArenaPicture], *, source_name: str, semantics: str,
                 strategy: str = "best", include_times: bool = True,
                 measured: Sequence[MeasuredLayout | None] | None = None) -> Path:
    """Write the report page to `path` (atomically) and return the path."""
    html = render_report_html(pictures, source_name=source_name, semantics=semantics, strategy=strategy,
                              include_times=include_times, measured=measured)
    write_atomically(Path(path), html.encode("utf-8"))
    return Path(path)
