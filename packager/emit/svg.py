"""SVG (and HTML) text primitives: escaping, number formatting and elements, all deterministic.

The pictures are written as text rather than through a DOM so that the bytes depend only on the
input: attributes keep the order they are given in and numbers have a fixed precision.
"""

from __future__ import annotations

from typing import Iterable, Iterator, Mapping

Attrs = Mapping[str, object]


def escape(text: object) -> str:
    """Escape for both HTML and XML text and attribute values. "//" is split too, so that no tensor
    name can put something that looks like a protocol-relative URL into the page."""
    s = str(text)
    if not ("&" in s or "<" in s or ">" in s or '"' in s or "//" in s):
        return s  # most names and values: nothing to replace (tens of thousands per large page)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return s.replace("//", "/&#47;")


def num(value: float) -> str:
    """A coordinate with at most three decimals and no trailing zeros: "12", "0.125"."""
    s = f"{value:.3f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _attrs(attrs: Attrs) -> str:
    parts = []
    for key, value in attrs.items():
        if value is None:
            continue
        if isinstance(value, float):
            parts.append(f' {key}="{num(value)}"')  # digits, '-' and '.': nothing to escape
        elif type(value) is int:
            parts.append(f' {key}="{value}"')
        else:
            parts.append(f' {key}="{escape(value)}"')
    return "".join(parts)


def element(tag: str, attrs: Attrs, children: Iterable[str] = ()) -> str:
    body = "".join(children)
    if not body:
        return f"<{tag}{_attrs(attrs)}/>"
    return f"<{tag}{_attrs(attrs)}>{body}</{tag}>"


def title(text: str) -> str:
    """A <title> child: browsers show it as the element's tooltip."""
    return f"<title>{escape(text)}</title>"


def text(x: float, y: float, content: str, **attrs: object) -> str:
    return f"<text{_attrs({'x': float(x), 'y': float(y), **attrs})}>{escape(content)}</text>"


def line(x1: float, y1: float, x2: float, y2: float, **attrs: object) -> str:
    return element("line", {"x1": float(x1), "y1": float(y1), "x2": float(x2), "y2": float(y2), **attrs})


def svg(width: float, height: float, children: Iterable[str], **attrs: object) -> str:
    """An <svg> for inline use in HTML5, which needs no xmlns (and so no URL in the page)."""
    return element("svg", {"width": float(width), "height": float(height),
                           "viewBox": f"0 0 {num(width)} {num(height)}", **attrs}, children)


def svg_chunks(width: float, height: float, children: Iterable[str], **attrs: object) -> Iterator[str]:
    """svg()'s text in pieces, each child as it is made: a chart of a hundred thousand tensors
    is written out without ever being one string."""
    head = _attrs({"width": float(width), "height": float(height),
                   "viewBox": f"0 0 {num(width)} {num(height)}", **attrs})
    opened = False
    for child in children:
        if not child:
            continue
        if not opened:
            yield f"<svg{head}>"
            opened = True
        yield child
    yield "</svg>" if opened else f"<svg{head}/>"
