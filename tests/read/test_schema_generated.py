"""The committed generated code is what schemas/generate.sh makes from the committed .fbs files."""

from __future__ import annotations

import filecmp
import shutil
import subprocess

import pytest

from tests.conftest import REPO


def test_generated_code_is_current(tmp_path):
    if shutil.which("flatc") is None:
        pytest.skip("flatc not installed (apt-get install flatbuffers-compiler); CI installs it")
    copy = tmp_path / "schemas"
    shutil.copytree(REPO / "schemas", copy, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["bash", str(copy / "generate.sh")], check=True, capture_output=True)
    for pkg in sorted(p.name for p in (REPO / "schemas").iterdir() if (p / "__init__.py").exists()
                      and p.name != "__pycache__"):
        cmp = filecmp.dircmp(REPO / "schemas" / pkg, copy / pkg, ignore=["__pycache__"])
        assert not (cmp.diff_files or cmp.left_only or cmp.right_only), \
            f"schemas/{pkg} is stale: run schemas/generate.sh ({cmp.diff_files or cmp.left_only or cmp.right_only})"
