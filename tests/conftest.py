"""Shared test helpers: where the real models live (optional) and the fixture models."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_MODELS = REPO.parent / "shared" / "models"
SHARED_NAMES = ("face_detection_short_range", "iris_landmark", "hand_recrop", "selfie_segmentation")


def shared_model_path(name: str) -> Path:
    path = SHARED_MODELS / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"real model {name}.tflite not present (../shared/models is absent)")
    return path


@pytest.fixture(params=SHARED_NAMES)
def shared_model(request) -> Path:
    return shared_model_path(request.param)
