"""The sidecar plan and the header say when the offset plan is proven optimal above its bound."""

from __future__ import annotations

import json

import pytest

from packager.errors import PlanError
from packager.package.load import load
from packager.plan.offsets.exact_search import check_optimal_claim
from packager.plan.records import UsageRecord
from tests.package.support import as_columns, as_rows, file_of, model_file, packaged


def test_the_plan_says_when_its_offsets_are_proven_optimal():
    # nms under TFLite's rules: the largest breadth (396 B) is out of reach, and the exact search
    # proves the best arena optimal; both forms of the sidecar and the header carry that.
    result = packaged("nms", "tflite")
    offsets = result.plan.arenas[0].offsets
    assert offsets.arena_bytes > offsets.lower_bound and offsets.optimal
    assert json.loads(file_of(result, "_plan.json").read_bytes())["arenas"][0]["offsets"]["optimal"]
    assert load(file_of(result, "_plan.tplan"), model_file("nms")).arenas[0].offsets.optimal
    assert b"proven optimal: no offset plan is smaller" in file_of(result, "_plan.h").read_bytes()


def _claiming_optimal(tmp_path, name: str, semantics: str, lift: bool):
    """The JSON sidecar of `name`, hand-edited: offsets.optimal set, and (when `lift`) its largest
    planned tensor moved on top of the arena, a valid plan that is no longer optimal."""
    doc = json.loads(file_of(packaged(name, semantics), "_plan.json").read_bytes())
    offsets = doc["arenas"][0]["offsets"]
    if lift:
        tensors = as_rows(offsets["tensors"])
        aliased = {t["alias_of"] for t in tensors if t.get("alias_of") is not None}
        planned = [t for t in tensors if t.get("alias_of") is None]
        t = max((t for t in planned if t["index"] not in aliased and t["size"] > 0), key=lambda t: t["size"])
        align = doc["alignment"]
        t["offset"] = -(-offsets["arena_bytes"] // align) * align
        offsets["arena_bytes"] = max(u["offset"] + u["size"] for u in planned)
        offsets["tensors"] = as_columns(tensors)
    offsets["optimal"] = True
    path = tmp_path / f"{name}_edited_plan.json"
    path.write_text(json.dumps(doc))
    return path, offsets["arena_bytes"], offsets["lower_bound"]


def test_load_refuses_an_optimal_claim_it_cannot_prove_again(tmp_path):
    # Above the bound, the claim is proved again by the exact search's probe one byte below:
    # a smaller plan exists, so the edited file is refused in one line that says so.
    path, arena, bound = _claiming_optimal(tmp_path, "nms", "tflite", lift=True)
    assert arena > bound
    with pytest.raises(PlanError, match=r"stated optimal at \d+ B, but a plan of \d+ B exists") as e:
        load(path, model_file("nms"))
    assert "\n" not in str(e.value)


def test_load_accepts_a_true_optimal_claim_above_the_bound(tmp_path):
    path, arena, bound = _claiming_optimal(tmp_path, "nms", "tflite", lift=False)
    assert arena > bound
    assert load(path, model_file("nms")).arenas[0].offsets.optimal


def test_the_claim_is_checked_by_bound_or_by_an_exhausted_probe():
    records = [UsageRecord(0, 5, 8, 2), UsageRecord(1, 6, 6, 9)]  # alignment 4: optimum 13 > bound 11
    assert check_optimal_claim(records, 4, 13, 1_000).holds
    assert check_optimal_claim(records, 1, 11, 0).holds  # at the bound: nothing to search
    refused = check_optimal_claim(records, 4, 17, 1_000)
    assert not refused.holds and refused.reason == "a plan of 13 B exists"


def test_a_claim_the_budget_cannot_reprove_is_refused_not_trusted():
    records = [UsageRecord(0, 5, 8, 2), UsageRecord(1, 6, 6, 9)]
    claim = check_optimal_claim(records, 1, 12, 0)  # above the bound (11 B), no node to search
    assert not claim.holds and claim.reason == "no proof within 0 nodes of the exact search"
