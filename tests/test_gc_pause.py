"""The collector pauses (packager/gc_pause.py) leave the collector as they found it, and clearing
the free lists leaves no object frozen."""

from __future__ import annotations

import gc

import pytest

from packager.errors import PackagerError
from packager.gc_pause import collector_paused, free_lists_cleared, without_collector_pauses
from packager.package.build import package
from tests.package.support import model_file


def test_a_pause_restores_the_collector_after_an_error():
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError):
        with collector_paused():
            assert not gc.isenabled()
            1 / 0
    assert gc.isenabled()
    gc.disable()
    try:
        without_collector_pauses(lambda: None)()
        assert not gc.isenabled()  # off before, off after
    finally:
        gc.enable()


def test_clearing_the_free_lists_freezes_nothing_and_keeps_the_collector_state():
    class Cycle:
        pass
    before = gc.get_freeze_count()
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        a, b = Cycle(), Cycle()
        a.other, b.other = b, a  # a cycle the clearing must not free or freeze
        free_lists_cleared()
        assert gc.isenabled() == enabled
        assert gc.get_freeze_count() == before
        assert a.other is b and b.other is a
    gc.enable()


def test_package_leaves_the_collector_on(tmp_path):
    assert gc.isenabled()
    package(model_file("mobile_block"), tmp_path / "ok", verify=False)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with pytest.raises(PackagerError):
        package(tmp_path / "missing.tflite", tmp_path / "out")
    assert gc.isenabled()
