"""Stopping a strategy that can no longer meet a target, and resuming it if its plan is needed
after all.

The strategies that place records one at a time and never move them (naive, the greedy
placements, path cover, strip packing) know their arena can no longer meet `limit` as soon as
a record they placed ends above it (strip packing, which fills its skyline from the lowest
segment up, also knows it once the records left over some point can no longer fit under the
limit there). A package needs only the best plan: once one meets the lower bound, such a
strategy could never have been chosen. If none meets it, the stopped
strategies finish where they stopped (the same loop, its state kept), so the plans are exactly
those of uninterrupted runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from packager.plan.records import OffsetPlan, UsageRecord


@dataclass(frozen=True)
class StopRule:
    """Stop once a record placed ends above `limit` bytes. Records at the `ignored` positions
    never stop a strategy: the runtime moves them afterwards (TFLite Micro's scratch buffers),
    so where a strategy puts them says nothing about the arena it will ship."""
    limit: int
    ignored: frozenset[int] = frozenset()

    def watched_sizes(self, records: Sequence[UsageRecord]) -> list[int]:
        """Per record, the bytes whose end is compared with the limit; -1 for ignored records."""
        sizes = [r.size for r in records]
        for i in self.ignored:
            if 0 <= i < len(sizes):
                sizes[i] = -1
        return sizes


class Paused:
    """A strategy a StopRule stopped: `placed` of its `steps` placement steps were done (one per
    record it places) when its arena could no longer meet the limit. `finish()` resumes it and returns the
    plan an uninterrupted run gives (once: the loop's state is used up)."""

    def __init__(self, strategy: str, placed: int, steps: int, finish: Callable[[], OffsetPlan]) -> None:
        self.strategy, self.placed, self.steps = strategy, placed, steps
        self._finish: Callable[[], OffsetPlan] | None = finish

    def finish(self) -> OffsetPlan:
        if self._finish is None:
            raise RuntimeError(f"{self.strategy} was finished already")
        finish, self._finish = self._finish, None
        return finish()
