"""`compare`: the real runtimes' measured arenas beside our prediction of them and our best plans.

For one model file:
- TFLite (CPU interpreter): measured per subgraph arena (tflite_runtime.py), predicted from the
  file (predict_tflite.py), and checked tensor by tensor; the difference that remains is
  split into "model tensors" (the span of the file's tensors) and "runtime scratch" (the rest).
- TFLite Micro: measured head (runtimes/tflm.py) against the predicted head (kernels/tflm_head.py), and
  its whole arena, the smallest it runs in (bisection), against kernels/tflm_whole_arena.py.
- For each runtime, the best plan under the same semantics (packager/arenas.py, the one path to
  plans), the lower bound, and what the best plan saves against the measured arena; the `ideal`
  semantics' best as the floor of what this operator order allows.
A runtime that is missing, refuses the model or crashes leaves its measured figures empty, with
the reason; the planned figures are always there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from packager.arenas import plan_arenas
from packager.compare import tflite_runtime
from packager.runtimes import tflm as tflm_runtime
from packager.runtimes.child import MISSING, Unavailable
from packager.compare.like_with_like import placed_tensors, set_apart
from packager.compare.predict_tflite import PredictedArena, predict_after_invoke, predict_tflite
from packager.kernels.tflm_head import PredictedHead, predict_tflm
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.compare.tflite_runtime import MeasuredArena, TfliteMeasurement
from packager.runtimes.tflm import TflmMeasurement
from packager.control_flow import model_total
from packager.dynamic.prepared_shapes import with_prepared_shapes
from packager.kernels.tflite_scratch import LITERT, rules_for
from packager.lifetimes import model_lifetimes
from packager.model import Model
from packager.plan.records import UsageRecord
from packager.reader import read_model
from packager.semantics import IDEAL, SEMANTICS, TFLITE, TFLM

# Seconds one runtime child (one TFLite measurement, one try of TFLite Micro's bisection) may take
# before it is stopped: the slowest try on the models here takes a few seconds, so a child still
# running after a minute is a model that does not end (a WHILE loop whose condition stays true on
# the inputs given), and no later try would end either.
DEFAULT_TIMEOUT = 60.0


AFTER_ALLOCATE = "after allocate_tensors()"


@dataclass(frozen=True)
class Planned:
    """The best offset plan of every arena under one semantics, summed, with its lower bound."""

    semantics: str
    best: int
    bound: int
    strategies: tuple[str, ...]


@dataclass(frozen=True)
class ArenaCheck:
    """One TFLite subgraph arena: measured against predicted."""

    subgraph: int
    measured: int
    predicted: int
    measured_model: int
    predicted_model: int
    compared: int  # model tensors whose offsets were compared
    mismatched: tuple[int, ...]  # model tensors whose offsets differ
    scratch_equal: bool  # the temporaries in the arena: same (offset, size) multiset
    anchored: bool  # False: offsets compared up to one common shift (offset 0 was not visible)
    unknown: tuple[int, ...] = field(default=())  # tensors whose address Python hides
    resized: tuple[int, ...] = field(default=())  # model tensors whose bytes differ from the file's

    @property
    def model_diff(self) -> int:
        return self.measured_model - self.predicted_model

    @property
    def scratch_diff(self) -> int:
        return (self.measured - self.measured_model) - (self.predicted - self.predicted_model)

    @property
    def arena_matches(self) -> bool:
        if self.unknown:  # a tensor whose address is hidden may be the one on top
            return self.measured <= self.predicted
        return self.measured == self.predicted

    @property
    def lower_bound(self) -> bool:
        """The measured arena is only a lower bound: a tensor whose address is hidden may lie
        above every tensor that can be seen."""
        return bool(self.unknown)

    @property
    def exact(self) -> bool:
        """Every tensor seen at the predicted offset with the predicted size, the same
        temporaries, and the same arena, with nothing hidden that could change it."""
        return (not self.mismatched and not self.resized and self.scratch_equal
                and not self.lower_bound and self.measured == self.predicted)

    @property
    def why_not_exact(self) -> str:
        if self.exact:
            return ""
        if self.mismatched or self.resized:
            return (f"{len(set(self.mismatched) | set(self.resized))} tensors at another offset "
                    "or size")
        if not self.scratch_equal:
            return "the runtime's temporaries differ"
        if self.lower_bound:
            return (f"{len(self.unknown)} 0-d tensors hidden (Python hands them out as copies, "
                    "and writing into them found no single address)")
        return "the arena sizes differ"


@dataclass(frozen=True)
class RuntimeComparison:
    runtime: str  # "tflite" or "tflm"
    status: str  # measured | missing | refused | failed
    reason: str
    package: str
    version: str
    planned: Planned  # best plan of the model's tensors plus the runtime's scratch buffers
    model_only: Planned  # best plan of the model's tensors alone
    predicted: int  # arena (TFLite: sum over subgraphs) or head, scratch included
    predicted_model: int
    uncovered_ops: tuple[str, ...]
    measured: int | None = None
    measured_model: int | None = None  # TFLite: span of the model's tensors; TFLM: None
    checks: tuple[ArenaCheck, ...] = ()
    persistent: int | None = None  # TFLite: bytes outside the working arenas; TFLM: the tail
    # TFLite Micro only: its whole arena (head + tail + set-up room), the smallest multiple of 16
    # it runs in (bisection in child processes) and as predicted from the file.
    whole_predicted: int | None = None
    whole_measured: int | None = None
    whole_inexact_reason: str = ""  # the prediction names a kernel it does not model
    set_apart: tuple[str, ...] = ()  # tensors outside the measured arena (and the best plan), why
    # TFLite: `measured` is the arenas after allocate_tensors(); these are after one Invoke with
    # zeroed inputs (a WHILE releases its subgraphs' arenas when it finishes), with the reason
    # when they were not measured (`invoke_error`) or the prediction cannot be exact.
    measured_after_invoke: int | None = None
    predicted_after_invoke: int | None = None
    after_invoke_checks: tuple[ArenaCheck, ...] = ()
    invoke_error: str = ""
    after_invoke_inexact_reason: str = ""
    measured_when: str = ""  # what `measured` is: "after allocate_tensors()" (TFLite)
    # TFLite: the other signatures' arenas, as their signature runners allocate them (not in
    # `measured`, which is allocate_tensors()'s), each measured and checked on its own.
    signature_runners: tuple[SignatureArena, ...] = ()

    @property
    def after_invoke_exact(self) -> bool | None:
        if self.measured_after_invoke is None:
            return None
        return not self.after_invoke_inexact_reason and all(c.exact for c in self.after_invoke_checks)

    @property
    def after_invoke_why_not_exact(self) -> str:
        if self.after_invoke_exact is not False:
            return ""
        return "; ".join([self.after_invoke_inexact_reason] * bool(self.after_invoke_inexact_reason)
                         + [f"subgraph {c.subgraph}: {c.why_not_exact}"
                            for c in self.after_invoke_checks if not c.exact])

    @property
    def whole_exact(self) -> bool | None:
        if self.whole_measured is None:
            return None
        return self.whole_measured == self.whole_predicted and not self.whole_inexact_reason

    @property
    def partial(self) -> bool:
        """The measured arena is a lower bound: some tensors' addresses are hidden (0-d tensors
        reach Python as copies), so one of them may lie above every visible one."""
        return any(c.lower_bound for c in self.checks)

    @property
    def why_not_exact(self) -> str:
        """Empty when exact; else the first reason, per subgraph arena."""
        if self.measured is None or self.exact:
            return ""
        if not self.checks:
            return "the measured and predicted heads differ"
        return "; ".join(f"subgraph {c.subgraph}: {c.why_not_exact}" for c in self.checks
                         if not c.exact)

    @property
    def exact(self) -> bool | None:
        if self.measured is None:
            return None
        if self.checks:
            return all(c.exact for c in self.checks)
        return self.measured == self.predicted and self.whole_exact is not False

    @property
    def saving_withheld_because(self) -> str:
        """Why no saving is claimed against the measurement ("" when one is): the best plan
        holds the runtime's scratch as predicted, so where that prediction is not the runtime's
        (a kernel not modelled, or temporaries that differ) the plan may simply leave out
        memory the runtime needs."""
        if self.measured is None:
            return ""
        if self.partial:
            return "the measured arena is a lower bound"
        if self.uncovered_ops and not self.exact:
            return f"scratch not modelled for {', '.join(self.uncovered_ops)}"
        if any(not c.scratch_equal for c in self.checks):
            return "the runtime's temporaries differ from the prediction"
        return ""

    @property
    def saving(self) -> int | None:
        if self.measured is None or self.saving_withheld_because:
            return None
        return self.measured - self.planned.best

    @property
    def saving_pct(self) -> float | None:
        if not self.measured or self.saving_withheld_because:
            return None
        return round(100.0 * (self.measured - self.planned.best) / self.measured, 1)


@dataclass(frozen=True)
class SignatureArena:
    """One other signature's arena, as `get_signature_runner` allocates it before running (its
    entry subgraph prepared and planned on its own; allocate_tensors() leaves it unallocated)."""

    subgraph: int
    signatures: tuple[str, ...]  # the signature keys whose entry point it is
    predicted: int
    uncovered_why: tuple[str, ...] = ()  # kernels of that subgraph whose rule is missing
    measured: int | None = None
    check: ArenaCheck | None = None
    error: str = ""  # why it was not measured (the runtime refused, or nothing measured)

    @property
    def exact(self) -> bool | None:
        if self.check is None:
            return None
        return self.check.exact and not self.uncovered_why

    @property
    def not_exact_because(self) -> str:
        if self.exact is not False:
            return ""
        return "; ".join(self.uncovered_why) if self.uncovered_why else self.check.why_not_exact

    @property
    def verdict(self) -> str:
        """"exact", "named: ...", "not exact: ...", or why it was not measured."""
        if self.check is None:
            return self.error or "not measured"
        if self.exact:
            return "exact"
        return ("named: " if self.uncovered_why else "not exact: ") + self.not_exact_because


def signature_arenas(model: Model, rules, measured: dict | None = None) -> tuple[SignatureArena, ...]:
    """Every other signature's entry point, predicted, and where `measured` (subgraph -> its
    MeasuredArena, or why not) has it, checked tensor by tensor."""
    from packager.compare.predict_tflite import predict_signature_runners

    if not {d.subgraph for d in model.signature_defs} - {0}:
        return ()
    names: dict[int, list[str]] = {}
    for d in model.signature_defs:
        names.setdefault(d.subgraph, []).append(d.key)
    out = []
    for s, p in predict_signature_runners(model, rules).items():
        got = (measured or {}).get(s)
        base = dict(subgraph=s, signatures=tuple(names.get(s, ())), predicted=p.arena,
                    uncovered_why=tuple(sorted(set(p.uncovered_why))))
        if isinstance(got, MeasuredArena):
            out.append(SignatureArena(**base, measured=got.arena, check=check_arena(got, p)))
        else:
            out.append(SignatureArena(**base, error=got or ("" if measured is None
                                                             else "not measured")))
    return tuple(out)


@dataclass(frozen=True)
class ModelComparison:
    name: str
    path: str
    tflite: RuntimeComparison
    tflm: RuntimeComparison
    ideal: Planned
    tflite_also: tuple[RuntimeComparison, ...] = ()  # the other TFLite versions asked for (--runtime)


def planned(model: Model, semantics: str, with_runtime_buffers: bool = False,
            extra_records: list[list[UsageRecord]] | None = None,
            keep: list[set[int]] | None = None) -> Planned:
    """The best offset plan of every arena on the one path: the shapes stored in the file, which
    is what both runtimes allocate when nobody resizes an input (no --dim bounds here).
    `with_runtime_buffers`: also the buffers the runtime really places beside the model's tensors
    (TFLite Micro's kernel scratch, or TFLite's predicted temporaries in `extra_records`), and
    `keep`: per arena, only the model tensors the runtime's arena holds (like_with_like.py), so
    that the plan compares with the measured arena. Arenas add up as the semantics says
    (control_flow.py: IF branches and WHILE's condition and body are alternatives under ideal)."""
    arenas = plan_arenas(model, semantics, kernel_scratch=with_runtime_buffers,
                         extra_records=extra_records, only_tensors=keep)
    best = [a.result.best_offsets for a in arenas if a.result.best_offsets is not None]
    total = model_total([a.lifetimes for a in arenas],
                        {a.lifetimes.subgraph: a.result.best_offsets.total for a in arenas
                         if a.result.best_offsets is not None},
                        {a.lifetimes.subgraph: a.result.problem.offset_lower_bound for a in arenas},
                        SEMANTICS[semantics].children_alternate)
    return Planned(semantics, total.best, total.bound, tuple(o.strategy for o in best))


def _tflite_scratch(predictions: list[PredictedArena]) -> list[list[UsageRecord]]:
    return [[UsageRecord(s.index, s.op, s.op, s.nbytes) for s in p.scratch if s.offset is not None]
            for p in predictions]


def check_arena(measured: MeasuredArena, predicted: PredictedArena) -> ArenaCheck:
    common = sorted(set(measured.offsets) & set(predicted.offsets))
    shift = 0
    if not measured.anchored and common:
        lowest = min(common, key=lambda t: measured.offsets[t])
        shift = predicted.offsets[lowest] - measured.offsets[lowest]
    hidden = set(measured.unknown) | set(measured.unallocated)
    mismatched = sorted(
        t for t in set(measured.offsets) | set(predicted.offsets) if t not in hidden
        and (measured.offsets.get(t, None) is None or predicted.offsets.get(t) is None
             or measured.offsets[t] + shift != predicted.offsets[t]))
    scratch_measured = sorted((o + shift, n) for o, n in measured.scratch.values())
    scratch_predicted = sorted((s.offset, s.nbytes) for s in predicted.scratch if s.offset is not None)
    resized = tuple(sorted(t for t, n in measured.sizes.items()
                           if t in predicted.sizes and predicted.sizes[t] != n))
    return ArenaCheck(measured.subgraph, measured.arena + shift if measured.arena else 0,
                      predicted.arena, measured.model_arena + shift if measured.offsets else 0,
                      predicted.model_arena, len(common), tuple(mismatched),
                      scratch_measured == scratch_predicted, measured.anchored,
                      tuple(measured.unknown), resized)


def compare_tflite(path: Path, model: Model, plan: Planned, measure: bool = True,
                   runtime: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> RuntimeComparison:
    """`runtime`: litert or tflite-runtime (tflite_versions.py); None: this environment's.
    `timeout`: seconds each runtime child may take before it is stopped."""
    result = tflite_runtime.measure_tflite(path, model, timeout, runtime) if measure else Unavailable(
        MISSING, "not measured")
    if isinstance(result, TfliteMeasurement):
        rules = rules_for(result.runtime, result.version)
    elif runtime == "tflite-runtime":
        rules = rules_for("tflite-runtime", "")
    else:
        rules = LITERT  # the runtime CI installs
    predictions = predict_tflite(model, rules)
    signatures = signature_arenas(model, rules, result.signature_runners
                                  if isinstance(result, TfliteMeasurement) else None)
    uncovered = tuple(sorted({op for p in predictions for op in p.uncovered_ops}))
    model = tflite_model = with_prepared_shapes(model)  # TFLite's arena: the shapes after Prepare
    common = dict(planned=planned(model, TFLITE.name, True, _tflite_scratch(predictions),
                                  keep=placed_tensors(predictions)),
                  model_only=plan, predicted=sum(p.arena for p in predictions),
                  predicted_model=sum(p.model_arena for p in predictions), uncovered_ops=uncovered,
                  set_apart=set_apart(model, model_lifetimes(model, TFLITE.name), predictions))
    common.update(signature_runners=signatures)
    if not isinstance(result, TfliteMeasurement):
        return RuntimeComparison(TFLITE.name, result.outcome, result.reason, result.runtime,
                                 result.version, **common)
    checks = tuple(check_arena(m, p) for m, p in zip(result.arenas, predictions))
    persistent = sum(sum(a.elsewhere.values()) + sum(a.scratch_elsewhere.values())
                     for a in result.arenas)
    after, inexact = predict_after_invoke(tflite_model, predictions,
                                          rules_for(result.runtime, result.version))
    common.update(predicted_after_invoke=sum(p.arena for p in after),
                  after_invoke_inexact_reason=inexact, measured_when=AFTER_ALLOCATE)
    if result.after_invoke is not None:
        common.update(measured_after_invoke=result.total_after_invoke,
                      after_invoke_checks=tuple(check_arena(m, p)
                                                for m, p in zip(result.after_invoke, after)))
    else:
        common.update(invoke_error=result.invoke_error)
    return RuntimeComparison(TFLITE.name, "measured", "", result.runtime, result.version,
                             measured=result.total,
                             measured_model=sum(a.model_arena for a in result.arenas),
                             checks=checks, persistent=persistent, **common)


def compare_tflm(path: Path, model: Model, plan: Planned, measure: bool = True,
                 timeout: float = DEFAULT_TIMEOUT) -> RuntimeComparison:
    prediction: PredictedHead = predict_tflm(model)
    whole = predict_whole_arena(model)
    common = dict(planned=planned(model, TFLM.name, True), model_only=plan, predicted=prediction.head,
                  predicted_model=prediction.model_head, uncovered_ops=prediction.uncovered_ops,
                  whole_predicted=whole.arena, whole_inexact_reason=whole.why_inexact)
    # One set-up per try: the bisection's last working try carries the recording run's figures.
    result, smallest = tflm_runtime.measure_with_smallest_arena(path, model, hint=whole.arena,
                                                                timeout=timeout) \
        if measure else (Unavailable(MISSING, "not measured"), None)
    if not isinstance(result, TflmMeasurement):
        return RuntimeComparison(TFLM.name, result.outcome, result.reason, result.runtime,
                                 result.version, **common)
    return RuntimeComparison(TFLM.name, "measured", "", result.runtime, result.version,
                             measured=result.head, persistent=result.tail, **common,
                             whole_measured=getattr(smallest, "arena", None))


def compare_model(path: Path, measure: bool = True,
                  tflite_runtimes: tuple[str, ...] | None = None,
                  timeout: float = DEFAULT_TIMEOUT) -> ModelComparison:
    """`tflite_runtimes`: the TFLite versions to measure and predict (tflite_versions.CHOICES),
    the first in `tflite`, the others in `tflite_also`; None: this environment's one.
    `timeout`: seconds each runtime child (each try of TFLite Micro's bisection) may take; one
    that does not finish is stopped and its column says so."""
    path = Path(path)
    model = read_model(path)
    model_only = planned(with_prepared_shapes(model), TFLITE.name)
    names = tflite_runtimes or (None,)
    tflite = [compare_tflite(path, model, model_only, measure, name, timeout) for name in names]
    return ModelComparison(
        name=path.stem, path=str(path),
        tflite=tflite[0],
        tflm=compare_tflm(path, model, planned(model, TFLM.name), measure, timeout),
        ideal=planned(model, IDEAL.name), tflite_also=tuple(tflite[1:]))


def expand_models(paths: list[Path]) -> list[Path]:
    """Files as given; folders become their .tflite files, sorted by name."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        out.extend(sorted(p.glob("*.tflite")) if p.is_dir() else [p])
    return out


def notes(results: list[ModelComparison], rows: list[dict]) -> list[str]:
    """The lines under the table: which runtimes measured, remaining differences, reasons."""
    out = []
    measured = sorted({f"{r.package} {r.version}" for c in results
                       for r in (c.tflite, c.tflm, *c.tflite_also) if r.status == "measured"})
    if measured:
        out.append("measured with " + ", ".join(measured) + "; TFLite's arenas " + AFTER_ALLOCATE)
    for row in rows:
        if (row["tflite_diff_model_tensors"] or row["tflite_diff_runtime_scratch"]) \
                and not row.get("tflite_measured_partial"):
            out.append(f"{row['model']}: TFLite's arena differs from the prediction by "
                       f"{row['tflite_diff_model_tensors']:,} B on the model's tensors and "
                       f"{row['tflite_diff_runtime_scratch']:,} B of runtime scratch")
        if row["reasons"]:
            out.append(f"{row['model']}: {row['reasons']}")
        if row.get("tflite_set_apart"):
            out.append(f"{row['model']} ({row['tflite_runtime']}): left out of TFLite's arena and "
                       f"of the best plan: {row['tflite_set_apart']}")
        if row.get("tflite_after_invoke_measured") is not None and (
                row["tflite_after_invoke_measured"] != row["tflite_measured"]
                or not row["tflite_after_invoke_exact"]):
            verdict = ("predicted exactly" if row["tflite_after_invoke_exact"] else
                       f"predicted {row['tflite_after_invoke_predicted']:,} B, not exact: "
                       f"{row['tflite_after_invoke_not_exact_because']}")
            out.append(f"{row['model']} ({row['tflite_runtime']}): after one Invoke (zeroed "
                       f"inputs) TFLite's arenas hold {row['tflite_after_invoke_measured']:,} B, "
                       f"{verdict}")
        elif row.get("tflite_invoke_error"):
            out.append(f"{row['model']} ({row['tflite_runtime']}): the arenas after one Invoke "
                       f"were not measured: {row['tflite_invoke_error']}")
        if row.get("tflite_signature_runners"):
            out.append(f"{row['model']} ({row['tflite_runtime'] or 'TFLite'}): each other "
                       f"signature's arena, as get_signature_runner allocates it: "
                       f"{row['tflite_signature_runners']}")
        if row.get("tflite_measured_partial"):
            out.append(f"{row['model']} ({row['tflite_runtime']}): TFLite's measured arena is a lower bound (≥, prediction "
                       f"marked ?): {row['tflite_not_exact_because']}")
    if any(r.status == "missing" for c in results for r in (c.tflite, c.tflm, *c.tflite_also)):
        out.append("a runtime is not installed, so only planned figures are shown for it; install "
                   f"both with: {tflite_runtime.INSTALL_HINT}")
    return out
