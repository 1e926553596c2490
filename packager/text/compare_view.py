"""Plain-data views of comparisons: one flat row per model (table and CSV) and the full JSON."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

from packager.compare.comparison import ModelComparison, RuntimeComparison
from packager.emit.csv_rows import csv_rows_text

ROW_FIELDS = (
    "model",
    "tflite_runtime", "tflite_status", "tflite_measured", "tflite_measured_partial",
    "tflite_predicted",
    "tflite_diff_model_tensors", "tflite_diff_runtime_scratch", "tflite_exact", "tflite_best",
    "tflite_lower_bound", "tflite_saving", "tflite_saving_pct", "tflite_measured_model_tensors",
    "tflite_best_model_tensors_only",
    "tflm_runtime", "tflm_status", "tflm_measured_head", "tflm_predicted_head", "tflm_diff",
    "tflm_exact", "tflm_best", "tflm_lower_bound", "tflm_saving", "tflm_saving_pct",
    "tflm_measured_arena", "tflm_predicted_arena", "tflm_arena_exact",
    "ideal_best", "ideal_lower_bound", "reasons",
    "tflite_not_exact_because", "tflm_not_exact_because", "tflite_set_apart",
    "tflite_measured_when", "tflite_after_invoke_measured", "tflite_after_invoke_predicted",
    "tflite_after_invoke_exact", "tflite_after_invoke_not_exact_because", "tflite_invoke_error",
    "tflite_signature_runners",
)


def _runtime_label(r: RuntimeComparison) -> str:
    return f"{r.package} {r.version}".strip() if r.package else ""


def _diffs(r: RuntimeComparison) -> tuple[int | None, int | None]:
    if r.measured is None:
        return None, None
    if not r.checks:
        return None, None
    return sum(c.model_diff for c in r.checks), sum(c.scratch_diff for c in r.checks)


def signature_runners_text(r: RuntimeComparison) -> str:
    """Each other signature's arena as its signature runner allocates it: measured beside the
    prediction, and the verdict ("" for a model with one signature)."""
    parts = []
    for a in r.signature_runners:
        measured = "" if a.measured is None else f"{a.measured:,} B measured, "
        parts.append(f"{'/'.join(a.signatures)} (subgraph {a.subgraph}): {measured}"
                     f"{a.predicted:,} B predicted, {a.verdict}")
    return "; ".join(parts)


def comparison_row(c: ModelComparison) -> dict:
    t, m = c.tflite, c.tflm
    model_diff, scratch_diff = _diffs(t)
    reasons = [f"{r.runtime}: {r.reason}" for r in (t, m) if r.reason]
    reasons += [f"{r.runtime}: {r.saving_withheld_because}, so no saving is claimed"
                for r in (t, m) if r.saving_withheld_because and not r.partial]
    if m.whole_inexact_reason:
        reasons.append(f"tflm whole arena: {m.whole_inexact_reason}")
    return {
        "model": c.name,
        "tflite_runtime": _runtime_label(t), "tflite_status": t.status,
        "tflite_measured": t.measured, "tflite_measured_partial": t.partial,
        "tflite_predicted": t.predicted,
        "tflite_diff_model_tensors": model_diff, "tflite_diff_runtime_scratch": scratch_diff,
        "tflite_exact": t.exact, "tflite_best": t.planned.best,
        "tflite_lower_bound": t.planned.bound, "tflite_saving": t.saving,
        "tflite_saving_pct": t.saving_pct, "tflite_measured_model_tensors": t.measured_model,
        "tflite_best_model_tensors_only": t.model_only.best,
        "tflm_runtime": _runtime_label(m), "tflm_status": m.status,
        "tflm_measured_head": m.measured, "tflm_predicted_head": m.predicted,
        "tflm_diff": None if m.measured is None else m.measured - m.predicted,
        "tflm_exact": m.exact, "tflm_best": m.planned.best, "tflm_lower_bound": m.planned.bound,
        "tflm_saving": m.saving, "tflm_saving_pct": m.saving_pct,
        "tflm_measured_arena": m.whole_measured, "tflm_predicted_arena": m.whole_predicted,
        "tflm_arena_exact": m.whole_exact,
        "ideal_best": c.ideal.best, "ideal_lower_bound": c.ideal.bound,
        "reasons": "; ".join(reasons),
        "tflite_not_exact_because": t.why_not_exact, "tflm_not_exact_because": m.why_not_exact,
        "tflite_set_apart": "; ".join(t.set_apart),
        "tflite_measured_when": t.measured_when,
        "tflite_after_invoke_measured": t.measured_after_invoke,
        "tflite_after_invoke_predicted": t.predicted_after_invoke,
        "tflite_after_invoke_exact": t.after_invoke_exact,
        "tflite_after_invoke_not_exact_because": t.after_invoke_why_not_exact,
        "tflite_invoke_error": t.invoke_error,
        "tflite_signature_runners": signature_runners_text(t),
    }


def comparison_rows(c: ModelComparison) -> list[dict]:
    """One row per TFLite version compared (--runtime): the TFLite columns change, the rest repeat."""
    return [comparison_row(c)] + [comparison_row(replace(c, tflite=t, tflite_also=()))
                                  for t in c.tflite_also]


def error_rows(path, message: str) -> list[dict]:
    """The row of a file that could not be compared (bad input): its name and why, nothing else."""
    row = dict.fromkeys(ROW_FIELDS)
    row.update(model=Path(path).stem, tflite_runtime="", tflm_runtime="", tflite_status="error",
               tflm_status="error", reasons=message)
    return [row]


def error_json(path, message: str) -> dict:
    """--json's entry for such a file."""
    return {"name": Path(path).stem, "path": str(path), "error": message}


def comparison_json(c: ModelComparison) -> dict:
    data = asdict(c)
    pairs = [(data["tflite"], c.tflite), (data["tflm"], c.tflm)]
    pairs += list(zip(data["tflite_also"], c.tflite_also))
    for raw_runtime, r in pairs:
        raw_runtime.update(exact=r.exact, measured_lower_bound=r.partial,
                         not_exact_because=r.why_not_exact, saving=r.saving,
                         saving_pct=r.saving_pct, after_invoke_exact=r.after_invoke_exact,
                         after_invoke_not_exact_because=r.after_invoke_why_not_exact)
        for runner, raw in zip(r.signature_runners, raw_runtime["signature_runners"]):
            raw.update(exact=runner.exact, not_exact_because=runner.not_exact_because)
            if runner.check is not None:
                raw["check"].update(exact=runner.check.exact,
                                    not_exact_because=runner.check.why_not_exact)
        for check, raw in zip(r.after_invoke_checks, raw_runtime["after_invoke_checks"]):
            raw.update(exact=check.exact, measured_lower_bound=check.lower_bound,
                       not_exact_because=check.why_not_exact)
        if r is c.tflm:
            raw_runtime.update(whole_exact=r.whole_exact)
        for check, raw in zip(r.checks, raw_runtime["checks"]):
            raw.update(exact=check.exact, measured_lower_bound=check.lower_bound,
                       not_exact_because=check.why_not_exact, model_diff=check.model_diff,
                       scratch_diff=check.scratch_diff)
    return data


def csv_text(rows: list[dict]) -> str:
    return csv_rows_text(rows, ROW_FIELDS)


def _bytes(v) -> str:
    return "-" if v is None else f"{v:,}"


def _measured(row: dict, key: str, status_key: str) -> str:
    if row[key] is None:
        return {"missing": "not installed", "refused": "does not run", "failed": "crashed",
                "timed out": "did not finish", "error": "bad file"}.get(row[status_key], "-")
    mark = "≥ " if row.get(f"{key}_partial") else ""
    return mark + _bytes(row[key])


def _predicted(row: dict, key: str, exact_key: str) -> str:
    if row[exact_key] is False and row.get(f"{key.replace('_predicted', '_measured')}_partial"):
        return _bytes(row[key]) + " ?"  # cannot be verified: the measurement is a lower bound
    return _bytes(row[key]) + {True: " ✓", False: " ✗", None: ""}[row[exact_key]]


def _saving(row: dict, prefix: str) -> str:
    if row[f"{prefix}_saving"] is None:
        return "-"
    return f"{_bytes(row[f'{prefix}_saving'])} ({row[f'{prefix}_saving_pct']}%)"


TABLE_HEADERS = ("model", "TFLite", "TFLite arena", "predicted", "best tflite plan (bound)", "saving",
                 "TFLM head", "predicted", "best tflm plan (bound)", "saving",
                 "TFLM arena", "predicted", "ideal floor (bound)")


def table_cells(row: dict) -> tuple[str, ...]:
    """One model's cells, in TABLE_HEADERS order: the CLI's Rich table and the Markdown table."""
    return (
        row["model"],
        row["tflite_runtime"] or "-",
        _measured(row, "tflite_measured", "tflite_status"),
        _predicted(row, "tflite_predicted", "tflite_exact"),
        f"{_bytes(row['tflite_best'])} ({_bytes(row['tflite_lower_bound'])})",
        _saving(row, "tflite"),
        _measured(row, "tflm_measured_head", "tflm_status"),
        _predicted(row, "tflm_predicted_head", "tflm_exact"),
        f"{_bytes(row['tflm_best'])} ({_bytes(row['tflm_lower_bound'])})",
        _saving(row, "tflm"),
        _measured(row, "tflm_measured_arena", "tflm_status"),
        _predicted(row, "tflm_predicted_arena", "tflm_arena_exact"),
        f"{_bytes(row['ideal_best'])} ({_bytes(row['ideal_lower_bound'])})",
    )


def markdown_table(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(TABLE_HEADERS) + " |", "|" + " --- |" * len(TABLE_HEADERS)]
    lines += ["| " + " | ".join(table_cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def comparison_table(rows: list[dict]):
    """The terminal table (Rich), the same cells as the Markdown one."""
    from rich.table import Table
    table = Table(*TABLE_HEADERS, title="Arenas in bytes: measured, predicted (✓ byte for byte), best plans")
    for row in rows:
        table.add_row(*table_cells(row))
    return table
