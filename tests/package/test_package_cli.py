"""`tflpack package` as a user meets it: the summary, the budget, and output folders that cannot
be written, each with one clear line and DIR left as it was."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from packager.cli import app
from packager.package.output_dir import OutputError, staged_folder, write_all
from tests.package.support import model_file

runner = CliRunner()
EXPECTED = ["mobile_block.tflite", "mobile_block_model.c", "mobile_block_model.h", "mobile_block_op_resolver.h",
            "mobile_block_plan.h", "mobile_block_plan.json", "mobile_block_plan.tplan",
            "mobile_block_report.html"]


def invoke(*args: str):
    result = runner.invoke(app, ["package", *map(str, args)])
    return result.exit_code, result.output


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())} if folder.exists() else {}


def test_package_writes_every_file_and_a_one_screen_summary(tmp_path):
    code, text = invoke(model_file("mobile_block"), "-o", tmp_path / "out")
    assert code == 0, text
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == EXPECTED
    lines = text.splitlines()
    assert len(lines) <= 24
    assert "tflm semantics" in lines[0]
    assert any("lower bound" in line and "%" in line and "arena" in line for line in lines)
    assert any("shared objects" in line for line in lines)
    curve = next(i for i, line in enumerate(lines) if line.strip().startswith("breadth "))
    assert "lower bound" in lines[curve + 2] and "█ arena" in lines[curve + 3]
    assert all(len(line) <= 80 for line in lines[curve:curve + 4])
    for name in EXPECTED:
        assert any(line.strip().startswith(name) for line in lines), name


def test_over_budget_exits_3_and_writes_nothing(tmp_path):
    code, text = invoke(model_file("mobile_block"), "-o", tmp_path / "out", "--budget", "64K")
    assert code == 3
    assert "over the budget of 65,536 B" in text and "error:" in text
    assert len(text.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
    code, _ = invoke(model_file("mobile_block"), "-o", tmp_path / "out", "--budget", "1M")
    assert code == 0


def test_a_bad_budget_or_name_is_bad_input(tmp_path):
    assert invoke(model_file("chain"), "-o", tmp_path / "o", "--budget", "lots")[0] == 2
    code, text = invoke(model_file("chain"), "-o", tmp_path / "o", "--name", "9lives")
    assert code == 2 and "not a C identifier" in text
    code, text = invoke(model_file("chain"), "-o", tmp_path / "o", "--strategy", "equality")
    assert code == 2 and "offset plan" in text


def test_a_custom_op_model_still_packages_with_a_note(tmp_path):
    code, text = invoke(model_file("custom_op"), "-o", tmp_path / "out")
    assert code == 0, text
    notes = [line for line in text.splitlines() if "MyCustomOp" in line and line.startswith("note:")]
    assert len(notes) == 1 and "TFLite Micro will refuse" in notes[0] and "register" in notes[0]
    assert (tmp_path / "out" / "custom_op.tflite").exists()


def test_other_semantics_write_no_offline_model_and_say_why(tmp_path):
    code, text = invoke(model_file("residual"), "-o", tmp_path / "out", "--semantics", "tflite")
    assert code == 0, text
    assert not (tmp_path / "out" / "residual.tflite").exists()
    assert (tmp_path / "out" / "residual_plan.h").exists()
    assert "OfflineMemoryAllocation describes a tflm plan only" in text


def test_an_existing_file_in_the_way(tmp_path):
    target = tmp_path / "out"
    target.write_text("keep me")
    code, text = invoke(model_file("chain"), "-o", target)
    assert code == 2 and "exists and is not a folder" in text
    assert target.read_text() == "keep me"

    folder = tmp_path / "folder"
    (folder / "chain_plan.h").mkdir(parents=True)  # a folder where a file must go
    (folder / "notes.txt").write_text("mine")
    code, text = invoke(model_file("chain"), "-o", folder)
    assert code == 2 and "in the way" in text
    assert sorted(p.name for p in folder.iterdir()) == ["chain_plan.h", "notes.txt"]


def test_a_new_folder_gets_the_usual_permissions(tmp_path):
    umask = os.umask(0)
    os.umask(umask)
    code, text = invoke(model_file("chain"), "-o", tmp_path / "new")
    assert code == 0, text
    assert (tmp_path / "new").stat().st_mode & 0o777 == 0o777 & ~umask
    assert (tmp_path / "new" / "chain_plan.h").stat().st_mode & 0o777 == 0o666 & ~umask


def test_an_existing_folder_keeps_its_other_files(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    (folder / "chain_plan.h").write_text("old")  # the user's: no plan of ours records it
    code, text = invoke(model_file("chain"), "-o", folder)
    assert code == 2 and text.count("\n") == 1
    assert text.startswith(f"error: {folder / 'chain_plan.h'}: in the way and not written by this tool")
    assert snapshot(folder) == {"chain_plan.h": b"old", "notes.txt": b"mine"}
    (folder / "chain_plan.h").unlink()
    code, text = invoke(model_file("chain"), "-o", folder)
    assert code == 0, text
    assert (folder / "notes.txt").read_text() == "mine"
    assert (folder / "chain_plan.h").read_text().startswith("/*")
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no temporary left


def test_the_input_model_is_never_replaced(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "a.tflite").write_bytes(model_file("chain").read_bytes())
    before = snapshot(folder)
    code, text = invoke(folder / "a.tflite", "-o", folder)  # the offline-planned a.tflite would land on it
    assert code == 2 and text.count("\n") == 1, text
    assert text == (f"error: {folder / 'a.tflite'}: the packaged a.tflite would replace the input model; choose "
                    "another prefix with --name (e.g. --name a_planned) or another -o folder\n")
    assert snapshot(folder) == before
    (tmp_path / "link.tflite").symlink_to(folder / "a.tflite")  # through a link, the same
    code, text = invoke(tmp_path / "link.tflite", "-o", folder, "--name", "a")
    assert code == 2 and "would replace the input model" in text
    assert snapshot(folder) == before
    code, text = invoke(folder / "a.tflite", "-o", folder, "--name", "a_planned")
    assert code == 0, text
    assert (folder / "a.tflite").read_bytes() == before["a.tflite"]


def test_two_runs_into_one_new_folder(tmp_path):
    """The folder did not exist when the run began and another run made it meanwhile: this run
    says so and writes nothing; the other run's files stay as they are."""
    out = tmp_path / "out"
    with pytest.raises(OutputError) as failure:
        with staged_folder(out) as folder:
            folder.add("net_plan.h", b"this run")
            out.mkdir()  # the other run commits first
            (out / "net_plan.h").write_bytes(b"the other run")
            folder.commit()
    assert str(failure.value) == (f"{out}: another run wrote this folder while this one was writing; "
                                  "nothing of this run was written, run it again")
    assert snapshot(out) == {"net_plan.h": b"the other run"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary left


def test_an_unwritable_folder(tmp_path):
    if os.geteuid() == 0:
        # Permissions do not stop root; /proc refuses new entries to everyone.
        if not sys.platform.startswith("linux"):
            pytest.skip("running as root, and no folder here refuses root")
        folder = Path("/proc/self")
    else:
        folder = tmp_path / "locked"
        folder.mkdir()
        folder.chmod(0o500)
    before = snapshot(folder) if folder != Path("/proc/self") else None
    code, text = invoke(model_file("chain"), "-o", folder)
    assert code == 2, text
    assert text.startswith("error:") and len(text.strip().splitlines()) == 1
    assert "writ" in text  # "not writable" / "cannot write there"
    if before is not None:
        assert snapshot(folder) == before
        folder.chmod(0o700)


def test_a_folder_that_cannot_be_created(tmp_path):
    (tmp_path / "plain_file").write_text("x")
    code, text = invoke(model_file("chain"), "-o", tmp_path / "plain_file" / "out")
    assert code == 2 and "cannot create it" in text


def test_a_failure_while_writing_leaves_the_folder_as_it_was(tmp_path, monkeypatch):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"old a")
    written = []
    real_write = Path.write_bytes

    def failing_write(self, data):
        written.append(self.name)
        if len(written) == 2:
            raise OSError(28, "No space left on device")
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", failing_write)
    with pytest.raises(OutputError, match="No space left"):
        write_all(folder, {"a.txt": b"new a", "b.txt": b"new b", "c.txt": b"new c"})
    monkeypatch.undo()
    assert snapshot(folder) == {"a.txt": b"old a"}
    written.clear()
    monkeypatch.setattr(Path, "write_bytes", failing_write)  # a new folder: fails on its 2nd file
    with pytest.raises(OutputError):
        write_all(tmp_path / "new", {"a.txt": b"x", "b.txt": b"y"})
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no folder, no temporary
