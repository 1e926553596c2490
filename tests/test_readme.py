"""The README's two quick-start commands and CI stay in step: CI runs the README's test command
verbatim, and the main-job command packages a model that is in the repository."""

from __future__ import annotations

import re
import shlex

from tests.conftest import REPO


def quick_start_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]


def test_the_quick_start_has_a_main_job_command_and_a_test_command():
    commands = quick_start_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    main_job, tests = commands
    assert "tflpack package" in main_job and "pytest" in tests


def test_ci_runs_the_readmes_test_command_verbatim():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    lines = [line for line in ci.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert lines[-1].strip() == quick_start_commands()[1]


def test_the_main_job_packages_a_model_of_the_repository():
    words = shlex.split(quick_start_commands()[0].split("&&")[-1])
    model = next(w for w in words if w.endswith(".tflite"))
    assert (REPO / model).is_file(), model
    assert words[words.index("package") - 1].endswith("tflpack")
