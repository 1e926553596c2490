"""Measure many models with TFLite in as few child processes as possible (probe_many.py).

Each model still ends as a ProbeResult of its own: measured, refused, or failed (it crashed the
runtime, or took longer than the time limit for one model). After a failure the next models go to
a new child, so one bad model costs only its own row.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading

from packager.runtimes.child import FAILED, MEASURED, MISSING, REFUSED, ProbeResult, child_env, stop_group
from packager.runtimes.probe import EXIT_MISSING

PER_MODEL_LIMIT = 60.0  # seconds one model may take (load, allocate, one Invoke in a fork)


def _start(package: str, python: str | None) -> subprocess.Popen:
    # Its own process group: stopping it stops the forked copy that runs each Invoke too.
    return subprocess.Popen([python or sys.executable, "-m", "packager.runtimes.probe_many",
                             "tflite", package], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=child_env(), text=True, start_new_session=True)


def _lines(child: subprocess.Popen) -> queue.Queue:
    """The child's output lines, read by a thread (None at the end), so that waiting for one can
    have a time limit."""
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in child.stdout:
            lines.put(line)
        lines.put(None)
    threading.Thread(target=read, daemon=True).start()
    return lines


def _read_line(lines: queue.Queue, limit: float) -> str | None:
    """One line of the child's output, or None when it ended or stayed silent past `limit`."""
    try:
        return lines.get(timeout=limit)
    except queue.Empty:
        return None


def _stop(child: subprocess.Popen) -> int:
    stop_group(child)
    return child.wait()


def measure_many(jobs: list[tuple], package: str = "-", python: str | None = None,
                 limit: float = PER_MODEL_LIMIT) -> list[ProbeResult]:
    """`jobs`: (model path, the 0-d tensors to locate as "S.I,S.I"[, the signature runners'
    subgraphs to allocate last as "S,S"]). One result per job, in order."""
    results: list[ProbeResult] = []
    while len(results) < len(jobs):
        todo = jobs[len(results):]
        child = _start(package, python)
        lines = _lines(child)
        try:
            child.stdin.write("".join("\t".join(map(str, job)) + "\n" for job in todo))
            child.stdin.close()
        except BrokenPipeError:
            pass
        for _ in todo:
            line = _read_line(lines, limit)
            data = None
            if line is not None:
                try:
                    data = json.loads(line)
                except ValueError:
                    data = None
            if data is None:
                code = _stop(child)
                if code == EXIT_MISSING:
                    return results + [ProbeResult(MISSING, {}, f"{package} is not installed")
                                      for _ in jobs[len(results):]]
                why = (f"the runtime did not finish within {limit:.0f} s" if code == -9
                       else f"the runtime crashed (exit {code})")
                results.append(ProbeResult(FAILED, {}, why))
                break
            if "missing" in data:
                _stop(child)
                return results + [ProbeResult(MISSING, data, f"{data['missing']} is not installed")
                                  for _ in jobs[len(results):]]
            outcome = MEASURED if data.get("outcome") == "measured" else REFUSED
            results.append(ProbeResult(outcome, data, data.get("reason", "")))
        else:
            _stop(child)
    return results
