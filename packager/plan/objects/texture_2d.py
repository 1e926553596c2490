"""Shared 2D textures (the TFLite GPU delegate's texture objects): a texture can serve a tensor only
if it covers the tensor's extent in both dimensions, and it costs width * height * bytes per texel.

Records go largest footprint first (ties: larger record, then earlier position); each takes the
compatible texture (no member alive at the same time) whose cost grows least when widened,
heightened and deepened to cover it (ties: smaller resulting cost, then lower id), unless a new
texture of its own extent costs less than that growth. A texture's bytes per texel is its widest
member's: a texel format must hold every member's texels.

object_extents holds each texture's (width, height); object_sizes its cost, raised to its largest
member's record size if a caller's byte sizes exceed the texel footprint (every object must hold
its members' bytes).

The TFLite GPU delegate's rule for shared 2D textures (OpenGL's GREEDY_IN_ORDER over extents:
records by first task, each into the released texture that covers it with the least difference in
texels, never grown) is run too, and its plan kept when it costs less (ties: ours): on the inputs
of benchmarks/bench_gpu_delegate.py ours alone was larger on 3 of 60 (up to 7.8%), smaller on 52.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from packager.errors import PlanError
from packager.plan.objects._common import make_plan
from packager.plan.objects import gpu_delegate, gpu_greedy_in_order
from packager.plan.objects.conflicts import bits_to_mask, conflict_index
from packager.plan.records import ObjectPlan, UsageRecord

NAME = "texture_2d"
CHANNELS_PER_TEXEL = 4  # RGBA: bytes_per_texel = 4 * the element size (16 for float32, 8 for half)


def extent_of(shape: Sequence[int]) -> tuple[int, int]:
    """(width, height) in texels of a tensor in the TFLite GPU delegate's 2D texture layout.

    Rule: a BHWC tensor takes width = W * B and height = H * ceil(C / 4). A texel holds 4 channels,
    so the channels split into ceil(C / 4) slices of 4, and the slices are stacked vertically; the
    batch is laid side by side. Shapes of rank < 4 are padded on the left with 1s to BHWC. A texel
    takes 4 * element size bytes (CHANNELS_PER_TEXEL).
    """
    if len(shape) > 4:
        raise PlanError(f"shape {list(shape)} has rank {len(shape)}: "
                        "a 2D texture holds BHWC (rank <= 4)")
    b, h, w, c = [1] * (4 - len(shape)) + [int(d) for d in shape]
    return w * b, h * -(-c // CHANNELS_PER_TEXEL)


def plan(records: Sequence[UsageRecord], extents: Sequence[tuple[int, int]],
         bytes_per_texel: Sequence[int] | int = 1) -> ObjectPlan:
    n = len(records)
    texel_bytes = ([int(bytes_per_texel)] * n if isinstance(bytes_per_texel, (int, np.integer))
                   else [int(b) for b in bytes_per_texel])
    if len(extents) != n or len(texel_bytes) != n:
        raise PlanError(f"{n} records but {len(extents)} extents "
                        f"and {len(texel_bytes)} texel sizes")
    if any(w < 0 or h < 0 for w, h in extents) or any(b < 0 for b in texel_bytes):
        raise PlanError("texture extents and bytes per texel must not be negative")
    footprint = [w * h * b for (w, h), b in zip(extents, texel_bytes)]
    textures = _Textures(n)
    index = conflict_index(records)
    assignment = [0] * n
    for pos in sorted(range(n), key=lambda i: (-footprint[i], -records[i].size, i)):
        (w, h), b = extents[pos], texel_bytes[pos]
        compatible = ~bits_to_mask(index.busy(pos), textures.count)
        obj = textures.cheapest_growth(compatible, w, h, b, footprint[pos])
        assignment[pos] = textures.take(obj, w, h, b, records[pos].size)
        index.add(assignment[pos], pos)
    ours = make_plan(NAME, assignment, textures.sizes(), textures.extents())
    theirs = _delegate_plan(records, extents, texel_bytes)
    return theirs if theirs.total < ours.total else ours


def _delegate_plan(records: Sequence[UsageRecord], extents: Sequence[tuple[int, int]],
                   texel_bytes: Sequence[int]) -> ObjectPlan:
    """The delegate's covering textures, each costed as ours are: its extent times its widest
    member's texel, at least its largest member's bytes."""
    plan = gpu_delegate.in_first_task_order_extents(gpu_greedy_in_order.plan_extents, records, extents)
    depth = [0] * len(plan.object_extents)
    member = [0] * len(plan.object_extents)
    for obj, record, b in zip(plan.assignment, records, texel_bytes):
        depth[obj] = max(depth[obj], b)
        member[obj] = max(member[obj], record.size)
    sizes = [max(w * h * d, m) for (w, h), d, m in zip(plan.object_extents, depth, member)]
    return make_plan(NAME, plan.assignment, sizes, plan.object_extents)


class _Textures:
    """Width, height and bytes per texel of each texture, as arrays for numpy."""

    def __init__(self, capacity: int) -> None:
        self.count = 0
        self._width = np.zeros(capacity, dtype=np.int64)
        self._height = np.zeros(capacity, dtype=np.int64)
        self._depth = np.zeros(capacity, dtype=np.int64)  # bytes per texel
        self._member_bytes = np.zeros(capacity, dtype=np.int64)  # largest member record size

    def cheapest_growth(self, compatible: np.ndarray, w: int, h: int, b: int, own_cost: int) -> int:
        """The compatible texture that grows least to cover (w, h, b), or -1 when a new texture
        would cost less than that growth."""
        if not compatible.any():
            return -1
        ws, hs, ds = (a[:self.count] for a in (self._width, self._height, self._depth))
        grown = np.maximum(ws, w) * np.maximum(hs, h) * np.maximum(ds, b)
        growth = np.where(compatible, grown - ws * hs * ds, np.iinfo(np.int64).max)
        least = growth.min()
        if least > own_cost:
            return -1
        return int(np.argmin(np.where(growth == least, grown, np.iinfo(np.int64).max)))

    def take(self, obj: int, w: int, h: int, b: int, size: int) -> int:
        """Grow texture `obj` (or a new one when obj < 0) to hold the tensor; return its id."""
        if obj < 0:
            obj = self.count
            self.count += 1
        self._width[obj] = max(self._width[obj], w)
        self._height[obj] = max(self._height[obj], h)
        self._depth[obj] = max(self._depth[obj], b)
        self._member_bytes[obj] = max(self._member_bytes[obj], size)
        return obj

    def extents(self) -> list[tuple[int, int]]:
        return list(zip(self._width[:self.count].tolist(), self._height[:self.count].tolist()))

    def sizes(self) -> list[int]:
        cost = self._width[:self.count] * self._height[:self.count] * self._depth[:self.count]
        return np.maximum(cost, self._member_bytes[:self.count]).tolist()
