"""Shared by the tests/test_package_*.py files: models on disk, and packaging each one once per
test session (planning with every strategy is the slow part)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

from fixtures.catalog import CATALOG
from packager.package.build import PackageResult, package
from tests.conftest import SHARED_MODELS

_WORK = Path(tempfile.mkdtemp(prefix="tflpack-package-tests-"))
atexit.register(shutil.rmtree, _WORK, ignore_errors=True)


def model_file(name: str) -> Path:
    """A catalog model written to disk, or a shared real model (skips when ../shared is absent)."""
    if name in CATALOG:
        path = _WORK / "models" / f"{name}.tflite"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(CATALOG[name]())
        return path
    path = SHARED_MODELS / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"real model {name}.tflite not present (../shared/models is absent)")
    return path


# Models with dynamic shapes need a bound for every symbol. TFLite Micro ignores shape_signature
# and runs the shapes stored in the file (all 1 here), so these tests bind the symbols there.
STORED_SHAPES = {"dynamic_batch": ("image_0=1",), "dynamic_sequence": ("tokens_1=1",),
                 "dynamic_image": ("image_1=1", "image_2=1")}


@lru_cache(maxsize=None)
def packaged(name: str, semantics: str = "tflm", dims: tuple[str, ...] | None = None) -> PackageResult:
    """The model packaged once per session into its own folder (tests must not modify it);
    `dims` bound its symbols (default: the stored shapes)."""
    folder = f"{name}-{semantics}" + ("" if dims is None else "-" + "-".join(dims).replace("..", "to"))
    return package(model_file(name), _WORK / "out" / folder, semantics=semantics,
                   dims=STORED_SHAPES.get(name, ()) if dims is None else dims)


def file_of(result: PackageResult, suffix: str) -> Path:
    (path,) = [f.path for f in result.files if f.path.name.endswith(suffix)]
    return path


def as_rows(columns: dict[str, list]) -> list[dict]:
    """A plan JSON's columns (a list per key) as one dict per entry."""
    return [dict(zip(columns, values)) for values in zip(*columns.values())]


def as_columns(rows: list[dict]) -> dict[str, list]:
    """as_rows undone: one list per key."""
    return {key: [row[key] for row in rows] for key in rows[0]}


def edit_rows(parent: dict, edit) -> None:
    """Edit the entries of parent["tensors"] (a plan JSON's columns) one dict per entry."""
    rows = as_rows(parent["tensors"])
    edit(rows)
    parent["tensors"] = as_columns(rows)
