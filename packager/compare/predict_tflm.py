"""Predict TFLite Micro's head from the model file: the `tflm` usage records (one timeline over
all subgraphs, global tensor ids), the kernels' scratch requests appended after the tensors in the
order the kernels ask for them (subgraphs in order, ops in order), and the GreedyMemoryPlanner
(greedy_by_size_tflm). The head is the planner's maximum memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from packager.lifetimes import model_lifetimes
from packager.model import Model
from packager.plan.offsets import greedy_by_size_tflm
from packager.kernels.tflm_scratch import scratch_records
from packager.semantics import TFLM


@dataclass(frozen=True)
class PredictedHead:
    head: int  # bytes
    model_head: int  # the same plan's extent over the model's tensors only
    offsets: dict[int, int]  # global tensor id -> offset in the head
    scratch: tuple[tuple[str, int, int], ...]  # (op name, bytes, offset) per request
    uncovered_ops: tuple[str, ...]


def predict_tflm(model: Model) -> PredictedHead:
    (arena,) = model_lifetimes(model, TFLM)
    tensors = [r for r in arena.records if r.size > 0]  # zero-byte tensors are never planned
    scratch, names, uncovered = scratch_records(model, arena.op_scopes, TFLM.size_rounding)
    records = tensors + scratch
    plan = greedy_by_size_tflm.plan(records, TFLM.alignment)
    offsets = {r.tensor: o for r, o in zip(tensors, plan.offsets)}
    placed_scratch = tuple((name, r.size, o) for name, r, o in
                           zip(names, scratch, plan.offsets[len(tensors):]))
    model_head = max((o + r.size for r, o in zip(tensors, plan.offsets)), default=0)
    return PredictedHead(plan.arena, model_head, offsets, placed_scratch, tuple(uncovered))
