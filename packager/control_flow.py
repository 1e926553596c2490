"""How the per-subgraph arenas of a model with control flow add up, when each is planned apart.

A control-flow op (IF, WHILE, CALL_ONCE) runs its child subgraphs one at a time: IF runs one
branch, WHILE alternates its condition and its body, and no two ops of a subgraph run at once.
So a runtime free to place the children's arenas (the `ideal` semantics) needs, for a subgraph,
its own arena plus the largest of its children's, not their sum: the children are alternatives
stacked over the caller's arena. TFLite allocates every subgraph's arena up front, so under
`tflite` semantics they add up, as TFLite measures them (Semantics.children_alternate says which).

Lower bound: while a child runs, the caller's tensors alive at the calling op are alive too, so
  bound(s) = max(bound of s alone, max over calling ops i and children c of live(s, i) + bound(c)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from packager.lifetimes import ArenaLifetimes


@dataclass(frozen=True)
class ModelTotal:
    best: int
    bound: int


def live_bytes(arena: ArenaLifetimes, step: int) -> int:
    """Bytes of the arena's planned tensors alive at `step` (they must all fit at once)."""
    return sum(r.size for r in arena.records if r.first_op <= step <= r.last_op)


def model_total(arenas: Sequence[ArenaLifetimes], best: Mapping[int, int],
                bound: Mapping[int, int], alternate: bool) -> ModelTotal:
    """The whole model's arena from each subgraph's best plan and lower bound (keyed by subgraph).
    `alternate`: children of a control-flow op are alternatives over the caller's arena; else
    (or when the calls form a cycle) every subgraph's arena is counted, as TFLite allocates them."""
    if not alternate or any(a.inline for a in arenas):
        return ModelTotal(sum(best.values()), sum(bound.values()))
    by_index = {a.subgraph: a for a in arenas}
    called = {c for a in arenas for children in a.calls.values() for c in children}
    memo: dict[int, ModelTotal] = {}
    visiting: set[int] = set()

    def total(s: int) -> ModelTotal | None:
        if s in memo:
            return memo[s]
        if s in visiting or s not in by_index:
            return None  # recursion, or a subgraph that has no arena
        visiting.add(s)
        arena = by_index[s]
        child_best, lower = 0, bound.get(s, 0)
        for op, children in sorted(arena.calls.items()):
            for c in children:
                t = total(c)
                if t is None:
                    visiting.discard(s)
                    return None
                child_best = max(child_best, t.best)
                lower = max(lower, live_bytes(arena, op) + t.bound)
        visiting.discard(s)
        memo[s] = ModelTotal(best.get(s, 0) + child_best, lower)
        return memo[s]

    roots = [s for s in by_index if s not in called]
    parts = [total(s) for s in roots]
    if not roots or any(p is None for p in parts):
        return ModelTotal(sum(best.values()), sum(bound.values()))
    return ModelTotal(sum(p.best for p in parts), sum(p.bound for p in parts))
