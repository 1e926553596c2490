"""TFLite Micro's OfflineMemoryAllocation metadata: the plan as little-endian int32 words.

Layout (TFLite Micro's micro_allocation_info.cc and docs/memory_management.md):
    [version, number_of_subgraphs, n, offset_0, ..., offset_{n-1}]
n is the tensor count of all subgraphs together (subgraphs concatenated in order); TFLite Micro
refuses the model when n differs. Each offset counts from the start of the arena head; -1 lets
TFLite Micro plan the tensor at run time. The first two words are not read by TFLite Micro; we
write version 1 (as TFLite Micro's own allocator tests do) and the subgraph count (as its docs say).
Reading and writing the words is here; putting them into a model's bytes is packaging's
(packager/package/offline_plan.py).
"""

from __future__ import annotations

import numpy as np

from packager.errors import PlanError
from packager.model import Model

METADATA_NAME = "OfflineMemoryAllocation"
FORMAT_VERSION = 1
HEADER_WORDS = 3
NOT_PLANNED = -1
INT32_MAX = 2**31 - 1


def encode(offsets: list[int], num_subgraphs: int) -> bytes:
    for o in offsets:
        if not NOT_PLANNED <= o <= INT32_MAX:
            raise PlanError(f"offset {o} does not fit TFLite Micro's int32 offline offsets")
    words = [FORMAT_VERSION, num_subgraphs, len(offsets), *offsets]
    return np.asarray(words, dtype="<i4").tobytes()


def decode(payload: bytes) -> tuple[int, int, list[int]]:
    """(version, number of subgraphs, offsets); PlanError when the words do not add up."""
    if len(payload) % 4 or len(payload) < 4 * HEADER_WORDS:
        raise PlanError(f"{METADATA_NAME} holds {len(payload)} bytes, not int32 words with a header")
    words = np.frombuffer(payload, dtype="<i4").tolist()
    version, subgraphs, n = words[:HEADER_WORDS]
    if n != len(words) - HEADER_WORDS:
        raise PlanError(f"{METADATA_NAME} announces {n} offsets but holds {len(words) - HEADER_WORDS}")
    return version, subgraphs, words[HEADER_WORDS:]


def offline_plan_of(model: Model) -> list[int] | None:
    """The offsets of the model's own OfflineMemoryAllocation, None when it has none."""
    payload = model.metadata_bytes(METADATA_NAME)
    return None if payload is None else decode(payload)[2]
