"""The table of package's planning phases: every strategy the package runs has its row, in
registry order, up to the first that meets the lower bound."""

from __future__ import annotations

from benchmarks import bench_package_planning
from fixtures.write_models import DEFAULT_DIR as FIXTURES_DIR
from packager.plan import portfolio


def test_every_strategy_package_runs_has_a_row(capsys):
    run = portfolio._run
    assert bench_package_planning.main([str(FIXTURES_DIR / "mobile_block.tflite")]) == 0
    assert portfolio._run is run  # the timing wrapper is taken out again
    out = capsys.readouterr().out
    labels = [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("| ")][2:]
    assert labels[:2] == ["records (lifetimes, scratch buffers)", "lower bounds (offsets, objects)"]
    offsets = [label for label in labels if label.startswith("offsets ")]
    assert offsets and offsets[:2] == ["offsets naive", "offsets greedy_in_order"]
    assert "objects naive" in labels and labels[-1].startswith("planning in all")
