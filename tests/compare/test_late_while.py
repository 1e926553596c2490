"""A WHILE prepared during Invoke (past a loop whose body holds a dynamic tensor), measured after
one Invoke under each installed TFLite version (fixtures/late_while.py), and the measurement's
reading of a loop body's heap buffers once its arena is released."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from fixtures.late_while import two_loops
from fixtures.op_matrix import two_loops as matrix_two_loops, Case, F32
from packager.compare.comparison import check_arena
from packager.compare.predict_tflite import predict_after_invoke, predict_tflite
from packager.compare.tflite_runtime import TfliteMeasurement, measure_tflite, measurement_from_probe
from packager.kernels.tflite_scratch import LITERT, rules_for
from packager.lifetimes import DYNAMIC, _classify
from packager.reader import read_model
from packager.runtimes.child import MEASURED, ProbeResult
from packager.runtimes.tflite_versions import CHOICES, choice
from packager.semantics import TFLITE

INSTALLED = [name for name in CHOICES if choice(name).installed]


@functools.cache
def _passthrough(folder: str) -> Path:
    path = Path(folder) / "late_while_passthrough.tflite"
    two_loops().save(path)
    return path


@pytest.mark.skipif(not INSTALLED, reason="no TFLite runtime installed (pip install '.[runtimes]')")
@pytest.mark.parametrize("runtime", INSTALLED)
def test_an_unread_pass_through_output_gets_a_buffer_when_prepared_during_invoke(
        tmp_path_factory, runtime):
    path = _passthrough(str(tmp_path_factory.mktemp("late_while")))
    model = read_model(path)
    result = measure_tflite(path, model, runtime=runtime)
    assert isinstance(result, TfliteMeasurement), result
    rules = rules_for(result.runtime, result.version)
    after, inexact = predict_after_invoke(model, predict_tflite(model, rules), rules)
    assert not inexact
    main = model.subgraphs[0]
    p2 = next(t.index for t in main.tensors if t.name == "p2")
    assert p2 in result.after_invoke[0].offsets  # the runtime gave it a buffer in the arena
    for m, p in zip(result.after_invoke, after):
        check = check_arena(m, p)
        assert check.exact, (m.subgraph, check)
    assert result.total_after_invoke == sum(p.arena for p in after)


def test_a_released_body_keeps_only_heap_buffers(tmp_path):
    """After Invoke, a loop body's arena is released; a dynamic tensor of it still holds its heap
    buffer, which is no part of any arena (a SimpleRNN's sliced sequence)."""
    path = tmp_path / "two_loops.tflite"
    Case("WHILE", F32, matrix_two_loops(True)).model().save(path)
    model = read_model(path)
    body = next(i for i, sg in enumerate(model.subgraphs)
                if any(c == DYNAMIC for c in _classify(model, sg, TFLITE).values()))
    dynamic = next(t for t, c in _classify(model, model.subgraphs[body], TFLITE).items()
                   if c == DYNAMIC)
    nbytes = model.subgraphs[body].tensors[dynamic].nbytes
    rows = [[[t.index, None, "Tensor data is null. Run allocate_tensors() first"]
             for t in sg.tensors] for sg in model.subgraphs]
    after = [list(r) for r in rows]
    after[body] = [[t, 1 << 40, nbytes] if t == dynamic else [t, ptr, n]
                   for t, ptr, n in after[body]]
    data = {"runtime": "ai-edge-litert", "version": "2.3.0", "subgraphs": rows,
            "after_invoke": {"subgraphs": after}}
    measured = measurement_from_probe(model, ProbeResult(MEASURED, data, ""))
    assert measured.after_invoke[body].arena == 0
    assert measured.after_invoke[body].elsewhere == {dynamic: nbytes}
    (predicted,) = [p for p in predict_after_invoke(model, predict_tflite(model, LITERT),
                                                    LITERT)[0] if p.subgraph == body]
    assert predicted.arena == 0
