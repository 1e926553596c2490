"""TFLite's measured arena layout, set beside ours in the report.

The measurement belongs to packager/compare/tflite_runtime.py (the interpreter runs in a child process).
This module only turns it into something the layout chart can draw (emit/report_data.MeasuredLayout):
our planned tensors at TFLite's offsets, on our lifetimes, plus what cannot be drawn (op
temporaries, whose lifetimes the file does not tell). When the runtime is not installed, or refuses the model, there is simply no
measured section.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from packager.arenas import PlannedArena
from packager.emit.report_data import MeasuredLayout
from packager.errors import PlanError
from packager.model import Model
from packager.pictures import placed_tensors, tensor_info
from packager.plan.portfolio import validate
from packager.plan.records import OffsetPlan
from packager.semantics import SEMANTICS


def measured_layout(model: Model, planned: PlannedArena, runtime: str, arena: int, offsets: dict[int, int],
                    extra: Sequence[tuple[str, int]] = (), anchored: bool = True) -> MeasuredLayout:
    """Pair TFLite's offsets (tensor -> offset from the arena's start) with our usage records.
    Tensors TFLite has no offset for are left out rather than guessed, and said so."""
    lifetimes = planned.lifetimes
    records = [r for r in planned.result.problem.records if r.tensor in offsets]
    placed = placed_tensors(model, lifetimes, records, [offsets[r.tensor] for r in records])
    ours = {r.tensor for r in planned.result.problem.records}
    unmatched = list(extra)
    for t in sorted(set(offsets) - ours):
        owner = lifetimes.aliases.get(t)
        if owner is not None and offsets.get(owner) == offsets[t]:
            continue  # TFLite shares the buffer just as we do
        info = tensor_info(model, lifetimes, t)
        unmatched.append((f"tensor {t} '{info.name}' (not a planned tensor of ours)", info.size))
    notes = []
    missing = len(ours) - len(records)
    if missing:
        notes.append(f"{missing} of our planned tensors have no measured offset and are not drawn.")
    if not anchored:
        notes.append("TFLite's offset 0 was inferred, not seen: offsets may be shifted.")
    elif not missing:
        notes.append(_agreement(planned, offsets))
    return MeasuredLayout(runtime, arena, placed, tuple(unmatched), tuple(notes))


def _agreement(planned: PlannedArena, offsets: dict[int, int]) -> str:
    """Whether TFLite's offsets, read as a plan, pass our validator on our records."""
    problem = planned.result.problem
    as_plan = OffsetPlan("tflite (measured)", tuple(offsets[r.tensor] for r in problem.records),
                         max((offsets[r.tensor] + r.size for r in problem.records), default=0),
                         problem.alignment)
    try:
        validate(problem, as_plan)
    except PlanError as e:
        return f"TFLite's offsets do not fit our lifetimes: {e}"
    return "TFLite's offsets, read as a plan for our lifetimes, pass our validator."


def tflite_layouts(model_path: Path, model: Model, arenas: Sequence[PlannedArena],
                   semantics: str) -> list[MeasuredLayout | None]:
    """TFLite's layout of each arena, or None where there is none to compare: only under tflite
    semantics, and only when the runtime is installed and accepts the model."""
    out: list[MeasuredLayout | None] = [None] * len(arenas)
    if not SEMANTICS[semantics].layout_measurable or not arenas:
        return out
    try:
        from packager.compare.tflite_runtime import TfliteMeasurement, measure_tflite  # optional module
    except ImportError:
        return out
    measurement = measure_tflite(Path(model_path), model)
    if not isinstance(measurement, TfliteMeasurement):
        return out  # Unavailable: not installed, refused the model, or crashed
    runtime = f"{measurement.runtime} {measurement.version}"
    by_subgraph = {a.subgraph: a for a in measurement.arenas}
    for i, planned in enumerate(arenas):
        m = by_subgraph.get(planned.lifetimes.subgraph)
        if m is None or planned.lifetimes.inline:
            continue
        temporaries = [(f"temporary {t} (offset {off:,} B)", n) for t, (off, n) in sorted(m.scratch.items())]
        out[i] = measured_layout(model, planned, runtime, m.arena, dict(m.offsets), temporaries, m.anchored)
    return out
