"""The commands benchmark measures each command in its own child process: CPU time, peak memory
and what it printed, on a small model here (the figures at 100,000 operators come from running it)."""

from __future__ import annotations

import pytest

from benchmarks.bench_commands import main, measure, render_rows
from benchmarks.synthetic import SHAPES, tflite_bytes


def test_every_command_is_measured_in_its_own_process(tmp_path):
    def model_of(n):
        path = tmp_path / f"chain_{n}.tflite"
        path.write_bytes(tflite_bytes(SHAPES["chain"](n)))
        return path

    rows = measure(["plan --json", "inspect"], [30, 60], model_of=model_of)
    for row in rows:
        for n, run in row.runs.items():
            assert not run.failed and run.cpu > 0 and run.peak > 10e6 and run.printed > 0, (row.command, n)
    big, small = rows[0].runs[60].printed, rows[0].runs[30].printed
    assert big > 1.5 * small  # plan --json lists every tensor: it grows with the model
    table = render_rows(rows, [30, 60])
    assert table.splitlines()[0].startswith("| command") and "| plan --json " in table


def test_a_failing_command_is_named_not_hidden(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"not a model")
    row = measure(["plan"], [1], model_of=lambda n: bad)[0]
    assert row.runs[1].failed.startswith("exit 2: error:")
    assert "plan at 1: exit 2" in render_rows([row], [1])


def test_unknown_commands_are_refused(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--commands", "plan,fly"])
    assert stop.value.code == 2
    assert "unknown command fly" in capsys.readouterr().err


def test_repeated_runs_keep_the_least_cpu_time(tmp_path, monkeypatch):
    import benchmarks.bench_commands as bench
    model = tmp_path / "chain.tflite"
    model.write_bytes(tflite_bytes(SHAPES["chain"](30)))
    seconds = iter([0.9, 0.4, 0.7])
    monkeypatch.setattr(bench, "run_cli", lambda args, timeout: bench.Run(cpu=next(seconds), peak=1, printed=1))
    row = measure(["inspect"], [30], model_of=lambda n: model, repeat=3)[0]
    assert row.runs[30].cpu == 0.4
