"""The coverage matrix: many small models (fixtures/op_matrix.py), each measured by a TFLite
runtime and set beside the prediction from its file, one row per model and runtime.

A row's verdict:
- exact: every kernel's rule modelled, and every tensor and temporary where predicted, with the
  same arenas, after allocate_tensors() (the state after one Invoke is reported beside it);
- named: not exact, and the prediction says so itself: it names the kernel whose rule is
  missing (PredictedArena.uncovered_ops), so `compare` claims neither exactness nor a saving;
- unnamed: not exact although the prediction claims every kernel is modelled: a missing rule
  nobody has named (the matrix test fails on these);
- refused: the kernel does not accept this mode (the runtime's reason); failed: it crashed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from packager.compare.comparison import check_arena
from packager.compare.predict_tflite import predict_after_invoke, predict_tflite
from packager.compare.tflite_runtime import TfliteMeasurement, _to_locate, measurement_from_probe
from packager.kernels.tflite_scratch import rules_for
from packager.model import Model
from packager.reader import read_model
from packager.runtimes.batch import measure_many
from packager.runtimes.child import MEASURED, ProbeResult
from packager.runtimes.tflite_versions import choice

EXACT, NAMED, UNNAMED, REFUSED, FAILED = "exact", "named", "unnamed", "refused", "failed"


@dataclass(frozen=True)
class Row:
    model: str  # file stem: <op>__<mode>
    runtime: str  # "ai-edge-litert 2.3.0"
    verdict: str
    measured: int | None = None  # arenas after allocate_tensors(), summed
    predicted: int | None = None
    after_invoke: str = ""  # "exact", "not exact: why", or why it was not measured
    why: str = ""  # named: the kernels and rules missing; refused/failed: the runtime's reason


def _uncovered(model: Model, predictions) -> str:
    return "; ".join(sorted({why for p in predictions for why in p.uncovered_why}))


def row_of(path: Path, model: Model, result: ProbeResult, runtime_name: str) -> Row:
    name = path.stem
    if result.outcome != MEASURED:
        label = f"{result.data.get('runtime', '')} {result.data.get('version', '')}".strip()
        verdict = REFUSED if result.outcome == "refused" else FAILED
        return Row(name, label or runtime_name, verdict, why=result.reason)
    measured = measurement_from_probe(model, result)
    if not isinstance(measured, TfliteMeasurement):
        return Row(name, runtime_name, FAILED, why=measured.reason)
    label = f"{measured.runtime} {measured.version}"
    rules = rules_for(measured.runtime, measured.version)
    predictions = predict_tflite(model, rules)
    checks = [check_arena(m, p) for m, p in zip(measured.arenas, predictions)]
    exact = len(checks) == len(predictions) and all(c.exact for c in checks)
    after = "not measured: " + measured.invoke_error if measured.after_invoke is None else ""
    if measured.after_invoke is not None:
        invoked, inexact = predict_after_invoke(model, predictions, rules)
        later = [check_arena(m, p) for m, p in zip(measured.after_invoke, invoked)]
        bad = [f"subgraph {c.subgraph}: {c.why_not_exact}" for c in later if not c.exact]
        after = "exact" if not bad and not inexact else "not exact: " + "; ".join(
            [inexact] * bool(inexact) + bad)
    named = _uncovered(model, predictions)
    why = "; ".join(f"subgraph {c.subgraph}: {c.why_not_exact}" for c in checks if not c.exact)
    if named:
        # A figure that matches although a rule is missing is not called exact: it was luck.
        verdict, why = NAMED, named
    elif exact:
        verdict, why = EXACT, ""
    else:
        verdict = UNNAMED
    return Row(name, label, verdict, measured.total, sum(p.arena for p in predictions), after, why)


def measure_matrix(paths: list[Path], runtime: str) -> list[Row]:
    """Every model under one TFLite runtime (tflite_versions: litert or tflite-runtime)."""
    which = choice(runtime)
    if not which.installed:
        raise RuntimeError(which.missing_reason)
    models = [read_model(p) for p in paths]
    results = measure_many([(p, _to_locate(m)) for p, m in zip(paths, models)],
                           which.package, which.python)
    return [row_of(p, m, r, which.package) for p, m, r in zip(paths, models, results)]


NOT_REGISTERED = ("Didn't find op for builtin opcode", "builtin_code out of range")


def registered_builtins(paths: list[Path], runtime: str) -> set[str]:
    """The builtin operators a runtime has a kernel for, from one probe model per operator code
    and version (fixtures/op_matrix.py's registration_probes, files named <OP>__v<N>): the ones
    it does not refuse for want of a kernel in some version."""
    which = choice(runtime)
    results = measure_many([(p, "") for p in paths], which.package, which.python)
    return {p.stem.rsplit("__", 1)[0] for p, r in zip(paths, results)
            if not any(text in r.reason for text in NOT_REGISTERED)}
