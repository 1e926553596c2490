"""The NNC benchmark times NNC's Python loop and its compiled kernel, and checks both give the same
plans (the figures at 100,000 records come from running it)."""

from __future__ import annotations

import pytest

from benchmarks import bench_nnc
from packager.plan import kernels


def test_the_table_has_both_rows_per_shape_and_the_plans_agree(capsys):
    pytest.importorskip("numba", reason="numba is not installed on this platform")
    assert bench_nnc.main(["--sizes", "1000,1500", "--shapes", "chain,branching", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "CPU s" not in line
            and "---" not in line]
    assert [r.split("|")[1].strip() for r in rows] == [
        "chain, Python loop", "chain, kernel, compiled",
        "branching, Python loop", "branching, kernel, compiled"]
    assert all(float(cell) > 0 for r in rows for cell in r.split("|")[2:4])
    assert "The same plans both ways" in out
    assert kernels.COMPILE_FROM == 1_000  # the benchmark puts back what it changes
