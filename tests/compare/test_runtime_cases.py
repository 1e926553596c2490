"""The hard cases, each a fixture model (fixtures/runtime_cases.py), predicted tensor by tensor
under both TFLite versions: fused LSTM float and int8, a WHILE loop with a recurrent body, IF
with two different branches, equal-size ties, SHAPE arithmetic, and a dynamic batch."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import pytest

from fixtures.runtime_cases import CASES, CASES_DIR
from packager.compare.comparison import check_arena, compare_model, planned
from packager.compare.predict_tflite import predict_tflite
from packager.compare.tflite_runtime import TfliteMeasurement, measure_tflite
from packager.runtimes.tflite_versions import LITERT, SETUP_214, TFLITE_RUNTIME, choice
from packager.kernels.tflite_scratch import rules_for
from packager.lifetimes import DYNAMIC, PERSISTENT, UNUSED, model_lifetimes
from packager.reader import read_model

NAMES = sorted(CASES)


def path_of(name: str) -> Path:
    return CASES_DIR / f"{name}.tflite"


def test_written_cases_match_their_builders():
    on_disk = {p.stem for p in CASES_DIR.glob("*.tflite")}
    assert on_disk == set(CASES), "rerun `python -m fixtures.runtime_cases`"
    for name, build in CASES.items():
        assert path_of(name).read_bytes() == build().build(), f"{name}: rerun the writer"


def _runtime(name: str):
    which = choice(name)
    if not which.installed:
        pytest.skip(which.missing_reason if name == LITERT
                    else f"tflite-runtime 2.14 has no environment here: {SETUP_214}")
    return which


@functools.cache
def measured(name: str, runtime: str):
    model = read_model(path_of(name))
    return model, measure_tflite(path_of(name), model, runtime=runtime)


@pytest.mark.parametrize("runtime", [LITERT, TFLITE_RUNTIME])
@pytest.mark.parametrize("name", NAMES)
def test_every_case_is_predicted_exactly(name, runtime):
    _runtime(runtime)
    model, result = measured(name, runtime)
    assert isinstance(result, TfliteMeasurement), result
    predictions = predict_tflite(model, rules_for(result.runtime, result.version))
    for m, p in zip(result.arenas, predictions):
        check = check_arena(m, p)
        assert check.exact, (name, runtime, m.subgraph, check.why_not_exact,
                             {t: (m.offsets.get(t), p.offsets.get(t)) for t in check.mismatched})
        assert not p.uncovered_ops and not m.unknown  # nothing hidden, every rule known


# The TFLite Micro example models that TFLite runs too: fused LSTM int8, SVDF, quantized convs.
TFLM_FOLDER_MODELS = ("hello_world_int8", "keyword_scrambled_8bit", "micro_speech_quantized",
                      "mobilenet_v2_quantized_1x3x224x224", "trained_lstm_int8")


@pytest.mark.parametrize("runtime", [LITERT, TFLITE_RUNTIME])
@pytest.mark.parametrize("name", TFLM_FOLDER_MODELS)
def test_shared_tflm_models_are_predicted_exactly(name, runtime):
    _runtime(runtime)
    from tests.conftest import SHARED_MODELS

    path = SHARED_MODELS / "tflm" / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"real model tflm/{name}.tflite not present (../shared/models is absent)")
    model = read_model(path)
    result = measure_tflite(path, model, runtime=runtime)
    assert isinstance(result, TfliteMeasurement), result
    for m, p in zip(result.arenas, predict_tflite(model, rules_for(result.runtime, result.version))):
        check = check_arena(m, p)
        assert check.exact and not p.uncovered_ops, (name, runtime, check.why_not_exact)


def test_lstm_temporaries_are_the_kernels():
    model = read_model(path_of("lstm_float"))
    (p,) = predict_tflite(model, rules_for("ai-edge-litert", ""))
    # one float scratch buffer of [batch, 12 cells x 5 + 16]
    assert [(s.what, s.nbytes) for s in p.scratch] == [("scratch_buffer", 4 * (12 * 5 + 16))]
    model = read_model(path_of("lstm_int8"))
    (p,) = predict_tflite(model, rules_for("tflite-runtime", "2.14.0"))
    assert sorted(s.nbytes for s in p.scratch) == sorted([32, 32, 32, 32, 16, 64])  # 16 cells


def test_while_prunes_what_no_op_reads():
    model = read_model(path_of("while_recurrent"))
    main, cond, body = model_lifetimes(model, "tflite")
    assert cond.category[1] == UNUSED and cond.category[2] == UNUSED  # h, x: LESS reads only i
    assert main.category[5] == UNUSED  # x passes through the body and nobody reads it after
    assert 5 not in {r.tensor for r in main.records}


def test_shape_arithmetic_is_computed_at_prepare_and_the_reshape_is_dynamic():
    model = read_model(path_of("shape_arithmetic"))
    (arena,) = model_lifetimes(model, "tflite")
    names = {t.name: t.index for t in model.main.tensors}
    assert arena.category[names["shape"]] == PERSISTENT
    assert arena.category[names["steps"]] == PERSISTENT
    assert arena.category[names["doubled"]] == PERSISTENT
    assert names["rows"] in {r.tensor for r in arena.records}  # FLOOR_DIV runs in the arena
    assert arena.category[names["folded"]] == DYNAMIC


def test_dynamic_tensors_are_left_out_of_the_best_plan_and_said_so():
    _runtime(LITERT)
    c = compare_model(path_of("shape_arithmetic"))
    t = c.tflite
    assert t.exact and t.planned.best <= t.measured  # like with like: no '168% worse' row
    assert any("allocated while running" in line and "dynamic" in line for line in t.set_apart)


def test_if_branches_are_alternatives_in_the_ideal_floor():
    model = read_model(path_of("if_two_branches"))
    arenas = model_lifetimes(model, "ideal")
    alone = {a.subgraph: planned_single(model, a) for a in arenas}
    ideal = planned(model, "ideal")
    assert ideal.best == alone[0] + max(alone[1], alone[2]) < sum(alone.values())
    assert ideal.bound <= ideal.best
    tflite = planned(model, "tflite")  # TFLite allocates every branch's arena up front: a sum
    assert tflite.best == sum(planned_single(model, a) for a in model_lifetimes(model, "tflite"))


def planned_single(model, arena) -> int:
    from packager.arenas import problem_of
    from packager.plan.portfolio import run_portfolio

    return run_portfolio(problem_of(arena), baselines=False).best_offsets.total


@pytest.mark.skipif(importlib.util.find_spec("tflite_micro") is None,
                    reason="tflite-micro is not installed (pip install '.[runtimes]')")
def test_tflm_head_on_if_branches_is_exact_and_above_the_ideal_floor():
    c = compare_model(path_of("if_two_branches"))
    assert c.tflm.status == "measured" and c.tflm.exact
    assert c.ideal.best <= c.tflm.measured
