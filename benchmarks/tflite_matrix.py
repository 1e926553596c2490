"""The coverage matrix, measured and written as a table (operator x mode x runtime):

    python -m benchmarks.tflite_matrix [FOLDER] [--write docs/op-matrix.md]

FOLDER (default .cache/op_matrix) receives the models of fixtures/op_matrix.py and one probe per
builtin code; both TFLite runtimes and TFLite Micro's host interpreter (where installed) measure
them in batched child processes,
and each row says exact, named (not exact: the kernel and the missing rule, as `compare` names
them), or refused (the kernel has no such mode). tests/compare/test_op_matrix.py holds the same
rows to the same verdicts, and the page's counts to the measurement.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

from fixtures.op_matrix import CASES, CUSTOM_OPS, NOT_BUILT, registration_probes, write
from packager.compare.matrix import (EXACT, NAMED, REFUSED, Row, measure_matrix,
                                     measure_tflm_matrix, registered_builtins,
                                     tflm_registered_builtins)
from packager.runtimes.tflite_versions import CHOICES, choice

DEFAULT_FOLDER = Path(".cache/op_matrix")


def write_probes(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, m in registration_probes().items():
        path = folder / f"{name}.tflite"
        data = m.build()
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        paths.append(path)
    return paths


def measure(folder: Path) -> tuple[dict[str, list[Row]], dict[str, set[str]]]:
    """Rows and registered builtins per installed runtime (package label)."""
    models = write(folder / "models")
    probes = write_probes(folder / "registration")
    rows, registered = {}, {}
    for name in CHOICES:
        if not choice(name).installed:
            continue
        measured = measure_matrix(models, name)
        label = next((r.runtime for r in measured if r.verdict in (EXACT, NAMED)), name)
        rows[label] = measured
        registered[label] = registered_builtins(probes, name)
    if importlib.util.find_spec("tflite_micro") is not None:
        measured = measure_tflm_matrix(models)
        label = next((r.runtime for r in measured if r.verdict in (EXACT, NAMED)), "tflite-micro")
        rows[label] = measured
        registered[label] = tflm_registered_builtins(probes)
    return rows, registered


def counts(rows: dict[str, list[Row]], registered: dict[str, set[str]]) -> list[str]:
    built = {c.op for c in CASES}
    lines = []
    for label, measured in rows.items():
        verdicts = Counter(r.verdict for r in measured)
        accepted = verdicts[EXACT] + verdicts[NAMED]
        ops = registered[label]
        custom = {r.model.split("__")[0] for r in measured if r.verdict in (EXACT, NAMED)
                  and r.model.split("__")[0] in CUSTOM_OPS}
        lines.append(
            f"{label}: {len(ops)} builtin operators registered, {len(ops & built)} with models, "
            f"and {len(custom)} of the wheels' custom ops; "
            f"{accepted} rows the kernels accept, {verdicts[EXACT]} exact, {verdicts[NAMED]} "
            f"not exact with the kernel and missing rule named, {verdicts['unnamed']} unnamed; "
            f"{verdicts[REFUSED]} modes refused by the kernel, {verdicts['failed']} crashed"
            + (f", {verdicts['hidden']} with a 0-d tensor not located" if verdicts["hidden"] else ""))
    return lines


def _cell(r: Row) -> str:
    if r.verdict == EXACT:
        runners = " (each signature runner's arena too)" if r.signature_runners == "exact" else ""
        after = ("" if r.after_invoke in ("exact", "") else
                 " (one Invoke on zeros failed)" if r.after_invoke.startswith("not measured")
                 else f" (after Invoke {r.after_invoke})")
        return "exact" + runners + after
    if r.verdict == REFUSED:
        return "refused"
    return f"{r.verdict}: {r.why}".replace("|", "/")


def _custom_unregistered(r: Row) -> bool:
    """A custom op's row refused because the runtime has no kernel under that custom code."""
    return r.verdict == REFUSED and any(text in r.why for text in (
        "unresolved custom op", "Failed to get registration", "Didn't find custom op"))


def table(rows: dict[str, list[Row]], registered: dict[str, set[str]]) -> str:
    labels = list(rows)
    by_name = {label: {r.model: r for r in measured} for label, measured in rows.items()}
    out = ["| operator | mode | " + " | ".join(labels) + " |",
           "| --- | --- | " + " | ".join("---" for _ in labels) + " |"]
    for case in CASES:
        cells = []
        for label in labels:
            row = by_name[label][case.name]
            known = (case.op in registered[label] or case.op == "signatures"
                     or case.op in CUSTOM_OPS and not _custom_unregistered(row))
            cells.append(_cell(row) if known else "not registered")
        out.append(f"| {case.op} | {case.label} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def not_built(registered: dict[str, set[str]]) -> list[str]:
    everywhere = set().union(*registered.values()) if registered else set()
    built = {c.op for c in CASES}
    return [f"- {op}: {NOT_BUILT.get(op, 'no model yet')}" for op in sorted(everywhere - built)]


def page(rows, registered) -> str:
    return "\n".join([
        "# Coverage matrix: every builtin operator, in every mode its kernel accepts",
        "",
        "Generated by `python -m benchmarks.tflite_matrix --write docs/op-matrix.md` (models from",
        "`fixtures/op_matrix.py`, no TensorFlow, with the custom ops the TFLite wheels register:",
        "TFLite_Detection_PostProcess, AudioSpectrogram, Mfcc; NumericVerify, a debugging op, is",
        "not built; both TFLite runtimes measure them in batched child",
        "processes; `tests/compare/test_op_matrix.py` holds every row to its verdict). A TFLite row",
        "is *exact* when every kernel's rule is modelled and every tensor and temporary is where",
        "`compare` predicts it after `allocate_tensors()`; a TFLite Micro row (the `tflite-micro`",
        "package's host build, reference kernels) when the head it records is the predicted one and",
        "the predicted whole arena is the smallest it runs in (it runs there, and fails 16 bytes",
        "below). *named*: not exact, and `compare` itself names the kernel and the missing rule (it",
        "then claims neither exactness nor a saving); *refused*: the kernel does not accept the mode",
        "(the runtime says so when it sets the model up). TFLite's arenas are measured a second",
        "time after one Invoke with zeroed inputs, and set beside the prediction of that state.",
        "",
        *[f"- {line}" for line in counts(rows, registered)],
        "",
        table(rows, registered),
        "",
        "Registered builtins without a model here:",
        "",
        *not_built(registered),
        "",
    ])


def main(argv: list[str]) -> int:
    target = None
    if "--write" in argv:
        at = argv.index("--write")
        target = Path(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    folder = Path(argv[0]) if argv else DEFAULT_FOLDER
    rows, registered = measure(folder)
    text = page(rows, registered)
    if target is not None:
        target.write_text(text, encoding="utf-8")
    print("\n".join(counts(rows, registered)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
