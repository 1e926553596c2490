"""The coverage matrix: many small models (fixtures/op_matrix.py), each measured by a TFLite
runtime and set beside the prediction from its file, one row per model and runtime.

A row's verdict:
- exact: every kernel's rule modelled, and every tensor and temporary where predicted, with the
  same arenas, after allocate_tensors() (the state after one Invoke is reported beside it);
- named: not exact, and the prediction says so itself: it names the kernel whose rule is
  missing (PredictedArena.uncovered_ops), so `compare` claims neither exactness nor a saving;
- unnamed: not exact although the prediction claims every kernel is modelled: a missing rule
  nobody has named (the matrix test fails on these);
- refused: the kernel does not accept this mode (the runtime's reason); failed: it crashed;
- hidden: a 0-d tensor (which Python hands out as a copy) could not be located by writing into
  it, twice: the measurement is a lower bound, and the prediction neither confirmed nor refuted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from packager.compare.comparison import check_arena, signature_arenas
from packager.compare.predict_tflite import predict_after_invoke, predict_tflite
from packager.compare.tflite_runtime import (TfliteMeasurement, _to_locate,
                                             measurement_from_probe, runner_subgraphs)
from packager.kernels.tflite_scratch import rules_for
from packager.model import Model
from packager.reader import read_model
from packager.runtimes.batch import measure_many
from packager.runtimes.child import MEASURED, ProbeResult, Unavailable
from packager.runtimes.tflite_versions import choice

EXACT, NAMED, UNNAMED, REFUSED, FAILED = "exact", "named", "unnamed", "refused", "failed"
HIDDEN = "hidden"  # a 0-d tensor's place could not be found (twice): neither confirmed nor refuted


@dataclass(frozen=True)
class Row:
    model: str  # file stem: <op>__<mode>
    runtime: str  # "ai-edge-litert 2.3.0"
    verdict: str
    measured: int | None = None  # arenas after allocate_tensors(), summed
    predicted: int | None = None
    after_invoke: str = ""  # "exact", "not exact: why", or why it was not measured
    signature_runners: str = ""  # other signatures' arenas, allocated: "exact" or why not
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
    runners = _signature_runners(model, measured.signature_runners, rules)
    exact = exact and runners in ("", "exact")
    named = _uncovered(model, predictions)
    why = "; ".join([f"subgraph {c.subgraph}: {c.why_not_exact}" for c in checks if not c.exact]
                    + [f"signature runners: {runners}"] * (runners not in ("", "exact")))
    if not exact and any(c.lower_bound for c in checks) \
            and all(c.arena_matches and not c.mismatched for c in checks):
        verdict = HIDDEN
    elif named:
        # A figure that matches although a rule is missing is not called exact: it was luck.
        verdict, why = NAMED, named
    elif exact:
        verdict, why = EXACT, ""
    else:
        verdict = UNNAMED
    return Row(name, label, verdict, measured.total, sum(p.arena for p in predictions), after,
               signature_runners=runners, why=why)


def _signature_runners(model: Model, measured: dict, rules) -> str:
    """"exact" when every other signature's arena, allocated, is the predicted one; "" when the
    model has none."""
    if not measured:
        return ""
    bad = [f"subgraph {a.subgraph}: {a.verdict}"
           for a in signature_arenas(model, rules, measured) if not a.exact]
    return "; ".join(bad) or "exact"


def measure_matrix(paths: list[Path], runtime: str) -> list[Row]:
    """Every model under one TFLite runtime (tflite_versions: litert or tflite-runtime)."""
    which = choice(runtime)
    if not which.installed:
        raise RuntimeError(which.missing_reason)
    models = [read_model(p) for p in paths]
    jobs = [(p, _to_locate(m), runner_subgraphs(m)) for p, m in zip(paths, models)]
    results = measure_many(jobs, which.package, which.python)
    rows = [row_of(p, m, r, which.package) for p, m, r in zip(paths, models, results)]
    # Locating a 0-d tensor by writing into it now and then finds no single address: once more.
    again = [k for k, r in enumerate(rows) if r.verdict == HIDDEN]
    for k, r in zip(again, measure_many([jobs[k] for k in again], which.package, which.python)):
        rows[k] = row_of(paths[k], models[k], r, which.package)
    return rows


NOT_REGISTERED = ("Didn't find op for builtin opcode", "builtin_code out of range")


def registered_builtins(paths: list[Path], runtime: str) -> set[str]:
    """The builtin operators a runtime has a kernel for, from one probe model per operator code
    and version (fixtures/op_matrix.py's registration_probes, files named <OP>__v<N>): the ones
    it does not refuse for want of a kernel in some version."""
    which = choice(runtime)
    results = measure_many([(p, "") for p in paths], which.package, which.python)
    return {p.stem.rsplit("__", 1)[0] for p, r in zip(paths, results)
            if not any(text in r.reason for text in NOT_REGISTERED)}


# -- TFLite Micro (host build, reference kernels) ----------------------------------------------

TFLM_BATCH = 40  # models per child process (a crash costs the rest of its batch one retry)


def _tflm_row(path: Path, model: Model, tries, version: str) -> Row:
    """Three tries per model: a generous arena (the head as recorded), the predicted whole
    arena (it must run) and 16 bytes less (it must fail): the prediction is then the smallest."""
    from packager.kernels.tflm_head import predict_tflm
    from packager.kernels.tflm_whole_arena import predict_whole_arena

    label = f"tflite-micro {version}".strip()
    if not tries or not tries[0].ok:
        reason = tries[0].reason if tries else "the runtime crashed"
        crashed = not tries or reason.startswith("the runtime crashed")
        return Row(path.stem, label, FAILED if crashed else REFUSED, why=reason)
    head = predict_tflm(model)
    whole = predict_whole_arena(model, head=head.head)
    named = "; ".join([f"{op}: no rule for its scratch" for op in head.uncovered_ops]
                      + [whole.why_inexact] * bool(whole.why_inexact))
    measured = tries[0].head
    smallest = len(tries) == 3 and tries[1].ok and not tries[2].ok
    bad = []
    if measured != head.head:
        bad.append(f"head {measured:,} B measured, {head.head:,} B predicted")
    if not smallest:
        bad.append(f"the predicted whole arena {whole.arena:,} B is not the smallest it runs in")
    if named:
        return Row(path.stem, label, NAMED, measured, head.head, why=named)
    if bad:
        return Row(path.stem, label, UNNAMED, measured, head.head, why="; ".join(bad))
    return Row(path.stem, label, EXACT, measured, head.head)


def measure_tflm_matrix(paths: list[Path]) -> list[Row]:
    """Every model in TFLite Micro's host interpreter (tflite-micro's Python package)."""
    from packager.kernels.tflm_whole_arena import predict_whole_arena
    from packager.runtimes.probe import package_version
    from packager.runtimes.tflm import first_arena_size, try_arenas_each

    models = [read_model(p) for p in paths]
    sizes = []
    for m in models:
        try:
            whole = predict_whole_arena(m).arena
        except Exception:  # a model the prediction cannot read: the first try still runs
            whole = 0
        sizes.append([first_arena_size(m)] + ([whole, whole - 16] if whole > 16 else []))
    tries: list[list] = []
    while len(tries) < len(paths):
        start = len(tries)
        batch = list(zip(paths, sizes))[start:start + TFLM_BATCH]
        got = try_arenas_each(batch, timeout=600.0)
        if isinstance(got, Unavailable):
            raise RuntimeError(got.reason)
        # A crash leaves the models after it untried: go on from the first one not reached.
        reached = [k for k, t in enumerate(got) if t]
        last = reached[-1] if reached else 0
        tries += got[:last + 1] if last + 1 < len(batch) else got
    version = package_version("tflite-micro")
    return [_tflm_row(p, m, t, version) for p, m, t in zip(paths, models, tries)]


def tflm_registered_builtins(paths: list[Path]) -> set[str]:
    """registered_builtins for TFLite Micro's host interpreter (its op resolver)."""
    from packager.runtimes.tflm import try_arenas_each

    tries: list[list] = []
    while len(tries) < len(paths):
        got = try_arenas_each([(p, [1 << 16]) for p in paths[len(tries):]], timeout=600.0)
        if isinstance(got, Unavailable):
            raise RuntimeError(got.reason)
        reached = [k for k, t in enumerate(got) if t]
        tries += got[:reached[-1] + 1] if reached and reached[-1] + 1 < len(got) else got
    return {p.stem.rsplit("__", 1)[0] for p, t in zip(paths, tries)
            if not (t and not t[0].ok and any(text in t[0].reason for text in NOT_REGISTERED))}
