"""Predict TFLite Micro's head from the model file: the `tflm` usage records (one timeline over
all subgraphs, global tensor ids), the kernels' scratch requests appended after the tensors in the
order the kernels ask for them (subgraphs in order, ops in order), and the GreedyMemoryPlanner
(greedy_by_size_tflm). The head is the planner's maximum memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from packager.lifetimes import model_lifetimes
from packager.model import Model
from packager.package.offline_plan import read_offline_plan
from packager.plan.offsets import greedy_by_size_tflm
from packager.errors import PlanError
from packager.plan.records import OffsetPlan, UsageRecord, align_up
from packager.kernels import tflm_scratch
from packager.semantics import TFLM

SCRATCH_ID_BASE = 1 << 30  # record ids of scratch buffers: past any global tensor id


@dataclass(frozen=True)
class PredictedHead:
    head: int  # bytes
    model_head: int  # the same plan's extent over the model's tensors only
    offsets: dict[int, int]  # global tensor id -> offset in the head
    scratch: tuple[tuple[str, int, int], ...]  # (op name, bytes, offset) per request
    uncovered_ops: tuple[str, ...]


def scratch_records(model: Model, op_scopes) -> tuple[list[UsageRecord], list[str], list[str]]:
    records, names, uncovered = [], [], set()
    for s, sg in enumerate(model.subgraphs):
        for i, op in enumerate(sg.operators):
            if (s, i) not in op_scopes:
                continue  # a subgraph no op runs: TFLite Micro never prepares it either
            wanted, known = tflm_scratch.requests(sg, op, model, s)
            if not known:
                uncovered.add(op.name)
            first, last = op_scopes[(s, i)]
            for request in wanted:
                records.append(UsageRecord(SCRATCH_ID_BASE + len(records), first, last,
                                           align_up(request.nbytes, TFLM.size_rounding)))
                names.append(op.name)
    return records, names, sorted(uncovered)


def _as_given(tensors, scratch, fixed) -> OffsetPlan:
    extent = max((fixed[i] + align_up(r.size, TFLM.alignment) for i, r in enumerate(tensors) if i in fixed),
                 default=0)
    free = [r for i, r in enumerate(tensors) if i not in fixed] + list(scratch)
    rest = greedy_by_size_tflm.plan(free, TFLM.alignment) if free else None
    placed = dict(fixed)
    for k, i in enumerate(i for i in range(len(tensors)) if i not in fixed):
        placed[i] = extent + rest.offsets[k]
    offsets = tuple(placed[i] for i in range(len(tensors))) + tuple(
        extent + o for o in (rest.offsets[len(free) - len(scratch):] if rest else ()))
    return OffsetPlan("offline", offsets, extent + (rest.arena if rest else 0), TFLM.alignment)


def predict_tflm(model: Model) -> PredictedHead:
    (arena,) = model_lifetimes(model, TFLM)
    tensors = [r for r in arena.records if r.size > 0]  # zero-byte tensors are never planned
    scratch, names, uncovered = scratch_records(model, arena.op_scopes)
    records = tensors + scratch
    # A model carrying an OfflineMemoryAllocation: TFLite Micro places those tensors where it
    # says and plans the rest (scratch buffers) around them.
    offline = read_offline_plan(model.raw)
    fixed = {} if offline is None else {
        i: offline[r.tensor] for i, r in enumerate(tensors)
        if r.tensor < len(offline) and offline[r.tensor] >= 0}
    try:
        plan = greedy_by_size_tflm.plan(records, TFLM.alignment, fixed=fixed)
    except PlanError:
        # Offsets that overlap live tensors (Vela lets the NPU's scratch hold the input and
        # output): TFLite Micro takes them as they are; its head is their extent.
        plan = _as_given(tensors, scratch, fixed)
    offsets = {r.tensor: o for r, o in zip(tensors, plan.offsets)}
    placed_scratch = tuple((name, r.size, o) for name, r, o in
                           zip(names, scratch, plan.offsets[len(tensors):]))
    model_head = max((o + r.size for r, o in zip(tensors, plan.offsets)), default=0)
    return PredictedHead(plan.arena, model_head, offsets, placed_scratch, tuple(uncovered))
