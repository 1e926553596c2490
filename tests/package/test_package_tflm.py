"""Proof on the real runtime: the offline-planned .tflite runs in TFLite Micro exactly on our plan.

For every catalog model TFLite Micro can run, and the shared iris_landmark and hand_recrop:
- TFLite Micro's reported head equals the plan's arena bytes (it uses our offsets, and places the
  scratch buffers of its kernels where the plan left room for them);
- the packaged model loads with an arena of exactly that head plus the tail TFLite Micro reports,
  and gives outputs identical to the unpackaged model's on random inputs;
- the same with a deliberately broken plan (a tensor written over one still needed) changes the
  outputs, so the comparison can fail.

Measured on the tflite-micro wheel: the Python interpreter needs no alignment slack (head + tail
as reported is enough; the minimum is sometimes 8 bytes less). Only when the head is smaller than
the temporaries TFLite Micro allocates while it sets the model up (allocation info, planner
bookkeeping, scratch requests: about 32 bytes per tensor and more) does it need more than head +
tail, and then the unpackaged model needs more than its own head + tail too; the test checks that.

Every run is in a child process (tests/package/tflm_child.py): TFLite Micro can crash, not just refuse,
when an arena is slightly too small.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.catalog import RUNS_IN_TFLM
from packager.package.offline_plan import with_offline_plan
from packager.errors import PlanError
from packager.package.build import offline_offsets
from packager.package.sidecar import TENSOR, PackagePlan
from packager.plan.records import OffsetPlan, UsageRecord
from packager.reader import read_model
from packager.plan.validate import check_offset_plan
from tests.package.support import file_of, model_file, packaged

pytestmark = pytest.mark.skipif(importlib.util.find_spec("tflite_micro") is None,
                                reason="tflite-micro is not installed (pip install 'tflpack[runtimes]')")

CHILD = Path(__file__).with_name("tflm_child.py")
MODELS = sorted(RUNS_IN_TFLM) + ["iris_landmark", "hand_recrop"]
GENEROUS = 4 << 20  # added to the head when only measuring
SETUP_SLACK = 2048  # enough for TFLite Micro's set-up temporaries on every tiny model here
SEED = 1234


def run_tflm(tmp_path: Path, name: str, runs: list[tuple[Path, int]]) -> list[dict] | None:
    """Run the models in one child; None when the child crashed."""
    model = read_model(model_file(name))
    job = {"seed": SEED, "inputs": len(model.main.inputs), "outputs": len(model.main.outputs),
           "runs": [{"path": str(p), "arena": int(a)} for p, a in runs]}
    job_path = tmp_path / f"job-{len(list(tmp_path.glob('job-*')))}.json"
    job_path.write_text(json.dumps(job))
    done = subprocess.run([sys.executable, str(CHILD), str(job_path)], capture_output=True,
                          text=True, timeout=300)
    if done.returncode != 0:
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", MODELS)
def test_tflm_runs_the_packaged_model_on_exactly_the_plan(name, tmp_path):
    result = packaged(name)
    head = result.plan.arena_bytes
    original, packed = model_file(name), file_of(result, ".tflite")

    reference, measured = run_tflm(tmp_path, name, [(original, head + GENEROUS), (packed, head + GENEROUS)])
    assert reference["loaded"] and measured["loaded"], (reference, measured)
    assert measured["head"] == head, f"TFLite Micro's head {measured['head']} B, plan {head} B"
    assert measured["outputs"] == reference["outputs"]

    exact = head + measured["tail"]
    (run,) = run_tflm(tmp_path, name, [(packed, exact)]) or [{"loaded": False, "reason": "crashed"}]
    if not run["loaded"]:
        # TFLite Micro's set-up temporaries do not fit a head this small: the unpackaged model
        # does not load in its own head + tail either, and a little more is enough for ours.
        own = reference["head"] + reference["tail"]
        (unpackaged,) = run_tflm(tmp_path, name, [(original, own)]) or [{"loaded": False}]
        assert not unpackaged["loaded"], f"{name}: unpackaged loads at head + tail = {own} B, ours not at {exact} B"
        (run,) = run_tflm(tmp_path, name, [(packed, exact + SETUP_SLACK)])
        assert run["loaded"], run
    assert run["head"] == head
    assert run["outputs"] == reference["outputs"]


# Ops that read each element before writing the same element: their output may overlap their input.
ELEMENT_WISE = frozenset({"ADD", "SUB", "MUL", "DIV", "RELU", "RELU6", "TANH", "LOGISTIC",
                          "LEAKY_RELU", "PRELU", "ABS", "NEG", "CAST", "QUANTIZE", "DEQUANTIZE"})


def broken_variants(plan: PackagePlan, model, limit: int = 3) -> list[tuple[str, list[int]]]:
    """Offline plans in which a tensor is written over one alive at the same op: first over a
    tensor still read after that op; failing that, over an input of a non-element-wise op that
    writes it (a convolution over its own input). No runtime survives these unless values agree."""
    entries = [t for t in plan.arenas[0].offsets.tensors if t.kind == TENSOR and t.size > 0]

    def producer(t) -> str:
        ops = model.subgraphs[t.subgraph].operators
        return next((op.name for op in ops if t.tensor in op.outputs), "")

    pairs = [(a, b) for a in entries for b in entries
             if a.first_op < b.first_op < a.last_op and a.offset != b.offset]
    if not pairs:
        pairs = [(a, b) for a in entries for b in entries if a.first_op < b.first_op == a.last_op
                 and a.offset != b.offset and producer(b) not in ELEMENT_WISE]
    pairs.sort(key=lambda ab: (ab[1].first_op, ab[0].index))
    step = max(1, len(pairs) // limit)
    variants = []
    for a, b in pairs[::step][:limit]:
        offsets = offline_offsets(plan)
        offsets[b.index] = a.offset
        variants.append((f"tensor {b.index} over tensor {a.index}", offsets))
    return variants


@pytest.mark.parametrize("name", MODELS)
def test_a_broken_offline_plan_changes_the_outputs(name, tmp_path):
    result = packaged(name)
    plan, original = result.plan, model_file(name)
    variants = broken_variants(plan, read_model(original))
    if not variants:
        pytest.skip(f"{name}: every two tensors alive at the same op are the input and output of an "
                    "element-wise op, which may share memory: no overlap can change the outputs")
    tensors = [t for t in plan.arenas[0].planned if t.kind == TENSOR]
    records = [UsageRecord(t.index, t.first_op, t.last_op, t.size) for t in tensors]
    paths = []
    for k, (what, offsets) in enumerate(variants):
        placed = tuple(offsets[t.index] for t in tensors)
        with pytest.raises(PlanError, match="overlap"):  # our validator would never write it
            check_offset_plan(records, OffsetPlan("broken", placed, 1 << 40, plan.alignment))
        path = tmp_path / f"broken{k}.tflite"
        path.write_bytes(with_offline_plan(original.read_bytes(), offsets, len(plan.source.subgraph_tensor_counts)))
        paths.append(path)
    big = plan.arena_bytes + GENEROUS
    runs = run_tflm(tmp_path, name, [(original, big)] + [(p, big) for p in paths])
    assert runs is not None
    reference, broken = runs[0], runs[1:]
    assert all(r["loaded"] for r in broken), broken
    changed = [what for (what, _), r in zip(variants, broken) if r["outputs"] != reference["outputs"]]
    assert changed, f"{name}: no broken plan changed the outputs ({[w for w, _ in variants]})"
