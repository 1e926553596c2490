"""A shared-object plan over 2D or 3D texture extents, as the TFLite GPU delegate makes them: each
object has an extent (width, height) or (x, y, z) in texels, and its cost is its element count."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod


@dataclass(frozen=True)
class ExtentPlan:
    strategy: str
    assignment: tuple[int, ...]  # the object of each record
    object_extents: tuple[tuple[int, ...], ...]

    @property
    def object_elements(self) -> tuple[int, ...]:
        return tuple(prod(e) for e in self.object_extents)

    @property
    def total(self) -> int:
        """The delegate's total: the objects' element counts summed."""
        return sum(self.object_elements)


def covers(big: tuple[int, ...], small: tuple[int, ...]) -> bool:
    """An object of extent `big` can hold a tensor of extent `small`: no smaller in any dimension."""
    return all(b >= s for b, s in zip(big, small))
