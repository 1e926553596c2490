"""Ctrl-C, SIGTERM and SIGHUP: every one stops a run the same way, whenever it comes.

Each becomes a KeyboardInterrupt, so `finally` blocks clean up (no half-written output), and the
first is said at once, in one line ("interrupted"), however far up the interrupt travels. The run
then exits with the shell's code for that signal: 128 + its number (130 for Ctrl-C, 143 for
SIGTERM, 129 for SIGHUP). This module imports nothing heavy: the command's entry point installs
it before loading anything else, so a signal during start-up is handled too.
"""

from __future__ import annotations

import signal
import sys

STOP_SIGNALS = tuple(s for s in (getattr(signal, n, None) for n in ("SIGINT", "SIGTERM", "SIGHUP"))
                     if s is not None)

_received: list[int] = []  # the first stop signal of this run, once said
_armed = [True]  # whether a signal raises at once (else it is only recorded until arm())


def note(signum: int) -> None:
    """Record a stop signal and say so, once per run."""
    if not _received:
        _received.append(signum)
        try:
            sys.stderr.write("interrupted\n")
            sys.stderr.flush()
        except (OSError, ValueError):  # stderr closed: the exit code still says it
            pass


def _raise_interrupt(signum, frame):
    # Said at once: the interrupt may surface where no handler of ours prints it.
    note(signum)
    if _armed[0]:
        raise KeyboardInterrupt(signal.Signals(signum).name)


def _unraisable(hook_args) -> None:
    """Python ignores an exception raised in a weakref or __del__ callback, printing a traceback
    and going on: our interrupt landing there would be lost. Not printed, it is delivered again,
    to land in the run's own code (except while Python shuts down, when the run is over anyway)."""
    if isinstance(hook_args.exc_value, KeyboardInterrupt) and _received:
        if not sys.is_finalizing():  # sent from another thread: handled after this callback returns
            import os
            import threading
            again = threading.Timer(0.01, os.kill, (os.getpid(), _received[0]))
            again.daemon = True
            again.start()
        return
    _python_unraisable_hook(hook_args)


_python_unraisable_hook = sys.unraisablehook


def arm() -> None:
    """From here on a stop signal raises KeyboardInterrupt at once; one recorded before raises
    now. (The entry point installs the handlers while it is imported, where an exception could
    not be caught, and arms them inside its `try`.)"""
    _armed[0] = True
    if _received:
        raise KeyboardInterrupt(signal.Signals(_received[0]).name)


def announced() -> bool:
    return bool(_received)


def exit_code() -> int:
    """The exit code of a run stopped by a signal: 128 + the signal's number (Ctrl-C when none
    was received, as for a KeyboardInterrupt raised in-process)."""
    return 128 + (_received[0] if _received else signal.SIGINT)


def reset() -> None:
    """A new run in the same process (tests running commands in-process) starts with none."""
    _received.clear()


def install(include_sigint: bool = True, armed: bool = True) -> None:
    """Make the stop signals raise KeyboardInterrupt, said at once (`armed`; else only recorded
    until arm()). Only handlers still at their default are replaced (a caller's own stay); only
    the main thread may set handlers."""
    _armed[0] = armed
    sys.unraisablehook = _unraisable
    try:
        for s in STOP_SIGNALS:
            if s == signal.SIGINT and not include_sigint:
                continue
            if signal.getsignal(s) in (signal.SIG_DFL, signal.default_int_handler, None):
                signal.signal(s, _raise_interrupt)
    except ValueError:  # not the main thread
        pass


def interrupted_exit_code() -> int:
    """Say that the run was interrupted (once: a signal handler may have said it already) and
    give its exit code; a KeyboardInterrupt with no signal recorded counts as Ctrl-C."""
    note(signal.SIGINT)
    return exit_code()
