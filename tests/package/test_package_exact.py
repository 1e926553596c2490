"""The sidecar plan and the header say when the offset plan is proven optimal above its bound."""

from __future__ import annotations

import json

from packager.package.load import load
from tests.package.support import file_of, model_file, packaged


def test_the_plan_says_when_its_offsets_are_proven_optimal():
    # nms under TFLite's rules: the largest breadth (396 B) is out of reach, and the exact search
    # proves the best arena optimal; both forms of the sidecar and the header carry that.
    result = packaged("nms", "tflite")
    offsets = result.plan.arenas[0].offsets
    assert offsets.arena_bytes > offsets.lower_bound and offsets.optimal
    assert json.loads(file_of(result, "_plan.json").read_bytes())["arenas"][0]["offsets"]["optimal"]
    assert load(file_of(result, "_plan.tplan"), model_file("nms")).arenas[0].offsets.optimal
    assert b"proven optimal: no offset plan is smaller" in file_of(result, "_plan.h").read_bytes()
