"""CPU seconds per phase of one model's trip through the packager, at several sizes, with the
growth exponent of each phase: read, lifetimes, lower bounds, every strategy on the model's own
records, validation of every plan, and what `package` adds after planning (files built, checked
and written); then `package` and `plan --strategy best` end to end, each in a fresh process, with
their peak memory.

Times are CPU seconds of this process (time.process_time), so other load on the machine slows
them less than wall-clock time would; they still vary by a few percent from run to run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from benchmarks.text_table import render
from packager.arenas import problem_of
from packager.lifetimes import model_lifetimes
from packager.plan.portfolio import validate
from packager.plan.registry import OBJECT_STRATEGIES, OFFSET_STRATEGIES, INTEGER_PROGRAM_LIMIT
from packager.reader import read_model

REPO = Path(__file__).resolve().parent.parent
SEMANTICS_OF_PACKAGE = "tflm"  # package's default: the offline plan for TFLite Micro
SEMANTICS_OF_PLAN = "tflite"  # plan's default


def cpu(run: Callable[[], object]) -> tuple[object, float]:
    start = time.process_time()
    result = run()
    return result, time.process_time() - start


class Row:
    def __init__(self, name: str) -> None:
        self.name, self.seconds, self.notes = name, {}, {}

    def predicted(self, n: int) -> float | None:
        """Extrapolated from the largest size measured, at least linear (for skipping)."""
        if not self.seconds:
            return None
        sizes = sorted(self.seconds)
        k = 1.0
        if len(sizes) >= 2:
            a, b = sizes[-2], sizes[-1]
            ta, tb = max(self.seconds[a], 1e-3), max(self.seconds[b], 1e-3)
            import math
            k = max(1.0, math.log(tb / ta) / math.log(b / a))
        return self.seconds[sizes[-1]] * (n / sizes[-1]) ** k


def phase_rows(path_of: Callable[[int], Path], sizes: list[int], budget: float) -> list[Row]:
    """Each phase timed on the model of each size (the 'tflite' semantics, as `plan` by default)."""
    rows: dict[str, Row] = {}

    def row(name: str) -> Row:
        return rows.setdefault(name, Row(name))

    for n in sizes:
        model, s = cpu(lambda: read_model(path_of(n)))
        row("read").seconds[n] = s
        arenas, s = cpu(lambda: model_lifetimes(model, SEMANTICS_OF_PLAN))
        row("lifetimes").seconds[n] = s
        problem = problem_of(arenas[0])
        _, s = cpu(lambda: (problem.offset_lower_bound, problem.object_lower_bound))
        row("lower bounds").seconds[n] = s
        plans = []
        for strategy in (*OFFSET_STRATEGIES, *OBJECT_STRATEGIES):
            r = row(f"{strategy.kind} {strategy.name}")
            if strategy.name == "integer_program" and n > INTEGER_PROGRAM_LIMIT:
                r.notes[n] = "above its limit"
                continue
            guess = r.predicted(n)
            if guess is not None and guess > budget:
                r.notes[n] = f"skipped (~{guess:,.0f} s)"
                continue
            plan, s = cpu(lambda: strategy.run(problem))
            r.seconds[n] = s
            plans.append(plan)
        _, s = cpu(lambda: [validate(problem, p) for p in plans])
        row("validation (every plan)").seconds[n] = s
        print(f"  phases at {n:,}: done", file=sys.stderr, flush=True)
    return list(rows.values())


_CHILD = """
import json, resource, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, {repo!r})
what, path = sys.argv[1], sys.argv[2]
start = time.process_time()
if what == "package":
    from packager.package.build import package
    with tempfile.TemporaryDirectory() as out:
        package(path, Path(out) / "out", strategy="best")
else:
    from packager.arenas import plan_model
    from packager.reader import read_model
    plan_model(read_model(path), "tflite", "best")
seconds = time.process_time() - start
try:  # this process's own peak: ru_maxrss would keep the forking parent's, from before exec
    status = Path("/proc/self/status").read_text()
    peak_kb = int(next(l for l in status.splitlines() if l.startswith("VmHWM:")).split()[1])
except (OSError, StopIteration):
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"cpu": seconds, "peak_mb": peak_kb / 1024}}))
"""


def end_to_end(what: str, path: Path, timeout: float) -> dict | str:
    """`package FILE` or `plan FILE --strategy best` in a fresh process: CPU seconds, peak MB."""
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD.format(repo=str(REPO)), what, str(path)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"> {timeout:.0f} s"
    if done.returncode:
        return "error: " + (done.stderr.strip().splitlines() or ["?"])[-1][:60]
    return json.loads(done.stdout.strip().splitlines()[-1])


def render_phases(rows: list[Row], sizes: list[int], exponent: Callable) -> str:
    def cell(r: Row, n: int) -> str:
        return r.notes.get(n) or (f"{r.seconds[n]:.3f}" if n in r.seconds else "-")
    table = [[r.name, *(cell(r, n) for n in sizes),
              "-" if exponent(r.seconds) is None else f"{exponent(r.seconds):.2f}"] for r in rows]
    return render(["phase (CPU s)", *(f"n={n:,}" for n in sizes), "k (fit)"], table)


def render_end_to_end(path_of: Callable[[int], Path], sizes: list[int], timeout: float,
                      exponent: Callable) -> str:
    rows = []
    for what in ("package", "plan"):
        cells, seconds = [], {}
        for n in sizes:
            got = end_to_end(what, path_of(n), timeout)
            if isinstance(got, str):
                cells.append(got)
            else:
                seconds[n] = got["cpu"]
                cells.append(f"{got['cpu']:.2f} s, {got['peak_mb']:.0f} MB")
        k = exponent(seconds)
        label = "package FILE" if what == "package" else "plan FILE --strategy best"
        rows.append([label, *cells, "-" if k is None else f"{k:.2f}"])
    return render(["command (CPU, peak memory)", *(f"n={n:,}" for n in sizes), "k (fit)"], rows)


# -- package, phase by phase -------------------------------------------------------------------

# (label, module, function) timed inside one `package FILE --no-verify` run: each call of the
# function adds its CPU time to its row (nested rows include their callees: 'planning' holds
# every strategy and its validation; 'build the files' holds the writers and read-back checks).
PACKAGE_PHASES = (
    ("read", "packager.package.build", "read_model"),
    ("shape analysis (stored batch)", "packager.package.build", "stored_batch_note"),
    ("planning: every arena, every strategy, validation", "packager.package.build", "plan_arenas"),
    ("sidecar plan from the plans", "packager.package.build", "package_plan"),
    ("check of the plan against the model", "packager.package.build", "check_package_plan"),
    ("TFLite Micro's whole arena", "packager.package.build", "with_runtime_arena"),
    ("build the files (all of the below)", "packager.package.build", "build_files"),
    ("  plan JSON", "packager.package.plan_json", "dumps"),
    ("  plan FlatBuffer", "packager.package.plan_flatbuffer", "dumps"),
    ("  read-back check of both plan files", "packager.package.build", "parse_plan"),
    ("  C header", "packager.package.c_header", "render"),
    ("  C array of the model", "packager.emit.model_array", "render_source_bytes"),
    ("  offline-planned model and its check", "packager.package.build", "check_offline_model"),
    ("report page", "packager.package.build", "report_html"),
    ("write the folder", "packager.package.build", "write_all"),
)


def package_phase_seconds(path: Path) -> tuple[dict[str, float], float]:
    """CPU seconds per phase of one `package` run (verification off), and the whole run's."""
    import importlib
    import tempfile
    from packager.package import build
    spent: dict[str, float] = {}
    originals = []
    for label, module_name, name in PACKAGE_PHASES:
        module = importlib.import_module(module_name)
        # build.py imported some of these by name: patch where package() looks them up
        owner = build if hasattr(build, name) and module_name != "packager.package.build" and \
            getattr(build, name) is getattr(module, name) else module
        real = getattr(owner, name)

        def timed(*args, _real=real, _label=label, **kwargs):
            start = time.process_time()
            try:
                return _real(*args, **kwargs)
            finally:
                spent[_label] = spent.get(_label, 0.0) + time.process_time() - start
        originals.append((owner, name, real))
        setattr(owner, name, timed)
    try:
        with tempfile.TemporaryDirectory() as out:
            start = time.process_time()
            build.package(path, Path(out) / "out", strategy="best")
            total = time.process_time() - start
    finally:
        for owner, name, real in reversed(originals):
            setattr(owner, name, real)
    return spent, total


def render_package_phases(path_of: Callable[[int], Path], sizes: list[int], exponent: Callable) -> str:
    rows = {label: Row(label) for label, _, _ in PACKAGE_PHASES}
    whole = Row("package (whole run, this process)")
    for n in sizes:
        spent, total = package_phase_seconds(path_of(n))
        for label, row in rows.items():
            if label in spent:
                row.seconds[n] = spent[label]
            else:
                row.notes[n] = "not run"
        whole.seconds[n] = total
        print(f"  package phases at {n:,}: done", file=sys.stderr, flush=True)
    return render_phases([*rows.values(), whole], sizes, exponent)
