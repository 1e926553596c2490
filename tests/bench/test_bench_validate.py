"""The checker's benchmark runs and prints a row per shape, plan kind and first/further check."""

from __future__ import annotations

from benchmarks import bench_validate


def test_the_checker_benchmark_prints_its_table(capsys):
    assert bench_validate.main(["--sizes", "200,400", "--shapes", "chain,branching", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    for shape in ("chain", "branching"):
        for row in ("object plan, first", "object plan, further", "offset plan, first",
                    "offset plan, further"):
            assert f"| {shape}: {row} " in out
