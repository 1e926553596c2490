"""`package` writes each file into the temporary folder as soon as it is built, so that a large
model's files are never all in memory at once; DIR still gets all of them or none."""

from __future__ import annotations

from pathlib import Path

import pytest

from packager.errors import PlanError
from packager.package import build
from packager.package.output_dir import OutputError, StagedFolder, staged_folder
from tests.package.support import model_file


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_each_file_is_on_disk_before_the_next_is_built(tmp_path, monkeypatch):
    added: list[tuple[str, list[str]]] = []  # (file, the files already in the temporary folder)
    real_add = StagedFolder.add

    def add(self, name, data):
        added.append((name, listing(self._staging)))
        return real_add(self, name, data)

    monkeypatch.setattr(StagedFolder, "add", add)
    result = build.package(model_file("mobile_block"), tmp_path / "out", verify=False)
    names = [name for name, _ in added]
    for k, (name, on_disk) in enumerate(added):
        assert on_disk == sorted(names[:k]), name  # every earlier file written, nothing else
    assert sorted(names) == listing(tmp_path / "out") == sorted(f.path.name for f in result.files)
    assert all(f.size == f.path.stat().st_size for f in result.files)


def test_a_failure_after_some_files_are_written_leaves_the_folder_as_it_was(tmp_path, monkeypatch):
    out = tmp_path / "out"
    build.package(model_file("chain"), out, verify=False)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def failing_report(*args, **kwargs):  # the last file: every other one is already written
        raise PlanError("the report cannot be drawn")

    monkeypatch.setattr(build, "report_html", failing_report)
    with pytest.raises(PlanError, match="cannot be drawn"):
        build.package(model_file("mobile_block"), out, verify=False)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no hidden temporary folder
    with pytest.raises(PlanError):
        build.package(model_file("mobile_block"), tmp_path / "new", verify=False)
    assert listing(tmp_path) == ["out"]


def test_the_staged_folder_refuses_what_it_cannot_write(tmp_path):
    out = tmp_path / "out"
    (out / "a.txt").mkdir(parents=True)
    with pytest.raises(OutputError, match="a folder is in the way"):
        with staged_folder(out) as folder:
            folder.add("b.txt", b"b")
            folder.add("a.txt", b"a")
    assert listing(out) == ["a.txt"] and listing(out / "a.txt") == []
    with staged_folder(out) as folder:
        folder.add("b.txt", b"b")
        with pytest.raises(ValueError, match="twice"):
            folder.add("b.txt", b"again")
        assert folder.read("b.txt") == b"b"
        assert folder.commit() == [out / "b.txt"]
    assert listing(out) == ["a.txt", "b.txt"] and (out / "b.txt").read_bytes() == b"b"


def test_nothing_reaches_the_folder_without_commit(tmp_path):
    with staged_folder(tmp_path / "new") as folder:
        folder.add("a.txt", b"a")
    with staged_folder(tmp_path) as folder:
        folder.add("b.txt", b"b")
    assert listing(tmp_path) == []
