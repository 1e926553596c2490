"""Plan files of format version 1 (an object or table per entry, written by earlier releases: the
files in plans_v1/) still load, and hold field for field what version 2 (columns) holds for
the same model."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import pytest

from packager.package import plan_flatbuffer, plan_json
from packager.package.columns import ENTRY_FIELDS
from packager.package.load import load
from packager.package.sidecar import FORMAT_VERSION, PackagePlan
from tests.package.support import file_of, model_file, packaged

V1 = Path(__file__).parent / "plans_v1"
# (model, semantics, dims): what each version 1 file was packaged from
CASES = [("mobile_block", "tflm", ()), ("while_loop", "tflite", ()), ("inplace_candidates", "tflite", ()),
         ("dynamic_image", "tflm", ("image_1=8..32", "image_2=8..32"))]


def _same_content(old: PackagePlan, new: PackagePlan) -> None:
    """Every field equal but the format version, the entries compared column by column."""
    assert (old.format_version, new.format_version) == (1, FORMAT_VERSION)
    for f in fields(PackagePlan):
        if f.name not in ("format_version", "arenas", "runtime_arena"):
            assert getattr(old, f.name) == getattr(new, f.name), f.name
    # The figures are the same; how far they are proven depends on the run (the old files said
    # exact without a run, the new ones are packaged without one).
    standing = dict(exact=False, reason="", bound="", not_run="")
    assert (old.runtime_arena and replace(old.runtime_arena, **standing)) == \
        (new.runtime_arena and replace(new.runtime_arena, **standing))
    assert len(old.arenas) == len(new.arenas)
    for a, b in zip(old.arenas, new.arenas):
        for f in ("subgraph", "inline", "steps", "objects", "persistent", "persistent_bytes", "passes"):
            assert getattr(a, f) == getattr(b, f), f
        for f in ("strategy", "arena_bytes", "lower_bound", "optimal"):
            assert getattr(a.offsets, f) == getattr(b.offsets, f), f
        for f in ENTRY_FIELDS:
            got, want = a.offsets.tensors[f], b.offsets.tensors[f]
            assert np.array_equal(got, want) if isinstance(got, np.ndarray) else got == want, f
        assert list(a.offsets.tensors) == list(b.offsets.tensors)  # entry by entry, too


@pytest.mark.parametrize("name,semantics,dims", CASES)
def test_version_1_files_hold_what_version_2_files_hold(name, semantics, dims):
    result = packaged(name, semantics, dims or None)
    new_json = plan_json.loads(file_of(result, "_plan.json").read_bytes())
    new_fb = plan_flatbuffer.loads(file_of(result, "_plan.tplan").read_bytes())
    assert new_json == new_fb == result.plan
    old_json = plan_json.loads((V1 / f"{name}-{semantics}.json").read_bytes())
    old_fb = plan_flatbuffer.loads((V1 / f"{name}-{semantics}.tplan").read_bytes())
    assert old_json == old_fb
    _same_content(old_json, new_json)
    _same_content(old_fb, new_fb)


@pytest.mark.parametrize("name,semantics,dims", CASES[:2])
def test_version_1_files_load(name, semantics, dims):
    for suffix in ("json", "tplan"):
        plan = load(V1 / f"{name}-{semantics}.{suffix}", model_file(name))
        assert plan.format_version == 1 and plan.arenas[0].offsets.tensors.count > 0
