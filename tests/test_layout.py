"""The shape of the code, checked: imports only run from a later stage to an earlier one, the
emitters only render, and one module outside plan/ runs the strategy portfolio (docs/design.md)."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "packager"

# Stages in the order data flows; a module may import its own stage and earlier ones only.
STAGES = (
    ("read", ("packager", "packager.errors", "packager.model", "packager.reader")),
    ("records", ("packager.plan.records",)),
    ("rules", ("packager.semantics",)),
    ("lifetimes", ("packager.lifetimes", "packager.control_flow")),
    ("plan", ("packager.plan",)),
    ("kernels", ("packager.kernels",)),  # the runtimes' kernel rules; TFLite Micro's arena uses its planner
    ("dynamic", ("packager.dynamic",)),
    ("arenas", ("packager.arenas",)),
    ("emit", ("packager.emit",)),
    ("pictures", ("packager.pictures",)),
    ("runtimes", ("packager.runtimes",)),  # the real runtimes, run in child processes
    ("package", ("packager.package",)),
    ("compare", ("packager.compare",)),  # after package: the packager never needs a comparison
    ("text", ("packager.text",)),
    ("api", ("packager.api", "packager.batch", "packager.gate")),  # the library API, and what runs on it
    ("cli", ("packager.cli", "packager.commands", "packager.entry")),  # entry.py: the command, signals handled first
)
# Emitters render finished data: no runtimes, no lifetimes, no planning.
EMITTERS_MAY_NOT_IMPORT = ("packager.lifetimes", "packager.arenas", "packager.dynamic", "packager.pictures",
                           "packager.compare", "packager.runtimes", "packager.plan.portfolio", "packager.plan.registry",
                           "packager.plan.offsets", "packager.plan.objects")


def stage_of(module: str) -> int:
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(STAGES):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    assert rank is not None, module
    return rank


def modules() -> dict[str, ast.Module]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = ast.parse(path.read_text(encoding="utf-8"))
    return out


def imports(tree: ast.Module) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("packager"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names
                         if (PACKAGE.parent / f"{node.module}.{a.name}".replace(".", "/")).with_suffix(".py").exists())
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("packager"))
    return found


MODULES = modules()


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_run_from_later_stages_to_earlier_ones(module):
    mine = stage_of(module)
    later = sorted(i for i in imports(MODULES[module]) if stage_of(i) > mine)
    assert not later, f"{module} ({STAGES[mine][0]}) imports later stages: {later}"


def test_emitters_only_render():
    for module, tree in MODULES.items():
        if module.startswith("packager.emit"):
            bad = sorted(i for i in imports(tree) if i.startswith(EMITTERS_MAY_NOT_IMPORT))
            assert not bad, f"{module} imports {bad}"


def test_one_module_outside_plan_runs_the_portfolio():
    runners = sorted(m for m, tree in MODULES.items() if not m.startswith("packager.plan")
                     and any(isinstance(n, ast.Name) and n.id == "run_portfolio" for n in ast.walk(tree)))
    assert runners == ["packager.arenas"]
