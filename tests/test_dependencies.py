"""Every library the code imports is declared in pyproject.toml: a fresh install has them all."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions

from tests.conftest import REPO

# tflite-runtime 2.14 needs numpy<2, so it lives in a second environment of its own
# (packager/runtimes/tflite_versions.py), never in this one.
SECOND_ENVIRONMENT = {"tflite_runtime"}


def imported_top_levels() -> set[str]:
    found = set()
    for folder in ("packager", "schemas"):
        for path in (REPO / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    found.update(a.name.split(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m not in ("packager", "schemas")}


def declared() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"]) + list(project["optional-dependencies"]["runtimes"])
    return {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}


def test_every_imported_library_is_declared():
    distributions = packages_distributions()
    missing = []
    for module in sorted(imported_top_levels() - SECOND_ENVIRONMENT):
        names = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        if not names & declared():
            missing.append(module)
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_flatbuffers_is_held_to_one_major_version():
    (spec,) = [r for r in tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
               ["project"]["dependencies"] if r.startswith("flatbuffers")]
    low, high = re.fullmatch(r"flatbuffers>=(\d+)\.\d+,<(\d+)", spec).groups()
    assert int(high) == int(low) + 1
