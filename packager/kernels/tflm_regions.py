"""TFLite Micro's memory split over two buffers, as `MicroAllocator::Create(persistent, P,
non_persistent, NP)` takes it: what each buffer must hold, from the model file.

The rule (measured: docs/tflm-arena.md, "Two buffers"): the persistent buffer holds the tail,
everything TFLite Micro keeps for the interpreter's life (its allocator objects, taken there
instead of the one-buffer allocator's, then every allocation the one-buffer tail holds, in the
same order, from the buffer's 16-aligned end downwards). The non-persistent buffer holds the head
(the memory plan) and every set-up temporary: the scratch-request array and each node's tensors
while it is prepared, the planning step's AllocationInfo array and the planner's 40 B per
buffer. Its temporaries are checked against its own end, not the tail, so each buffer's figure
is independent of the other's, and a kernel's persistent buffer taken while its temporaries are
live cannot overwrite them (the one-buffer figure's `upper` case does not arise).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from packager.kernels.tflm_arena import Target
from packager.kernels.tflm_whole_arena import ARENA_ALIGNMENT, predict_whole_arena
from packager.model import Model
from packager.plan.records import align_up


@dataclass(frozen=True)
class Split:
    persistent: int  # the persistent buffer: the tail, a multiple of 16
    non_persistent: int  # the non-persistent buffer: the larger of the head and the set-up room
    head: int
    setup: int  # the non-persistent buffer's set-up room (temporaries), before rounding
    unmodelled: tuple[str, ...]  # kernels whose memory is not known: each figure a lower bound

    @property
    def side(self) -> str:
        return "lower" if self.unmodelled else "exact"

    @property
    def binding(self) -> str:
        return "head" if self.head >= self.setup else "set-up"


def predict_split(model: Model, target: Target, head: int | None = None) -> Split:
    """`head`: the plan's size when the model carries its own offline plan (as in
    predict_whole_arena)."""
    whole = predict_whole_arena(model, replace(target, allocator_objects=target.two_buffer_objects), head)
    return Split(persistent=align_up(whole.tail, ARENA_ALIGNMENT),
                 non_persistent=align_up(max(whole.head, whole.temporaries), ARENA_ALIGNMENT),
                 head=whole.head, setup=whole.temporaries, unmodelled=whole.unmodelled)
