"""TFLite's arena on models nobody here built: measured by the real interpreter (each installed
version, in a child process) against our prediction from the file, tensor by tensor.

    python -m benchmarks.tflite_unseen FOLDER_OR_MODEL [...] [--runtime litert|tflite-runtime|all]

Prints a Markdown table: model, version, predicted arena, measured arena (all subgraphs summed,
after allocate_tensors()), exact (every tensor at the predicted offset with the predicted size,
the same temporaries, the same total); the same after one Invoke with zeroed inputs; and, when
not exact, why. A model the runtime refuses or crashes on says so.
Wheels that ship models (mediapipe, pymicro-wakeword...) can be unpacked with `unzip` and their
folders passed here; nothing is downloaded by this script.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.text_table import render
from packager.compare.comparison import check_arena, expand_models
from packager.compare.predict_tflite import predict_after_invoke, predict_tflite
from packager.compare.tflite_runtime import TfliteMeasurement, measure_tflite
from packager.runtimes.tflite_versions import ALL, CHOICES, chosen
from packager.errors import PackagerError
from packager.kernels.tflite_scratch import rules_for
from packager.reader import read_model

HEADER = ("model", "version", "predicted", "measured", "exact", "after Invoke: predicted",
          "measured", "exact", "why not")


def rows_for(path: Path, runtimes) -> list[list[str]]:
    try:
        model = read_model(path)
    except PackagerError as e:
        return [[path.stem, "-", "-", "-", "-", "-", "-", "-", f"unreadable: {e}"]]
    out = []
    for which in runtimes:
        if not which.installed:
            out.append([path.stem, which.name, "-", "-", "-", "-", "-", "-", which.missing_reason])
            continue
        result = measure_tflite(path, model, runtime=which.name)
        if not isinstance(result, TfliteMeasurement):
            predicted = sum(p.arena for p in predict_tflite(
                model, rules_for(which.package, "")))
            out.append([path.stem, which.package, f"{predicted:,}", "-", "-", "-", "-", "-",
                        f"{result.outcome}: {result.reason}"])
            continue
        predictions = predict_tflite(model, rules_for(result.runtime, result.version))
        checks = [check_arena(m, p) for m, p in zip(result.arenas, predictions)]
        exact = all(c.exact for c in checks) and len(checks) == len(predictions)
        why = "; ".join(f"subgraph {c.subgraph}: {c.why_not_exact}" for c in checks if not c.exact)
        uncovered = sorted({op for p in predictions for op in p.uncovered_ops})
        if uncovered:
            why = "; ".join(filter(None, [why, "temporaries not modelled for " + ", ".join(uncovered)]))
        measured = result.total
        lower = any(c.lower_bound for c in checks)
        after, inexact = predict_after_invoke(model, predictions,
                                              rules_for(result.runtime, result.version))
        after_cells = ["-", "-", "-"]
        if result.after_invoke is None:
            why = "; ".join(filter(None, [why, f"after Invoke: {result.invoke_error}"]))
        else:
            after_checks = [check_arena(m, p) for m, p in zip(result.after_invoke, after)]
            after_exact = not inexact and all(c.exact for c in after_checks)
            after_cells = [f"{sum(p.arena for p in after):,}",
                           f"{result.total_after_invoke:,}", "✓" if after_exact else "✗"]
            if not after_exact:
                why = "; ".join(filter(None, [why, "after Invoke: " + "; ".join(filter(None, [
                    inexact, *(f"subgraph {c.subgraph}: {c.why_not_exact}"
                               for c in after_checks if not c.exact)]))]))
        out.append([path.stem, f"{result.runtime} {result.version}",
                    f"{sum(p.arena for p in predictions):,}",
                    ("≥ " if lower else "") + f"{measured:,}",
                    "✓" if exact else "✗", *after_cells, why])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path, help=".tflite files or folders of them")
    parser.add_argument("--runtime", default=ALL, choices=(*CHOICES, ALL))
    args = parser.parse_args(argv)
    runtimes = chosen(args.runtime)
    rows = []
    for path in expand_models(args.models):
        rows.extend(rows_for(path, runtimes))
    print(render(HEADER, rows))
    exact = sum(1 for r in rows if r[4] == "✓")
    measured = sum(1 for r in rows if r[4] in ("✓", "✗"))
    after = sum(1 for r in rows if r[7] == "✓")
    after_measured = sum(1 for r in rows if r[7] in ("✓", "✗"))
    print(f"\n{exact} of {measured} measured rows exact after allocate_tensors(), "
          f"{after} of {after_measured} after one Invoke")
    return 0


if __name__ == "__main__":
    sys.exit(main())
