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

from benchmarks.reference_reader import read_reference
from benchmarks.text_table import render
from packager.arenas import arenas_to_plan, problem_of
from packager.lifetimes import model_lifetimes
from packager.plan.portfolio import validate
from packager.errors import SolverLimitError
from packager.plan.registry import OBJECT_STRATEGIES, OFFSET_STRATEGIES
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
    """Each phase timed on the model of each size (the 'tflite' semantics, as `plan` by default),
    after one untimed read and lifetimes of the smallest (imports and first-use caches, which
    every command pays once: the end-to-end table has them)."""
    rows: dict[str, Row] = {}

    def row(name: str) -> Row:
        return rows.setdefault(name, Row(name))

    if sizes:
        model_lifetimes(read_model(path_of(min(sizes))), SEMANTICS_OF_PLAN)
    for n in sizes:
        path = path_of(n)  # may build and cache the model first: not part of reading it
        model, s = cpu(lambda: read_model(path))
        row("read").seconds[n] = s
        arenas, s = cpu(lambda: model_lifetimes(model, SEMANTICS_OF_PLAN))
        row("lifetimes").seconds[n] = s
        problem = problem_of(arenas[0])
        _, s = cpu(lambda: (problem.offset_lower_bound, problem.object_lower_bound))
        row("lower bounds").seconds[n] = s
        _, s = cpu(lambda: arenas_to_plan(model, SEMANTICS_OF_PACKAGE))
        row("lifetimes under tflm, scratch buffers added (arenas to plan)").seconds[n] = s
        plans = []
        for strategy in (*OFFSET_STRATEGIES, *OBJECT_STRATEGIES):
            r = row(f"{strategy.kind} {strategy.name}")
            limit = strategy.max_records
            if limit is not None and n > limit:
                r.notes[n] = "above its limit"
                continue
            guess = r.predicted(n)
            if guess is not None and guess > budget:
                r.notes[n] = f"skipped (~{guess:,.0f} s)"
                continue
            try:
                plan, s = cpu(lambda: strategy.run(problem))
            except SolverLimitError:  # refuses this size (min_cost_flow above 20,000 records)
                r.notes[n] = "refuses"
                continue
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


def render_phases(rows: list[Row], sizes: list[int], exponent: Callable, label: str = "phase (CPU s)") -> str:
    def cell(r: Row, n: int) -> str:
        return r.notes.get(n) or (f"{r.seconds[n]:.3f}" if n in r.seconds else "-")
    table = [[r.name, *(cell(r, n) for n in sizes),
              "-" if exponent(r.seconds) is None else f"{exponent(r.seconds):.2f}"] for r in rows]
    return render([label, *(f"n={n:,}" for n in sizes), "k (fit)"], table)


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
# every strategy and its validation; 'build and write the files' holds the writers, the read-back
# checks and each file's write; 'Class.method' patches the method on its class).
PACKAGE_PHASES = (
    ("read", "packager.package.build", "read_model"),
    ("shape analysis (stored batch)", "packager.package.build", "stored_batch_note"),
    ("planning: every arena, every strategy, validation", "packager.package.build", "plan_arenas"),
    ("sidecar plan from the plans", "packager.package.build", "package_plan"),
    ("check of the plan against the model", "packager.package.build", "check_package_plan"),
    ("TFLite Micro's whole arena", "packager.package.build", "with_runtime_arena"),
    ("build and write the files, one at a time (all of the below)", "packager.package.build", "write_files"),
    ("  plan JSON", "packager.package.plan_json", "dumps"),
    ("  plan FlatBuffer", "packager.package.plan_flatbuffer", "dumps"),
    ("  read-back check of both plan files", "packager.package.build", "checked_plan_file"),
    ("  C header (its columns; its lines are made as written, below)", "packager.package.c_header", "_line_blocks"),
    ("  C array of the model (its rows, formatted a block at a time)", "packager.emit.model_array", "render_rows"),
    ("  offline-planned model and its check", "packager.package.build", "check_offline_model"),
    ("report page: its pictures (its text is made as it is written, in the row below)", "packager.package.build", "report_html"),
    ("  write each file into the temporary folder", "packager.package.output_dir", "StagedFolder.add"),
    ("write the folder (the final moves)", "packager.package.output_dir", "StagedFolder.commit"),
)


READER_REPEATS = 3  # each reader's best of at least this many reads: the ratio moves with the load
READER_SECONDS = 0.5  # and more reads, up to READER_MAX_REPEATS, until each reader has run this long
READER_MAX_REPEATS = 30


def reader_rows(path_of: Callable[[int], Path], sizes: list[int], repeats: int = READER_REPEATS) -> list[Row]:
    """The real reader beside a plain struct-based one reading only what `package` needs
    (benchmarks/reference_reader.py), each on the same file, and their ratio; each the best of
    `repeats` reads or more (until each has run READER_SECONDS: small files are read many times),
    taken in turn, after one untimed read of each (imports, first-use caches). Both run with
    the cycle collector as this process has it."""
    real, floor = Row("read (the reader: typed, checked model)"), Row("read, reference: struct, only what package needs")
    ratio = Row("ratio (the reader / the reference)")

    if sizes:
        read_reference(path_of(sizes[0]))
        read_model(path_of(sizes[0]))
    for n in sizes:
        path = path_of(n)
        spent, done = 0.0, 0
        while done < max(1, repeats) or (spent < READER_SECONDS * 3 and done < READER_MAX_REPEATS):
            for row, read in ((floor, read_reference), (real, read_model)):
                _, s = cpu(lambda: read(path))
                row.seconds[n] = min(row.seconds.get(n, s), s)
                spent += s
            done += 1
        ratio.notes[n] = f"{real.seconds[n] / max(floor.seconds[n], 1e-9):.2f}x"
    return [real, floor, ratio]


def object_memory_rows(path_of: Callable[[int], Path], sizes: list[int]) -> list[Row]:
    """Memory the per-tensor Python objects hold once built (tracemalloc: what is still allocated
    after each step; the model's count leaves out the file's own bytes), in MB and bytes per
    tensor of the model: the model (tensors, operators, their lists and names), the usage
    records and maps of each semantics (lifetimes), and TFLite Micro's arenas to plan (its
    kernels' scratch buffers added)."""
    import gc
    import tracemalloc
    names = ("model: tensors, operators (read)", "lifetimes under tflite", "lifetimes under tflm",
             "tflm arenas to plan (scratch buffers added)")
    rows = {name: Row(name) for name in names}
    for n in sizes:
        path = path_of(n)
        file_bytes = path.stat().st_size
        tensors = max(1, sum(len(sg.tensors) for sg in read_model(path).subgraphs))
        held: list[object] = []
        gc.collect()
        tracemalloc.start()
        try:
            for name, run, minus in (
                    (names[0], lambda: read_model(path), file_bytes),
                    (names[1], lambda: model_lifetimes(held[0], SEMANTICS_OF_PLAN), 0),
                    (names[2], lambda: model_lifetimes(held[0], SEMANTICS_OF_PACKAGE), 0),
                    (names[3], lambda: arenas_to_plan(held[0], SEMANTICS_OF_PACKAGE), 0)):
                gc.collect()
                before = tracemalloc.get_traced_memory()[0]
                held.append(run())
                gc.collect()
                grown = tracemalloc.get_traced_memory()[0] - before - minus
                rows[name].notes[n] = f"{grown / 1e6:.1f} MB, {grown / tensors:.0f} B/tensor"
        finally:
            tracemalloc.stop()
            held.clear()
    return list(rows.values())


def _resident_kb(field: str) -> int | None:
    try:
        status = Path("/proc/self/status").read_text()
        return int(next(l for l in status.splitlines() if l.startswith(field + ":")).split()[1])
    except (OSError, StopIteration, ValueError):
        return None


def _reset_peak() -> bool:
    """Start this process's peak resident memory afresh (Linux: /proc/self/clear_refs)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def package_phase_seconds(path: Path, peaks: dict[str, float] | None = None) -> tuple[dict[str, float], float]:
    """CPU seconds per phase of one `package` run (verification off), and the whole run's;
    `peaks`: filled with each phase's peak resident memory in MB (Linux only), its nested
    phases included."""
    import importlib
    import tempfile
    from packager.package import build
    spent: dict[str, float] = {}
    open_phases: list[str] = []
    originals = []
    for label, module_name, name in PACKAGE_PHASES:
        module = importlib.import_module(module_name)
        if "." in name:  # a method: patched on its class
            class_name, name = name.split(".")
            module = getattr(module, class_name, None)
        if module is None or not hasattr(module, name):
            continue  # renamed or gone in this version of the code: its row says "not run"
        # build.py imported some of these by name: patch where package() looks them up
        owner = build if hasattr(build, name) and module_name != "packager.package.build" and \
            getattr(build, name) is getattr(module, name) else module
        real = getattr(owner, name)

        def timed(*args, _real=real, _label=label, **kwargs):
            if peaks is not None and _reset_peak():
                open_phases.append(_label)
            start = time.process_time()
            try:
                return _real(*args, **kwargs)
            finally:
                spent[_label] = spent.get(_label, 0.0) + time.process_time() - start
                if peaks is not None and open_phases and open_phases[-1] == _label:
                    open_phases.pop()
                    high = (_resident_kb("VmHWM") or 0) / 1024
                    for name in (_label, *open_phases):  # an outer phase's peak covers its inner ones
                        peaks[name] = max(peaks.get(name, 0.0), high)
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


def verification_seconds(path: Path) -> tuple[float, float, str]:
    """`package FILE` with verification on: (CPU seconds of the parent inside the verification,
    CPU seconds of its TFLite Micro child processes, the verdict's first words). The synthetic
    models carry placeholder weights, so TFLite Micro's outputs may differ from the original's:
    the time is what counts here."""
    import resource
    import tempfile
    from packager.errors import PackagerError
    from packager.package import build
    real, got = build.verify_package, {}

    def timed(*args, **kwargs):
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.process_time()
        try:
            result = real(*args, **kwargs)
            got["verdict"] = result.status
            return result
        except PackagerError as e:
            got["verdict"] = "refused: outputs differ" if "differs" in str(e) else "refused"
            raise
        finally:
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            got["parent"] = time.process_time() - start
            got["child"] = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    build.verify_package = timed
    try:
        with tempfile.TemporaryDirectory() as out:
            try:
                build.package(path, Path(out) / "out", strategy="best", verify=True)
            except PackagerError:
                pass
    finally:
        build.verify_package = real
    return got.get("parent", 0.0), got.get("child", 0.0), got.get("verdict", "not run")


def render_package_phases(path_of: Callable[[int], Path], sizes: list[int], exponent: Callable,
                          verify: bool = True) -> str:
    rows = {label: Row(label) for label, _, _ in PACKAGE_PHASES}
    memory = {label: Row(label) for label, _, _ in PACKAGE_PHASES}
    whole = Row("package (whole run, this process)")
    child = Row("verification: TFLite Micro child processes (a separate run, verify on)")
    parent = Row("verification: this process (prediction, files for the child)")
    for n in sizes:
        peaks: dict[str, float] = {}
        spent, total = package_phase_seconds(path_of(n), peaks)
        for label, row in rows.items():
            if label in spent:
                row.seconds[n] = spent[label]
            else:
                row.notes[n] = "not run"
            if label in peaks:
                memory[label].notes[n] = f"{peaks[label]:.0f}"
            else:
                memory[label].notes[n] = "-"
        whole.seconds[n] = total
        if verify:
            mine, theirs, verdict = verification_seconds(path_of(n))
            parent.seconds[n], child.seconds[n] = mine, theirs
            if verdict not in ("verified",):
                child.notes[n] = f"{theirs:.3f} ({verdict})"
        print(f"  package phases at {n:,}: done", file=sys.stderr, flush=True)
    extra = [parent, child] if verify else []
    cpu_table = render_phases([*rows.values(), whole, *extra], sizes, exponent)
    peak_table = render_phases(list(memory.values()), sizes, lambda seconds: None, "phase (peak MB)")
    return (cpu_table + "\n\nPeak resident memory (MB) of this process during each phase, nested phases "
            "included (the whole run's peak is the largest):\n\n" + peak_table)
