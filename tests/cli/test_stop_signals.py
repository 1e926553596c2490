"""A stop signal at any moment of a run, start-up included: one line ("interrupted"), the shell's
exit code for that signal (130 Ctrl-C, 143 SIGTERM), no traceback, nothing half-written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO

# Moments of start-up, each named by the import that has just finished (python -X importtime
# writes one line per import to stderr as it finishes): our entry point (its handlers set), the
# command-line library, numpy, the reader, the whole command line.
MOMENTS = ("packager.entry", "typer", "numpy", "packager.reader", "packager.cli")


def stopped_at(moment: str, sig: int, out_dir) -> tuple[int, str]:
    """Run `package` in a child, send `sig` once the import `moment` has finished; (exit code,
    stderr without the import-time lines)."""
    child = subprocess.Popen([sys.executable, "-X", "importtime", str(REPO / "cli.py"), "package",
                              str(REPO / "fixtures" / "models" / "mobile_block.tflite"), "-o", str(out_dir),
                              "--no-verify"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                             # A shell starts background jobs with Ctrl-C ignored, and a child
                             # keeps that (rightly: the command then ignores it too); the child
                             # here starts as from a terminal.
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    for line in child.stderr:
        lines.append(line)
        if line.startswith("import time:") and line.rstrip().endswith(f" {moment}"):
            child.send_signal(sig)
            break
    rest = child.stderr.read()
    code = child.wait(timeout=120)
    said = [line for line in (lines + rest.splitlines(keepends=True)) if not line.startswith("import time:")]
    return code, "".join(said)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("moment", MOMENTS)
def test_a_stop_signal_during_start_up_says_so_in_one_line(tmp_path, moment, sig):
    code, said = stopped_at(moment, sig, tmp_path / "out")
    assert "Traceback" not in said, said
    assert (code, said) == (128 + sig, "interrupted\n"), (code, said)
    assert not (tmp_path / "out").exists()  # nothing written, not even an empty folder


def test_a_signal_landing_in_a_callback_python_ignores_still_stops_the_run():
    """A signal whose KeyboardInterrupt is raised inside a __del__ (where Python ignores exceptions,
    printing a traceback) is delivered again and stops the run's own code: no traceback, 143."""
    script = textwrap.dedent("""
        import os, signal, sys
        from packager import stop_signals
        stop_signals.install()

        class Stopper:
            def __del__(self):
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(100000):  # the handler runs here, inside the callback
                    pass

        try:
            Stopper()
            for _ in range(10**8):
                pass
            print("not stopped")
            sys.exit(0)
        except KeyboardInterrupt:
            sys.exit(stop_signals.exit_code())
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert (r.returncode, r.stdout, r.stderr) == (143, "", "interrupted\n")
