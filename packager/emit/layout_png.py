"""A static PNG of one arena's layout, for documents and issue threads: the same rectangles as the
report's SVG (same scale rules, same colours), drawn with Pillow. Deterministic for a given Pillow:
no metadata, no timestamps.
"""

from __future__ import annotations

import colorsys
import io
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from packager.emit.atomic_write import write_atomically
from packager.emit.charts import levels, tensor_hue
from packager.emit.report_data import ArenaPicture
from packager.emit.scale import TimeAddressScale, byte_ticks, short_bytes, step_ticks
from packager.plan.records import overhead_pct

PNG_WIDTH, PNG_HEIGHT = 1200, 600
LEFT, RIGHT, TOP, BOTTOM = 84, 160, 56, 48

BACKGROUND, PLOT, GRID, INK, MUTED = (255, 255, 255), (250, 250, 250), (230, 230, 230), (34, 34, 34), (90, 90, 90)
BOUND, ARENA = (198, 40, 40), (21, 101, 192)


def tensor_rgb(tensor_id: int) -> tuple[int, int, int]:
    """The SVG's hsl(h,55%,62%) as RGB."""
    r, g, b = colorsys.hls_to_rgb(tensor_hue(tensor_id) / 360, 0.62, 0.55)
    return round(r * 255), round(g * 255), round(b * 255)


def png_scale(picture: ArenaPicture, width: int, height: int) -> TimeAddressScale:
    """The plot fills the image between the margins, however many operators there are."""
    top = max(picture.arena, picture.lower_bound, 1)
    plot_width = width - LEFT - RIGHT
    return TimeAddressScale.fit(picture.steps, top, LEFT, TOP, plot_width, height - TOP - BOTTOM,
                                min_step=0.0, max_step=float(plot_width))


def _dashed(draw: ImageDraw.ImageDraw, x0: float, x1: float, y: float, fill: tuple, dash: int = 8) -> None:
    x = x0
    while x < x1:
        draw.line([(round(x), round(y)), (round(min(x + dash, x1)), round(y))], fill=fill, width=2)
        x += 2 * dash


def _levels(draw: ImageDraw.ImageDraw, scale: TimeAddressScale, right: float, picture: ArenaPicture,
            font: ImageFont.ImageFont) -> None:
    """The arena (solid) and lower-bound (dashed) lines, labelled as in the SVG."""
    for kind, value, label, dy in levels(picture.lower_bound, picture.arena):
        y, colour = scale.y(value), (ARENA if kind == "arena" else BOUND)
        if kind == "bound":
            _dashed(draw, scale.left, right, y, colour)
        else:
            draw.line([(round(scale.left), round(y)), (round(right), round(y))], fill=colour, width=2)
        if label:
            draw.text((right + 6, y + dy), f"{label} {short_bytes(value)}", fill=colour, font=font,
                      anchor="lb" if dy < 0 else "ls")


def _fit(draw: ImageDraw.ImageDraw, text: str, font: ImageFont.ImageFont, room: float) -> str:
    """`text`, cut short with an ellipsis if it is wider than `room` pixels (long subgraph names)."""
    if draw.textlength(text, font=font) <= room:
        return text
    while text and draw.textlength(text + "…", font=font) > room:
        text = text[:-1]
    return text + "…"


def render_layout_png(picture: ArenaPicture, heading: str, width: int = PNG_WIDTH,
                      height: int = PNG_HEIGHT) -> bytes:
    """The PNG bytes: tensors as rectangles (x: operator, y: address), bound and arena lines."""
    image = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    font, small = ImageFont.load_default(size=15), ImageFont.load_default(size=12)
    scale = png_scale(picture, width, height)
    top_bytes = max(picture.arena, picture.lower_bound, 1)
    right = scale.x(picture.steps)
    draw.rectangle([LEFT, TOP, round(right), round(scale.bottom)], fill=PLOT, outline=(187, 187, 187))
    for value, label in byte_ticks(top_bytes):
        y = round(scale.y(value))
        draw.line([(LEFT, y), (round(right), y)], fill=GRID)
        draw.text((LEFT - 6, y), label, fill=MUTED, font=small, anchor="rm")
    for step in step_ticks(picture.steps):
        x = round(scale.x(step + 0.5))
        draw.line([(x, round(scale.bottom)), (x, round(scale.bottom) + 4)], fill=MUTED)
        draw.text((x, scale.bottom + 8), str(step), fill=MUTED, font=small, anchor="mt")
    draw.text(((LEFT + right) / 2, scale.bottom + 28), picture.step_name, fill=INK, font=small, anchor="mt")
    draw.text((LEFT - 6, TOP - 2), "address", fill=INK, font=small, anchor="rb")
    for p in picture.placed:
        x, y, w, h = scale.box(p.first_op, p.last_op, p.offset, p.tensor.size)
        box = [round(x), round(y), max(round(x + w) - 1, round(x)), max(round(y + h) - 1, round(y))]
        draw.rectangle(box, fill=tensor_rgb(p.tensor.id), outline=(51, 51, 51))
    for p in picture.placed:  # aliases: an outline over the part of the owner they use
        for a in p.aliases:
            x, y, w, h = scale.box(a.first_op, a.last_op, p.offset, p.tensor.size)
            draw.rectangle([round(x), round(y), max(round(x + w) - 1, round(x)), max(round(y + h) - 1, round(y))],
                           outline=(0, 0, 0), width=2)
    _levels(draw, scale, right, picture, small)
    if any(p.aliases for p in picture.placed):
        draw.text((right, scale.bottom + 28), "bold outline: a tensor computed in place over this one (alias)",
                  fill=MUTED, font=small, anchor="rt")
    draw.text((LEFT, 10), _fit(draw, heading, font, width - LEFT - 8), fill=INK, font=font)
    if picture.layout_strategy:
        summary = (f": {picture.layout_strategy}, {picture.arena:,} B, "
                   f"{overhead_pct(picture.arena, picture.lower_bound):.1f}% over the lower bound "
                   f"{picture.lower_bound:,} B; {len(picture.placed)} tensors")
        room = right - LEFT - draw.textlength(summary, font=small)  # keep clear of the line labels
        draw.text((LEFT, 30), _fit(draw, picture.title, small, room) + summary, fill=MUTED, font=small)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def write_layout_png(path: Path, picture: ArenaPicture, heading: str, width: int = PNG_WIDTH,
                     height: int = PNG_HEIGHT) -> Path:
    write_atomically(Path(path), render_layout_png(picture, heading, width, height))
    return Path(path)
