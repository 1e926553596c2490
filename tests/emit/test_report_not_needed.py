"""The page `package` writes names the strategies it did not run because a plan already met the
lower bound: a reader of the strategy table must not take their absence for a failure."""

from __future__ import annotations

import html
import re

from packager.package.build import package
from packager.plan.registry import OBJECT_STRATEGIES, OFFSET_STRATEGIES, SEARCHES
from tests.package.support import model_file


def test_the_report_names_the_strategies_not_run(tmp_path):
    package(model_file("mobile_block"), tmp_path / "out", verify=False)
    page = html.unescape((tmp_path / "out" / "mobile_block_report.html").read_text())
    note = re.search(r"Not run, because a plan above already meets the lower bound and none can be "
                     r"smaller: (.*?)\.</p>", page)
    assert note, "the page does not say which strategies were not needed"
    not_run = {}
    for part in note.group(1).split("; "):
        kind, names = part.split(": ")
        not_run[kind] = set(names.split(", "))
    table = page[page.index("<h3>Strategies</h3>"):]
    rows = re.findall(r"<tr(?: class=\"chosen\")?><td>(offsets|objects)</td><td>(?:● )?([a-z_]+)</td>", table)
    ran = {(kind, name) for kind, name in rows}
    assert ran and not_run
    for kind, registry in (("offsets", [s.name for s in OFFSET_STRATEGIES] + list(SEARCHES)),
                           ("objects", [s.name for s in OBJECT_STRATEGIES])):
        shown = {name for k, name in ran if k == kind}
        assert not shown & not_run.get(kind, set())  # never both run and not run
        assert set(registry) <= shown | not_run.get(kind, set())  # every strategy accounted for
