"""Several models in one TFLite Micro arena: one MicroAllocator shared by a MicroInterpreter per model,
the models set up in a given order and run one at a time.

How TFLite Micro shares it (micro_allocator.cc, single_arena_buffer_allocator.cc at the pinned commit):
- `MicroAllocator::Create` takes its own objects (buffer allocator, memory planner, allocator) from the
  arena's end once; every interpreter's AllocateTensors then takes its model's persistent memory
  (structs, OpData, kernel buffers, scratch handles, variables, the graph inputs' and outputs'
  TfLiteTensors) below what the models before it took: the tails stack, in set-up order, each
  allocation aligned down from where the last one ended (so a model's tail depends on what lies above).
- The head is reused: each model's plan (its own OfflineMemoryAllocation offsets still apply, from the
  arena's start) is laid over the same bytes, and after each set-up TFLite Micro reserves the largest
  plan so far. Set-up shrinks the head to the scratch-request array first, so a model's set-up room
  sits below the tails of the models before it, not below the head of theirs.
So the arena is the largest of: the largest plan + every tail, and each model's set-up need counted
from the tails above it. Running one model overwrites the others' tensors (not their variables, which
are persistent): models share an arena only when they run one at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from packager.kernels.tflm_arena import HOST, Target
from packager.kernels.tflm_whole_arena import ARENA_ALIGNMENT, WholeArena, predict_whole_arena
from packager.model import Model
from packager.plan.records import align_up


# The operators whose arena memory differs between the wheel's build (host) and the sources' (x86_64-linux).
DIFFER_FROM_HOST = frozenset({"FULLY_CONNECTED"})


@dataclass(frozen=True)
class SharedArena:
    target: str
    arena: int  # the smallest arena for all the models: a multiple of 16
    head: int  # the largest plan
    tail: int  # every model's persistent memory and the allocator's objects
    models: tuple[WholeArena, ...]  # each model's figures as set up in order (tail: cumulative)
    binding: str  # "head + tail", or "set-up of model k" (k from 1) when that decides
    least: int  # as WholeArena.least: the figure with no overlapping temporary counted

    @property
    def unmodelled(self) -> tuple[str, ...]:
        return tuple(sorted({u for m in self.models for u in m.unmodelled}))

    @property
    def overlapping(self) -> tuple[str, ...]:
        return tuple(sorted({o for m in self.models for o in m.overlapping}))

    @property
    def side(self) -> str:
        """exact, lower, upper or unknown, as WholeArena.side says for one model."""
        if self.unmodelled:
            return "unknown" if self.overlapping else "lower"
        return "upper" if self.overlapping else "exact"

    @property
    def why_inexact(self) -> str:
        return "; ".join(m.why_inexact for m in self.models if m.why_inexact)

    @property
    def tails(self) -> tuple[int, ...]:
        """Each model's own part of the tail (the first's includes the allocator's objects)."""
        ends = [m.tail for m in self.models]
        return tuple(b - a for a, b in zip([0] + ends[:-1], ends))


def predict_shared_arena(models: Sequence[Model], heads: Sequence[int], target: Target = HOST) -> SharedArena:
    """`heads`: each model's plan size (its offline plan, as packaged), in set-up order."""
    parts: list[WholeArena] = []
    after = None
    for model, head in zip(models, heads, strict=True):
        part = predict_whole_arena(model, target, head=head, after=after)
        parts.append(part)
        after = part.tail
    head, tail = max(heads), parts[-1].tail
    whole = align_up(head + tail, ARENA_ALIGNMENT)
    # Each part's own arena figure is its set-up need (over the tails above it) or its plan over the
    # tail so far, both covered by `whole` when the plan is what decides.
    arena = max(whole, *(p.arena for p in parts))
    least = max(whole, *(p.least for p in parts))
    binding = "head + tail"
    if arena > whole:
        k = max(range(len(parts)), key=lambda i: (parts[i].arena, -i))
        binding = f"set-up of model {k + 1}"
    return SharedArena(target.name, arena, head, tail, tuple(parts), binding, least)
