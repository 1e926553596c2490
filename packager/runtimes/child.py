"""Run the probe in a child process, with a time limit, and turn every way it can end into data.

A runtime that segfaults, aborts or hangs ends the child, never the packager: the caller gets a
ProbeResult whose `outcome` says what happened, with a one-line reason.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from packager.runtimes.probe import EXIT_MISSING, EXIT_REFUSED

MEASURED = "measured"
MISSING = "missing"  # the runtime package is not installed
REFUSED = "refused"  # the runtime would not run this model (custom op, unsupported type...)
FAILED = "failed"  # the child crashed or printed nonsense
TIMED_OUT = "timed out"  # the child did not finish within its time limit, and was stopped

DEFAULT_TIMEOUT = 120.0
_REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class ProbeResult:
    outcome: str
    data: dict
    reason: str = ""
    stdout: str = ""  # everything the child printed on stdout (some probes print a line per try)


@dataclass(frozen=True)
class Unavailable:
    """Why there is no measurement: not installed, refused the model, or crashed."""

    outcome: str
    reason: str
    runtime: str = ""
    version: str = ""


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"the runtime crashed ({signal.Signals(-code).name})"
        except ValueError:
            return f"the runtime crashed (signal {-code})"
    return f"the runtime exited with code {code}"


def _last_json(stdout: str) -> dict | None:
    for line in reversed(stdout.strip().splitlines()):
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        return value if isinstance(value, dict) else None
    return None


def run_probe(args: tuple[str, ...], timeout: float = DEFAULT_TIMEOUT,
              python: str | None = None) -> ProbeResult:
    """`python`: another environment's interpreter (a runtime that needs other libraries, such as
    tflite-runtime 2.14 with numpy<2); the probe imports only the runtime and the standard library."""
    return run_child([python or sys.executable, "-m", "packager.runtimes.probe", *args], timeout)


def child_env() -> dict:
    env = dict(os.environ)
    # The child must import this package even when it runs from a checkout, not an install.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH")) if p)
    return env


def stop_group(child: subprocess.Popen) -> None:
    """Stop a child started with start_new_session=True and everything it started: the probe runs
    one Invoke in a forked copy of itself, which would outlive a child stopped alone."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_child(command: list[str], timeout: float = DEFAULT_TIMEOUT) -> ProbeResult:
    # Its own process group, so that a time limit or an interrupt stops its forks with it.
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=child_env(), stdin=subprocess.DEVNULL, start_new_session=True) as child:
        try:
            stdout, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_group(child)
            child.communicate()
            return ProbeResult(TIMED_OUT, {}, f"did not finish in {timeout:g} s (stopped)")
        except BaseException:  # an interrupt of ours: the child's group must not outlive us
            stop_group(child)
            raise
        finally:
            stop_group(child)  # a fork the child left behind (it waits for its own, but a crash may not)
    done = subprocess.CompletedProcess(command, child.returncode, stdout, stderr)
    data = _last_json(done.stdout)
    if done.returncode == 0 and data is not None:
        return ProbeResult(MEASURED, data, stdout=done.stdout)
    if done.returncode == EXIT_MISSING and data is not None:
        return ProbeResult(MISSING, data, f"{data.get('missing', 'the runtime')} is not installed")
    if done.returncode == EXIT_REFUSED and data is not None:
        return ProbeResult(REFUSED, data, data.get("reason", "refused"))
    tail = " ".join(done.stderr.strip().splitlines()[-1:])[:200]
    return ProbeResult(FAILED, data or {}, _describe_exit(done.returncode) + (f": {tail}" if tail else ""),
                       stdout=done.stdout)


@lru_cache(maxsize=256)
def _cached(args: tuple[str, ...], stamp: tuple[int, int], timeout: float,
            python: str | None = None) -> ProbeResult:
    return run_probe(args, timeout, python)


def probe(kind: str, path: Path, *extra: str, timeout: float = DEFAULT_TIMEOUT,
          python: str | None = None) -> ProbeResult:
    """Measure once per (file contents stamp, arguments, interpreter) for the life of this process."""
    stat = path.stat()
    return _cached((kind, str(path.resolve()), *extra), (stat.st_mtime_ns, stat.st_size), timeout,
                   python)
