"""Packaging's side of TFLite Micro's OfflineMemoryAllocation: the model bytes carrying a plan
(the words' format is packager/kernels/tflm_offline_plan.py)."""

from __future__ import annotations

from packager.kernels.tflm_offline_plan import METADATA_NAME, decode, encode
from packager.package.tflite_patch import metadata_buffer, set_metadata_buffer


def with_offline_plan(model_bytes: bytes, offsets: list[int], num_subgraphs: int) -> bytes:
    """The model bytes with the plan as its OfflineMemoryAllocation entry (replacing any)."""
    return set_metadata_buffer(model_bytes, METADATA_NAME, encode(offsets, num_subgraphs))


def read_offline_plan(model_bytes: bytes) -> list[int] | None:
    """The plan a model file carries, read from its bytes (for files not parsed into a Model)."""
    payload = metadata_buffer(model_bytes, METADATA_NAME)
    return None if payload is None else decode(payload)[2]
