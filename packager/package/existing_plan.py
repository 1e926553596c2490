"""A model that already carries an OfflineMemoryAllocation (Vela writes one for Ethos-U models):
`package` says so, and either replaces it with its own plan (said in a note) or keeps it (asked
with --keep-offline-plan, or because it is smaller: a packaged model is never worse than the
original); a kept plan leaves the model unchanged and TFLite Micro's head is its extent."""

from __future__ import annotations

from dataclasses import dataclass

from packager.errors import PlanError
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


def existing_plan_note(existing: ExistingPlan, plan_head: int, kept: bool, asked: bool = False,
                       unproven_why: str | None = None) -> str:
    what = (f"the model carries an OfflineMemoryAllocation written by {existing.writer} "
            f"({existing.head:,} B head)")
    if kept:
        why = "--keep-offline-plan" if asked else f"it is smaller than this plan's {plan_head:,} B"
        rule = " under the ethos-u scratch rule" if existing.writer == "Vela" else ""
        return (f"{what}: kept ({why}; it passes the validator{rule}), so TFLite Micro uses it and not "
                f"this plan's offsets; the arena figures are for the kept plan")
    if unproven_why:
        return (f"{what}: replaced by this plan ({plan_head:,} B head), since the validator cannot prove "
                f"it: {unproven_why}")
    return (f"{what}: replaced by this plan ({plan_head:,} B head); --keep-offline-plan keeps it")


def head_plan_name(existing: ExistingPlan) -> str:
    """What the summary and the header call a kept plan."""
    return f"the model's own {existing.writer} plan" if existing.writer == "Vela" else "the model's own offline plan"


class UnprovenPlanError(PlanError):
    """--keep-offline-plan on a plan the validator cannot prove."""


def refuse_to_keep(existing: ExistingPlan, why: str) -> UnprovenPlanError:
    return UnprovenPlanError(f"--keep-offline-plan: the model's own OfflineMemoryAllocation (by {existing.writer}) "
                             f"does not pass the validator ({why}); without the option this plan replaces it")


# -- proving a plan the model brings ------------------------------------------------------------

ETHOS_U = "ethos-u"
# TFLite Micro's ethos-u kernel reads its inputs in this order: command stream, read-only data
# (weights), scratch, fast scratch, then the input feature maps; the outputs are its output maps.
SCRATCH, SCRATCH_FAST, FIRST_FEATURE_MAP = 2, 3, 4


def unproven(model: Model, existing: ExistingPlan) -> str | None:
    """Why the model's own plan does not pass the independent validator; None when it does.

    The validator's rules hold, with the one rule under which Vela's overlaps are correct: Vela
    gives every tensor of its scratch memory the address it allocated inside the ethos-u
    operator's scratch area (its writer: offsets of Scratch and Scratch_fast tensors are their
    addresses, the scratch tensors themselves at 0), and the command stream, which Vela also
    wrote, is what reads the operator's input maps and writes its output maps there; TFLite Micro's
    kernel only hands the NPU each tensor's address. So, during that operator, its input and output
    maps that lie inside its scratch area, and a fast scratch at the scratch's own offset (Vela's
    Shared_Sram mode: one memory for both), are that area: one record spanning it, alive as long
    as any of them. Everything else is checked as for any plan."""
    from packager.arenas import arenas_to_plan
    from packager.plan.records import UsageRecord, arena_of, OffsetPlan
    from packager.plan.validate import check_offset_plan
    from packager.semantics import TFLM

    (arena,) = [a.lifetimes for a in arenas_to_plan(model, TFLM.name, None, kernel_scratch=False)]
    offsets = existing.offsets
    placed = {r.tensor: r for r in arena.records if 0 <= r.tensor < len(offsets) and offsets[r.tensor] >= 0}
    first = {sg.index: sum(len(s.tensors) for s in model.subgraphs[:sg.index]) for sg in model.subgraphs}
    merged: dict[int, int] = {}  # tensor -> the scratch tensor whose area holds it
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.name != ETHOS_U or len(op.inputs) <= SCRATCH or op.inputs[SCRATCH] < 0:
                continue
            scratch = first[sg.index] + op.inputs[SCRATCH]
            if scratch not in placed:
                continue
            lo = offsets[scratch]
            hi = lo + align_up(placed[scratch].size, 16)
            fast = [first[sg.index] + op.inputs[SCRATCH_FAST]] if len(op.inputs) > SCRATCH_FAST and op.inputs[SCRATCH_FAST] >= 0 else []
            maps = [first[sg.index] + t for t in (*op.inputs[FIRST_FEATURE_MAP:], *op.outputs) if t >= 0]
            for t in fast:
                if t in placed and offsets[t] == lo and placed[t].size <= placed[scratch].size:
                    merged[t] = scratch
            for t in maps:
                if t in placed and lo <= offsets[t] and offsets[t] + placed[t].size <= hi:
                    merged[t] = scratch
    records, at = [], []
    for t, r in placed.items():
        if t in merged:
            continue
        members = [placed[m] for m, s in merged.items() if s == t]
        if members:
            r = UsageRecord(t, min(x.first_op for x in (r, *members)), max(x.last_op for x in (r, *members)),
                            align_up(r.size, 16))
        records.append(r)
        at.append(offsets[t])
    plan = OffsetPlan("the model's own plan", tuple(at), arena_of(records, at), 16)
    try:
        check_offset_plan(records, plan)
    except PlanError as e:
        return str(e).replace("invalid plan 'the model's own plan': ", "")
    return None
