"""A re-run tells its own earlier files from the user's: a file is ours only when a plan of ours
in the folder records it (name, sha256, size) and it still matches; the plan JSON is ours when it
is a plan of this tool carrying that record. Hand-written plans, records of names outside their
prefix, edited files and links are the user's."""

from __future__ import annotations

import hashlib
import json

from packager.package.owned_files import files_of_ours


def plan_recording(files: dict[str, bytes], source: str = "net.tflite", **doc) -> str:
    record = [{"name": n, "sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)} for n, b in files.items()]
    return json.dumps({"format": "tflpack-plan", "format_version": 2, "source": {"file": source},
                       "files": record, **doc})


def test_only_recorded_and_matching_files_are_ours(tmp_path):
    files = {"net_plan.h": b"header", "net_model.c": b"array", "net_report.html": b"page",
             "notes.txt": b"not a name of the prefix", "other_plan.h": b"another prefix's name"}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "net_plan.json").write_text(plan_recording(files))
    (tmp_path / "net_report.html").write_bytes(b"edited")
    (tmp_path / "net_plan.tplan").symlink_to(tmp_path / "net_plan.h")  # a link is never ours
    assert files_of_ours(tmp_path) == {"net_plan.json": "net.tflite", "net_plan.h": "net.tflite",
                                       "net_model.c": "net.tflite"}


def test_plans_that_are_not_ours(tmp_path):
    (tmp_path / "x_plan.h").write_bytes(b"header")
    record = json.loads(plan_recording({"x_plan.h": b"header"}))
    cases = {
        "four keys": {"alignment": 16, "arenas": [], "semantics": "tflm", "source": {"file": "x.tflite"}},
        "no record": {k: v for k, v in record.items() if k != "files"},
        "another format": {**record, "format": "other-plan"},
        "a later version": {**record, "format_version": 99},
        "a bad record": {**record, "files": [{"name": "x_plan.h"}]},
        "a list": [record],
    }
    for what, doc in cases.items():
        (tmp_path / "x_plan.json").write_text(json.dumps(doc))
        assert files_of_ours(tmp_path) == {}, what
    (tmp_path / "x_plan.json").write_text(json.dumps(record)[:-1])  # damaged
    assert files_of_ours(tmp_path) == {}
    (tmp_path / "x_plan.json").write_text(json.dumps(record))
    assert files_of_ours(tmp_path) == {"x_plan.json": "net.tflite", "x_plan.h": "net.tflite"}


def test_a_plan_larger_than_50_mb_is_still_ours(tmp_path):
    # A 100,000-operator model's plan JSON is about 52 MB: a re-run must still recognise it, or
    # the files it wrote would never be its own.
    (tmp_path / "big_plan.h").write_bytes(b"header")
    filler = [{"tensor": i, "name": "t" * 500} for i in range(110_000)]
    (tmp_path / "big_plan.json").write_text(plan_recording({"big_plan.h": b"header"}, filler=filler))
    assert (tmp_path / "big_plan.json").stat().st_size > 50_000_000
    assert files_of_ours(tmp_path) == {"big_plan.json": "net.tflite", "big_plan.h": "net.tflite"}


def test_a_file_of_ours_changed_before_the_commit_stops_the_run(tmp_path):
    import pytest

    from packager.package.output_dir import OutputError
    from packager.package.owned_files import survey

    (tmp_path / "net_plan.h").write_bytes(b"header")
    (tmp_path / "net_plan.json").write_text(plan_recording({"net_plan.h": b"header"}))
    found = survey(tmp_path, ["net_plan.json", "net_model.c"], tmp_path / "net.tflite")
    assert found.stale == ("net_plan.h",)
    found.check_unchanged(tmp_path)
    (tmp_path / "net_plan.h").write_bytes(b"the user's edit")
    with pytest.raises(OutputError, match="net_plan.h: changed while this run was writing"):
        found.check_unchanged(tmp_path)
    # Another model's files of ours are not stale.
    assert survey(tmp_path, ["other_plan.json"], tmp_path / "other.tflite").stale == ()
