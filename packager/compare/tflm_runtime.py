"""Measure TFLite Micro's arena: build its interpreter (in a child process) with allocation
recording and read the head (planned tensors and scratch buffers) and the tail (persistent
runtime data) from `print_allocations()` (REFERENCE.md section 4).

The arena handed to TFLite Micro must be big enough or it refuses the model; it is sized
generously from the file first (the head cannot exceed the sum of the tensors' sizes), and
retried larger once when TFLite Micro reports that it ran out of arena.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from packager.model import Model
from packager.compare.child import MEASURED, REFUSED, probe
from packager.compare.tflite_runtime import Unavailable

_SLACK = 4 << 20  # tail, scratch buffers and temporaries during planning


@dataclass(frozen=True)
class TflmMeasurement:
    runtime: str
    version: str
    head: int
    tail: int
    total: int
    arena_bytes: int  # the arena we handed it


def first_arena_size(model: Model) -> int:
    tensors = sum(-(-(t.nbytes or 0) // 16) * 16 for sg in model.subgraphs for t in sg.tensors)
    return tensors + len(model.raw) + _SLACK


def _out_of_arena(reason: str) -> bool:
    text = reason.lower()
    return "arena" in text or "failed to allocate" in text and "memory" in text


def measure_tflm(path: Path, model: Model, timeout: float = 120.0) -> TflmMeasurement | Unavailable:
    size = first_arena_size(model)
    result = probe("tflm", Path(path), str(size), timeout=timeout)
    if result.outcome == REFUSED and _out_of_arena(result.reason):
        bigger = probe("tflm", Path(path), str(size * 8), timeout=timeout)
        if bigger.outcome == MEASURED or not _out_of_arena(bigger.reason):
            result = bigger
    data = result.data
    if result.outcome != MEASURED or data.get("head") is None:
        return Unavailable(result.outcome, result.reason or "no allocation recording",
                           data.get("runtime", "tflite-micro"), data.get("version", ""))
    return TflmMeasurement(data["runtime"], data["version"], data["head"], data["tail"],
                           data["total"], data["arena_bytes"])
