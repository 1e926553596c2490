"""Like with like: the best plan set beside TFLite's measured arena covers exactly the tensors that
arena holds, and the tensors it leaves out are listed apart with the reason.

TFLite's `allocate_tensors()` places the tensors of the ops it prepares. It stops preparing after
the first op whose output is dynamic (its size is known only from values), so that output, and
every tensor of the ops after it, get their buffers while the model runs: none of them is in the
measured arena, so none of them may be in the plan it is compared with.
"""

from __future__ import annotations

from packager.compare.predict_tflite import PredictedArena
from packager.lifetimes import DYNAMIC, ArenaLifetimes
from packager.model import Model


def placed_tensors(predictions: list[PredictedArena]) -> list[set[int]]:
    """Per arena, the model's tensors TFLite places when it allocates (aliases included)."""
    return [set(p.offsets) for p in predictions]


def set_apart(model: Model, arenas: list[ArenaLifetimes],
              predictions: list[PredictedArena]) -> tuple[str, ...]:
    """One line per arena that leaves planned or dynamic tensors out of the measured arena."""
    lines = []
    for arena, p in zip(arenas, predictions):
        sg = model.subgraphs[arena.subgraph]
        later = [r for r in arena.records if r.tensor not in p.offsets]
        dynamic = [t for t in arena.ids(DYNAMIC)
                   if sg.tensors[t].type not in ("RESOURCE", "VARIANT")]  # handles: no buffer
        if not later and not dynamic:
            continue
        parts = []
        if dynamic:
            parts.append(f"{len(dynamic)} dynamic (sized from values, allocated outside the arena)")
        if later:
            stop = sg.operators[p.prepared_ops - 1] if p.prepared_ops else None
            where = f" after op {p.prepared_ops - 1} ({stop.name})" if stop else ""
            parts.append(f"{len(later)} allocated while running{where}, "
                         f"{sum(r.size for r in later):,} B, not in the best plan either")
        lines.append(f"subgraph {arena.subgraph}: " + "; ".join(parts))
    return tuple(lines)
