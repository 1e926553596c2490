"""The page `package` writes shows the offset strategies it stopped above the lower bound as
stopped, in their place in the table, and never with an arena they did not compute."""

from __future__ import annotations

import html
import re

from packager import arenas
from packager.arenas import plan_arenas
from packager.package.build import package
from packager.reader import read_model
from tests.package.support import model_file


def test_the_report_shows_stopped_strategies_as_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(arenas, "STOP_ABOVE_FROM", 0)  # the rule of large models, on a small one
    path = model_file("chain")
    stopped = [s.strategy for s in plan_arenas(read_model(path), "tflm", to_ship=True)[0].result.stopped_above]
    assert stopped  # the chain's first strategies end above the bound
    package(path, tmp_path / "out", verify=False)
    page = html.unescape((tmp_path / "out" / "chain_report.html").read_text())
    table = page[page.index("<h3>Strategies</h3>"):]
    rows = re.findall(r"<tr(?: class=\"chosen\")?><td>offsets</td><td>(?:● )?([a-z_]+)</td>"
                      r"<td class=\"n\">([^<]*)</td>", table)
    shown = [name for name, cell in rows if cell == "stopped above"]
    assert shown == stopped
    assert all(re.fullmatch(r"[\d,]+", cell) for name, cell in rows if name not in stopped)
    note = re.search(r"Stopped above the lower bound, not finished .*? meets it: (.*?)\.(?: Not run|</p>)", table)
    assert note and [part.split(" (after ")[0] for part in note.group(1).split(", ")] == stopped


def test_a_small_model_finishes_every_strategy(tmp_path):
    """Below STOP_ABOVE_FROM records finishing costs milliseconds: the page shows every arena."""
    path = model_file("chain")
    assert not plan_arenas(read_model(path), "tflm", to_ship=True)[0].result.stopped_above
    package(path, tmp_path / "out", verify=False)
    assert "stopped above" not in (tmp_path / "out" / "chain_report.html").read_text()
