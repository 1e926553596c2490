"""A re-run recognises the plan files of earlier runs by their top-level keys, parsing the file
without keeping its entries: a plan is ours, a document that only holds one, a damaged plan or
another JSON file is not."""

from __future__ import annotations

import json

from packager.package.output_dir import PLAN_KEYS, _our_plan


def test_plans_of_ours_and_other_json(tmp_path):
    plan = {**{k: 0 for k in PLAN_KEYS}, "arenas": [{"offsets": {"tensors": [{"index": 1}] * 3}}]}
    cases = {
        "ours": (plan, True),
        "nested": ({"wrapper": plan}, False),
        "list": ([plan], False),
        "partial": ({k: 0 for k in sorted(PLAN_KEYS)[:-1]}, False),
    }
    for name, (doc, ours) in cases.items():
        path = tmp_path / f"{name}_plan.json"
        path.write_text(json.dumps(doc))
        found = _our_plan(path)
        assert (found is not None) is ours, name
        if ours:
            assert found.keys() == plan.keys()
    damaged = tmp_path / "damaged_plan.json"
    damaged.write_text(json.dumps(plan)[:-1])
    assert _our_plan(damaged) is None
    assert _our_plan(tmp_path / "absent_plan.json") is None


def test_a_plan_larger_than_50_mb_is_still_ours(tmp_path):
    # A 100,000-operator model's plan JSON is about 52 MB: a re-run must still recognise it, or
    # the files it wrote would never be found stale.
    plan = tmp_path / "big_plan.json"
    filler = [{"tensor": i, "name": "t" * 500} for i in range(110_000)]
    plan.write_text(json.dumps({**dict.fromkeys(PLAN_KEYS, 0), "filler": filler}))
    assert plan.stat().st_size > 50_000_000
    assert _our_plan(plan) is not None


def test_a_plain_rerun_does_not_read_the_old_plan(tmp_path, monkeypatch):
    """Re-packaging into the same folder rewrites every file of the prefix: nothing can be stale,
    so the old plan (50 MB at 100,000 tensors) is not read; a file left over makes it read."""
    from packager.package import output_dir

    plan = {**dict.fromkeys(PLAN_KEYS, 0), "arenas": []}
    (tmp_path / "net_plan.json").write_text(json.dumps(plan))
    (tmp_path / "net_plan.h").write_text("old")
    (tmp_path / "net_report.html").write_text("old")
    read = []
    monkeypatch.setattr(output_dir, "_our_plan", lambda path: read.append(path) or plan)
    assert output_dir.stale_files(tmp_path, ["net_plan.json", "net_plan.h", "net_report.html"]) == []
    assert read == []
    assert output_dir.stale_files(tmp_path, ["net_plan.json", "net_plan.h"]) == ["net_report.html"]
    assert read == [tmp_path / "net_plan.json"]
