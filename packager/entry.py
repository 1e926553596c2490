"""The `tflpack` command's entry point: the stop signals are handled before anything heavy loads
(typer, numpy and the planners take a while to import), so Ctrl-C or SIGTERM during start-up stops
the run as at any other moment: one line, the signal's exit code, no traceback. Importing this
module installs the handlers: it is imported only to run the command."""

from __future__ import annotations

import sys

from packager import stop_signals

stop_signals.install(armed=False)  # recorded, not raised, until main's `try` can catch it


def main() -> None:
    try:
        stop_signals.arm()
        from packager.cli import run
        code = run(sys.argv[1:])
    except KeyboardInterrupt:
        code = stop_signals.interrupted_exit_code()
    sys.exit(code)
