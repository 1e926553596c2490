"""The TFLite interpreters `compare` can run, and the Python that runs each.

- litert: ai-edge-litert, installed in this environment (the `runtimes` extra).
- tflite-runtime: tflite-runtime 2.14, the last release of the standalone package. It is built
  against numpy 1 and cannot share an environment with numpy 2, so it lives in a second
  environment: the interpreter named by TFLPACK_TFLITE214_PYTHON, else `.venv-tflite214/` at the
  project's root (docs/compare.md, "TFLite versions"). The probe it runs imports only the runtime and the
  standard library, so any Python with tflite-runtime installed will do.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from functools import lru_cache
from dataclasses import dataclass
from pathlib import Path

LITERT = "litert"
TFLITE_RUNTIME = "tflite-runtime"
ALL = "all"
CHOICES = (LITERT, TFLITE_RUNTIME)
ENV_VAR = "TFLPACK_TFLITE214_PYTHON"
SECOND_ENV = Path(__file__).resolve().parents[2] / ".venv-tflite214"
SETUP_214 = ("python3 -m venv .venv-tflite214 && .venv-tflite214/bin/pip install "
             "'tflite-runtime==2.14.0' 'numpy<2'")


@dataclass(frozen=True)
class TfliteChoice:
    name: str  # litert | tflite-runtime
    package: str  # the package the probe imports
    python: str | None  # None: this interpreter
    installed: bool
    missing_reason: str = ""


def _second_python() -> Path:
    named = os.environ.get(ENV_VAR)
    if named:
        return Path(named)
    return SECOND_ENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@lru_cache(maxsize=8)
def _has_tflite_runtime(python: str) -> bool:
    """That interpreter exists and imports tflite_runtime (a half-made environment does not count)."""
    if not Path(python).is_file():
        return False
    try:
        done = subprocess.run([python, "-c", "import tflite_runtime.interpreter"],
                              capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def choice(name: str) -> TfliteChoice:
    if name == LITERT:
        ok = importlib.util.find_spec("ai_edge_litert") is not None
        return TfliteChoice(LITERT, "ai-edge-litert", None, ok,
                            "" if ok else "ai-edge-litert is not installed "
                            "(pip install 'tflpack[runtimes]')")
    if name == TFLITE_RUNTIME:
        python = _second_python()
        ok = _has_tflite_runtime(str(python))
        return TfliteChoice(TFLITE_RUNTIME, "tflite-runtime", str(python) if ok else sys.executable,
                            ok, "" if ok else f"tflite-runtime 2.14 has no environment here (it "
                            f"needs numpy<2): {SETUP_214}, or set {ENV_VAR}")
    raise ValueError(f"unknown TFLite runtime {name!r}: choose one of {', '.join(CHOICES)}, or {ALL}")


def chosen(option: str | None) -> tuple[TfliteChoice, ...]:
    """The runtimes one `--runtime` value asks for. None or `all`: every installed one (litert
    alone when neither is, so that the comparison still says what is missing)."""
    if option in (None, ALL):
        found = tuple(c for c in map(choice, CHOICES) if c.installed)
        return found or (choice(LITERT),)
    return (choice(option),)
