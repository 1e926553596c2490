"""Shared test helpers: where the real models live (optional) and the fixture models."""

from __future__ import annotations

import subprocess
import sys
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


def numba_imported_by(code: str) -> bool:
    """Whether running `code` in a fresh interpreter (from the repository) imports numba: the
    kernels must not be compiled, nor numba loaded, below their size."""
    probe = code + "\nimport sys\nprint('numba' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1] == "True"
