"""The one mapping from (operator, address) to picture coordinates, shared by the SVG charts, the
PNG and the tests, plus axis ticks and byte labels.

x grows with the operator index; a tensor alive over ops [first, last] spans x(first) to x(last + 1).
y grows with the address, upwards: address 0 sits on the bottom edge of the plot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

_UNITS = ((1024**3, "GiB"), (1024**2, "MiB"), (1024, "KiB"), (1, "B"))


@dataclass(frozen=True)
class TimeAddressScale:
    left: float  # x of the start of step 0
    step_width: float  # pixels per operator
    bottom: float  # y of address 0
    byte_height: float  # pixels per byte

    @classmethod
    def fit(cls, steps: int, top_bytes: int, left: float, top: float, plot_width: float,
            plot_height: float, min_step: float = 1.0, max_step: float = 28.0) -> "TimeAddressScale":
        """A scale whose plot of `steps` operators and `top_bytes` bytes fills the given box (the
        width shrinks for short models so that one op never gets absurdly wide)."""
        step = min(max(plot_width / max(steps, 1), min_step), max_step)
        return cls(left=left, step_width=step, bottom=top + plot_height,
                   byte_height=plot_height / max(top_bytes, 1))

    def x(self, step: float) -> float:
        return self.left + step * self.step_width

    def y(self, address: float) -> float:
        return self.bottom - address * self.byte_height

    def box(self, first_op: int, last_op: int, offset: int, size: int) -> tuple[float, float, float, float]:
        """(x, y, width, height) of a buffer of `size` bytes at `offset`, alive over [first, last]."""
        x0, x1 = self.x(first_op), self.x(last_op + 1)
        return x0, self.y(offset + size), x1 - x0, size * self.byte_height

    def data_attributes(self) -> dict[str, str]:
        """The scale written onto the <svg>, at full precision, so a reader can invert it."""
        return {"data-x0": f"{self.left:.9g}", "data-step-width": f"{self.step_width:.9g}",
                "data-y0": f"{self.bottom:.9g}", "data-byte-height": f"{self.byte_height:.9g}"}


def _nice(raw: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten that is at least `raw`."""
    if raw <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw * (1 - 1e-12))


def step_ticks(steps: int, most: int = 10) -> list[int]:
    """Operator indices to label: 0 and multiples of a round step, at most `most` of them."""
    if steps <= 0:
        return []
    every = max(1, int(_nice(steps / most)))
    return list(range(0, steps, every))


def byte_ticks(top: int, most: int = 5) -> list[tuple[int, str]]:
    """(bytes, label) pairs at round values of a binary unit from 0 up to `top`."""
    if top <= 0:
        return [(0, "0 B")]
    factor, unit = next((f, u) for f, u in _UNITS if top / f >= 2 or f == 1)
    every = _nice(top / factor / most)
    ticks, k = [], 0
    while k * every * factor <= top:
        value = k * every
        ticks.append((round(value * factor), "0 B" if k == 0 else f"{value:g} {unit}"))
        k += 1
    return ticks


# Exact bytes with thousands separators, the way every table of the project prints them (a
# str.format field, so that a template of many rows can hold it).
BYTES_FORMAT = "{:,} B"


def format_bytes(n: int) -> str:
    """Exact bytes with thousands separators, the way every table of the project prints them."""
    return BYTES_FORMAT.format(n)


def short_bytes(n: int) -> str:
    """A compact size for tight labels: "512 B", "1.5 KiB", "768 KiB", "1.21 MiB"."""
    for factor, unit in _UNITS:
        if n >= factor and factor > 1:
            return f"{n / factor:.3g} {unit}"
    return f"{n} B"
