"""CPU seconds of writing the two plan files of `package` and of reading each back, per model:
the JSON text made, its read-back check, the FlatBuffer built, its read-back check. Each the
median of a few runs, in the order `package` takes them.

    .venv/bin/python -m benchmarks.bench_plan_files [--sizes 10000,100000] [--shapes branching,...]
        [--repeats 3]

Models are the scale benchmark's synthetic ones (.cache/scale/, built on first use); each is
planned once, as `package` plans it (tflm, best, with TFLite Micro's whole arena).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import statistics
import time
from pathlib import Path

from benchmarks.bench_scale import cached_model
from benchmarks.text_table import render
from packager.package import plan_flatbuffer, plan_json
from packager.package.build import make_plan
from packager.package.read_back import reads_back
from packager.package.runtime_arena import check_target, with_runtime_arena
from packager.package.sidecar import SourceModel
from packager.reader import read_model

STEPS = ("JSON written", "JSON read back", "FlatBuffer built", "FlatBuffer read back")


def planned(path: Path):
    model = read_model(path)
    source = SourceModel(path.name, hashlib.sha256(model.raw).hexdigest(), len(model.raw),
                         tuple(len(sg.tensors) for sg in model.subgraphs))
    return with_runtime_arena(make_plan(model, "tflm", "best", source).plan, model, check_target("host"))


def file_seconds(plan, repeats: int) -> tuple[dict[str, float], int]:
    """Median CPU seconds of each step, and the JSON file's size."""
    spent: dict[str, list[float]] = {step: [] for step in STEPS}

    def timed(step: str, run):
        start = time.process_time()
        result = run()
        spent[step].append(time.process_time() - start)
        return result

    for _ in range(repeats):
        gc.collect()
        gc.disable()  # as `package` writes its files
        try:
            text = timed("JSON written", lambda: plan_json.dumps(plan))
            if not timed("JSON read back", lambda: reads_back(text, plan)):
                raise SystemExit("the JSON plan does not read back")
            data = timed("FlatBuffer built", lambda: plan_flatbuffer.dumps(plan))
            if not timed("FlatBuffer read back", lambda: reads_back(data, plan)):
                raise SystemExit("the FlatBuffer plan does not read back")
        finally:
            gc.enable()
    size = len(text)
    return {step: statistics.median(seconds) for step, seconds in spent.items()}, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--shapes", default="chain,residual,branching,transformer")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for shape in args.shapes.split(","):
        for n in map(int, args.sizes.split(",")):
            plan = planned(cached_model(shape, n))
            seconds, size = file_seconds(plan, args.repeats)
            tensors = sum(len(s.offsets.tensors) for s in plan.arenas)
            rows.append([shape, f"{n:,}", f"{tensors:,}", f"{size / 1e6:.1f}",
                         *(f"{seconds[step]:.3f}" for step in STEPS), f"{sum(seconds.values()):.3f}"])
    print(render(["shape", "operators", "tensor entries", "JSON MB", *(f"{s} (s)" for s in STEPS), "total (s)"],
                 rows))
    print(f"CPU seconds (time.process_time), median of {args.repeats} runs each.")


if __name__ == "__main__":
    main()
