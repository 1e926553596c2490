"""The cyclic collector is set once, by the command line (packager/cli.py); the library runs with
it as the caller left it."""

from __future__ import annotations

import ast
import gc

from packager import cli
from packager.package.build import package
from packager.plan import kernels
from tests.conftest import REPO
from tests.package.support import model_file


def test_the_command_line_sets_the_collector_before_any_command_runs(monkeypatch):
    seen = []
    monkeypatch.setattr(cli, "app", lambda **how: seen.append(gc.get_threshold()))
    monkeypatch.setattr(cli.atexit, "register", lambda f: seen.append(f))
    saved = gc.get_threshold()
    try:
        assert cli.run([]) == 0  # (main() is sys.exit(run(argv)))
    finally:
        gc.set_threshold(*saved)
    assert seen == [gc.freeze, cli.COLLECTOR_THRESHOLDS]


def test_the_command_line_collects_after_each_kernel_compile(monkeypatch):
    monkeypatch.setattr(kernels, "AFTER_COMPILE", [])
    monkeypatch.setattr(cli, "app", lambda **how: None)
    monkeypatch.setattr(cli.atexit, "register", lambda f: None)
    saved = gc.get_threshold()
    try:
        cli.run([])
        cli.run([])
    finally:
        gc.set_threshold(*saved)
    assert kernels.AFTER_COMPILE == [gc.collect]  # once, however many commands run


def test_no_library_module_touches_the_collector():
    touching = []
    for path in sorted((REPO / "packager").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        if "gc" in names:
            touching.append(path.relative_to(REPO).as_posix())
    assert touching == ["packager/cli.py"]


def test_package_leaves_the_collector_as_it_found_it(tmp_path):
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            package(model_file("mobile_block"), tmp_path / f"ok{enabled}", verify=False)
            assert gc.isenabled() == enabled and gc.get_freeze_count() == 0
        finally:
            gc.enable()
