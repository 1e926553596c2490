"""A model that already carries an OfflineMemoryAllocation (Vela writes one for Ethos-U models):
`package` says so, and either replaces it with its own plan (said in a note) or keeps it (asked
with --keep-offline-plan, or because it is smaller: a packaged model is never worse than the
original); a kept plan leaves the model unchanged and TFLite Micro's head is its extent."""

from __future__ import annotations

from dataclasses import dataclass

from packager.model import Model
from packager.kernels.tflm_offline_plan import offline_plan_of
from packager.plan.records import align_up


@dataclass(frozen=True)
class ExistingPlan:
    offsets: tuple[int, ...]
    head: int  # its extent: the largest offset + size, sizes rounded to 16 as TFLite Micro does
    writer: str  # "Vela" when the model says so, else "another tool"


def existing_plan(model: Model) -> ExistingPlan | None:
    offsets = offline_plan_of(model)
    if offsets is None:
        return None
    tensors = [t for sg in model.subgraphs for t in sg.tensors]
    head = max((o + align_up(t.nbytes or 0, 16) for o, t in zip(offsets, tensors) if o >= 0),
               default=0)
    writer = "Vela" if any(name == "vela_version" for name, _ in model.metadata) else "another tool"
    return ExistingPlan(tuple(offsets), head, writer)


def existing_plan_note(existing: ExistingPlan, plan_head: int, kept: bool, asked: bool = False) -> str:
    what = (f"the model carries an OfflineMemoryAllocation written by {existing.writer} "
            f"({existing.head:,} B head)")
    if kept:
        why = "--keep-offline-plan" if asked else f"it is smaller than this plan's {plan_head:,} B"
        return (f"{what}: kept ({why}), so TFLite Micro uses it and not this plan's offsets; "
                f"the arena figures are for the kept plan")
    return (f"{what}: replaced by this plan ({plan_head:,} B head); --keep-offline-plan keeps it")
