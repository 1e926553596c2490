"""Predict TFLite Micro's head from the model file: the `tflm` usage records (one timeline over
all subgraphs, global tensor ids), the kernels' scratch requests appended after the tensors in the
order the kernels ask for them (subgraphs in order, ops in order), and the GreedyMemoryPlanner
(greedy_by_size_tflm). The head is the planner's maximum memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from packager.lifetimes import model_lifetimes
from packager.model import Model
from packager.kernels.tflm_offline_plan import offline_plan_of
from packager.plan.offsets import greedy_by_size_tflm
from packager.errors import PlanError
from packager.plan.records import OffsetPlan, align_up
from packager.kernels.tflm_scratch import scratch_records
from packager.semantics import TFLM


@dataclass(frozen=True)
class PredictedHead:
    head: int  # bytes
    model_head: int  # the same plan's extent over the model's tensors only
    offsets: dict[int, int]  # global tensor id -> offset in the head
    scratch: tuple[tuple[str, int, int], ...]  # (op name, bytes, offset) per request
    uncovered_ops: tuple[str, ...]


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


def predict_tflm(model: Model, cmsis_nn: str = "", offline: list[int] | None = None,
                 pointer: int = 8) -> PredictedHead:
    """`cmsis_nn`: the core family of a CMSIS-NN build, whose kernels ask for other scratch
    buffers (kernels/tflm_cmsis_nn.py); `offline`: the OfflineMemoryAllocation the model will
    carry (every tensor's offset in the global numbering, -1 for none), else its own, if any;
    `pointer`: the build's bytes of a pointer (ADD_N's scratch holds one per input)."""
    (arena,) = model_lifetimes(model, TFLM)
    tensors = [r for r in arena.records if r.size > 0]  # zero-byte tensors are never planned
    scratch, names, uncovered = scratch_records(model, arena.op_scopes, TFLM.size_rounding, cmsis_nn, pointer)
    records = tensors + scratch
    # A model carrying an OfflineMemoryAllocation: TFLite Micro places those tensors where it
    # says and plans the rest (scratch buffers) around them.
    offline = offline_plan_of(model) if offline is None else offline
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
