"""The TFLite GPU delegate's memory strategies beside ours: its own code (gpu_assign, built by
.ci/build_gpu_delegate.sh) and our reproductions of it, then our heuristics against it, on the
shared models' arenas under three semantics, the paper's six networks and random records (ties
and not, 50 to 5,000), records by first task as the delegate's callers pass them.

    python -m benchmarks.bench_gpu_delegate            # the tables of docs/gpu-delegate.md

CPU times are sums over the inputs, of one process on this machine (they move with load; the plans
do not). MINCOSTFLOW runs on the inputs of at most MIN_COST_FLOW_UP_TO records (its search is slow).
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import gpu_delegate_inputs as inputs
from benchmarks import gpu_delegate_oracle as oracle
from benchmarks.text_table import render
from packager.plan.objects import gpu_delegate, gpu_greedy_in_order, texture_2d
from packager.plan.offsets import gpu_greedy_by_size, greedy_by_size_tflite
from packager.plan.problem import Problem
from packager.plan.registry import OBJECT_STRATEGIES

MIN_COST_FLOW_UP_TO = 300


def _cpu(fn, *args):
    start = time.process_time()
    out = fn(*args)
    return out, time.process_time() - start


def _versus(pairs) -> tuple[str, str]:
    """(identical plans, our total against theirs) over (ours, theirs, identical) triples."""
    same = sum(1 for _, _, identical in pairs if identical)
    smaller = sum(1 for a, b, _ in pairs if a < b)
    larger = [(a - b) / b for a, b, _ in pairs if a > b]
    equal = len(pairs) - smaller - len(larger)
    words = "equal" if not smaller and not larger else (
        f"smaller on {smaller}, equal on {equal}, larger on {len(larger)}"
        + (f" (up to +{100 * max(larger):.2f}%)" if larger else ""))
    return f"{same} of {len(pairs)}", words


def main() -> int:
    exe, why = oracle.locate()
    if exe is None:
        print(f"error: {why}", file=sys.stderr)
        return 1
    cases = inputs.model_inputs() + inputs.network_inputs() + inputs.random_inputs()
    print(f"{len(cases)} inputs: {len(inputs.model_inputs())} model arenas, 6 networks, "
          f"{len(inputs.random_inputs())} random sets\n")

    # 1. Our reproductions of the delegate, strategy by strategy.
    rows = []
    answers: dict[tuple[str, int], oracle.Answer] = {}
    for name, fn in gpu_delegate.OBJECTS.items():
        subset = [c for c in cases if name != "MINCOSTFLOW" or len(c[1]) <= MIN_COST_FLOW_UP_TO]
        same, ours_s, theirs_s = 0, 0.0, 0.0
        for k, (_, records) in enumerate(cases):
            if (_, records) not in subset:
                continue
            plan, seconds = _cpu(fn, records)
            answer = oracle.run(exe, records, name)
            answers[name, k] = answer
            same += plan.assignment == answer.object_ids and plan.object_sizes == answer.object_sizes
            ours_s += seconds
            theirs_s += answer.cpu_ns / 1e9
        rows.append((name, f"{same} of {len(subset)}", f"{ours_s:.2f} s", f"{theirs_s:.3f} s"))
    for dims in (2, 3):
        for name in ("EQUALITY", "GREEDY_IN_ORDER"):
            subset = [(k, r) for k, (_, r) in enumerate(cases) if len(r) <= 1000]
            same, ours_s, theirs_s = 0, 0.0, 0.0
            for k, records in subset:
                extents = inputs.random_extents(records, dims, k)
                plan, seconds = _cpu(gpu_delegate.EXTENTS[name], records, extents)
                answer = oracle.run(exe, records, name, extents=extents)
                same += plan.assignment == answer.object_ids and plan.object_extents == answer.object_sizes
                ours_s += seconds
                theirs_s += answer.cpu_ns / 1e9
            rows.append((f"{name} ({dims}D extents)", f"{same} of {len(subset)}", f"{ours_s:.2f} s",
                         f"{theirs_s:.3f} s"))
    same, ours_s, theirs_s = 0, 0.0, 0.0
    for _, records in cases:
        plan, seconds = _cpu(gpu_greedy_by_size.plan, records, 64)
        answer = oracle.run(exe, records, "GREEDY_BY_SIZE", offsets=True, align=64)
        same += plan.offsets == answer.offsets and plan.arena == answer.arena
        ours_s += seconds
        theirs_s += answer.cpu_ns / 1e9
    rows.append(("GREEDY_BY_SIZE (offsets, base alignment 64)", f"{same} of {len(cases)}",
                 f"{ours_s:.2f} s", f"{theirs_s:.3f} s"))
    print("Reproductions (objects, sizes and offsets identical to the delegate's):\n")
    print(render(("delegate strategy", "identical plans", "ours (Python) CPU", "delegate (C++) CPU"), rows))

    # 2. Our strategies against the delegate's.
    registry = {s.name: s for s in OBJECT_STRATEGIES}
    rows = []
    for ours, theirs in (("naive", "NAIVE"), ("equality", "EQUALITY"), ("greedy_in_order", "GREEDY_IN_ORDER"),
                         ("greedy_by_breadth", "GREEDY_BY_BREADTH"), ("greedy_by_size_improved", "GREEDY_BY_SIZE"),
                         ("greedy_by_size", "GREEDY_BY_SIZE"), ("min_cost_flow", "MINCOSTFLOW")):
        pairs = []
        for k, (_, records) in enumerate(cases):
            if (theirs, k) not in answers:
                continue
            plan = registry[ours].run(Problem(records=records))
            answer = answers[theirs, k]
            pairs.append((plan.total, answer.total, plan.assignment == answer.object_ids
                          and plan.object_sizes == answer.object_sizes))
        rows.append((f"{ours} / {theirs}", *_versus(pairs)))
    pairs = []
    for k, (_, records) in enumerate(cases):
        if len(records) > 1000:
            continue
        extents = inputs.random_extents(records, 2, k)
        # In elements (a texel of one byte), each record's size its texture's: the delegate's units.
        records = [replace(r, size=w * h) for r, (w, h) in zip(records, extents)]
        plan = texture_2d.plan(records, extents, 1)
        theirs = gpu_greedy_in_order.plan_extents(records, extents)  # held to the delegate above
        pairs.append((plan.total, theirs.total, plan.assignment == theirs.assignment
                      and tuple(plan.object_extents) == theirs.object_extents))
    rows.append(("texture_2d / GREEDY_IN_ORDER (2D)", *_versus(pairs)))
    pairs = []
    for _, records in cases:
        plan = greedy_by_size_tflite.plan(records, 1)
        theirs = gpu_greedy_by_size.plan(records, 1)
        pairs.append((plan.arena, theirs.arena, plan.offsets == theirs.offsets))
    rows.append(("offsets greedy_by_size / GREEDY_BY_SIZE", *_versus(pairs)))
    print("\nOurs against the delegate's (min_cost_flow: inputs of at most "
          f"{MIN_COST_FLOW_UP_TO} records; texture_2d: 1,000):\n")
    print(render(("ours / delegate", "identical plans", "our total against theirs"), rows))

    # 3. MINCOSTFLOW's time by size.
    rows = []
    for n in (100, 200, 300, 1000):
        records = inputs.random_records(n, 0, False)
        answer = oracle.run(exe, records, "MINCOSTFLOW")
        ours_flow, ours_s = _cpu(registry["min_cost_flow"].run, Problem(records=records))
        if n <= MIN_COST_FLOW_UP_TO:
            _, repro_s = _cpu(gpu_delegate.OBJECTS["MINCOSTFLOW"], records)
            repro = f"{repro_s:.2f} s"
        else:
            repro = "not run (minutes)"
        rows.append((f"{n:,}", f"{answer.cpu_ns / 1e9:.3f} s", repro, f"{ours_s:.3f} s",
                     f"{ours_flow.total:,} / {answer.total:,}"))
    print("\nMINCOSTFLOW's time (random records without ties, one run):\n")
    print(render(("records", "delegate (C++)", "MINCOSTFLOW (ours, Python)", "min_cost_flow (ours)",
                  "min_cost_flow / MINCOSTFLOW total"), rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
