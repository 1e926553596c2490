"""The coverage matrix (fixtures/op_matrix.py, packager/compare/matrix.py): every builtin operator
each TFLite runtime registers has models or a stated reason, and every row a kernel accepts is
predicted exactly, or `compare` itself names the kernel and the missing rule (and then claims no
saving). docs/op-matrix.md quotes the counts measured here.

TFLite Micro (the tflite-micro package's host build) runs the same models: its rows are exact
when the head it records and the smallest whole arena it runs in are the predicted ones.

The models are written once per session under pytest's temporary folder (the same bytes every
time) and each runtime measures all of them in a few child processes.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import pytest

from benchmarks.tflite_matrix import counts, write_probes
from fixtures.op_matrix import CASES, NOT_BUILT, write
from packager.compare.comparison import compare_tflite, planned
from packager.compare.matrix import (EXACT, FAILED, NAMED, UNNAMED, measure_matrix,
                                     measure_tflm_matrix, registered_builtins,
                                     tflm_registered_builtins)
from packager.dynamic.prepared_shapes import with_prepared_shapes
from packager.reader import read_model
from packager.runtimes.tflite_versions import CHOICES, LITERT, choice
from packager.semantics import TFLITE
from packager.text.compare_view import signature_runners_text
from tests.conftest import REPO

TFLM = "tflite-micro"
INSTALLED = [name for name in CHOICES if choice(name).installed]
if importlib.util.find_spec("tflite_micro") is not None:
    INSTALLED.append(TFLM)
if not INSTALLED:
    pytest.skip("no runtime installed (pip install '.[runtimes]')", allow_module_level=True)


@pytest.fixture(scope="session")
def matrix_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("op_matrix")
    write(folder / "models")
    write_probes(folder / "registration")
    return folder


@functools.cache
def _measured(folder: str, runtime: str):
    models = sorted(Path(folder, "models").glob("*.tflite"))
    probes = sorted(Path(folder, "registration").glob("*.tflite"))
    if runtime == TFLM:
        return measure_tflm_matrix(models), tflm_registered_builtins(probes)
    return measure_matrix(models, runtime), registered_builtins(probes, runtime)


@pytest.fixture(params=INSTALLED)
def measured(request, matrix_folder):
    return _measured(str(matrix_folder), request.param)


@pytest.fixture(params=[name for name in INSTALLED if name != TFLM])
def measured_tflite(request, matrix_folder):
    return _measured(str(matrix_folder), request.param)


def test_every_registered_builtin_has_models_or_a_reason(measured):
    _, registered = measured
    built = {c.op for c in CASES}
    assert len(registered) >= 100  # the probes tell registered kernels from missing ones
    assert "CALL" not in registered  # no runtime has a kernel for CALL
    unexplained = sorted(registered - built - set(NOT_BUILT))
    assert not unexplained, f"registered builtins with no model and no reason: {unexplained}"


# Models a runtime crashes on (no figure to compare), each seen and explained.
KNOWN_CRASHES: dict[str, str] = {}


def test_every_row_is_exact_or_named(measured):
    rows, _ = measured
    runtime = rows[0].runtime.split()[0] if rows else ""
    unnamed = [f"{r.model}: {r.why}" for r in rows if r.verdict == UNNAMED
               or r.verdict == FAILED and KNOWN_CRASHES.get(r.model) != runtime]
    assert not unnamed, "rows not exact, with no kernel named as not modelled:\n" + "\n".join(unnamed)
    assert sum(r.verdict == EXACT for r in rows) > 250


def test_every_registered_operator_runs_in_some_mode(measured_tflite):
    rows, registered = measured_tflite
    accepted = {r.model.split("__")[0] for r in rows if r.verdict in (EXACT, NAMED)}
    never = sorted({c.op for c in CASES} & registered - accepted)
    assert not never, f"operators whose every model the kernel refuses (a wrong model?): {never}"


def test_the_issue_rules_hold(measured_tflite):
    """The kernels the coverage matrix found missing are modelled now: hybrid FULLY_CONNECTED,
    CONV_2D and LSTM scratch, CONV_3D's im2col, 2.14's dilated float CONV_2D im2col, the arenas
    of other signatures (none at allocate_tensors()), value-sized outputs on the heap."""
    rows, _ = measured_tflite
    verdict = {r.model: r.verdict for r in rows}
    for name in ("FULLY_CONNECTED__hybrid", "FULLY_CONNECTED__hybrid_asymmetric_keep_num_dims",
                 "CONV_2D__hybrid_3x3", "CONV_2D__hybrid_1x1", "CONV_3D__float32_3x3x3",
                 "CONV_3D__float32_3x3x3_stride_2", "CONV_2D__float32_3x3_dilation_2",
                 "DEPTHWISE_CONV_2D__hybrid_3x3", "signatures__float32_3_signatures",
                 "SCATTER_ND__float32_shape_from_input",
                 "UNSORTED_SEGMENT_SUM__float32_segment_ids_from_input", "ADD_N__float32",
                 "UNIDIRECTIONAL_SEQUENCE_LSTM__hybrid", "LSTM__hybrid_asymmetric", "LSTM__float32",
                 "WHILE__float32_two_loops", "RANK__float32", "UNIQUE__float32",
                 "BIDIRECTIONAL_SEQUENCE_LSTM__float32", "BIDIRECTIONAL_SEQUENCE_LSTM__hybrid",
                 "TRANSPOSE_CONV__float32", "TRANSPOSE_CONV__int8", "TRANSPOSE_CONV__int16x8",
                 "TFLite_Detection_PostProcess__float32_fast_nms", "Mfcc__float32",
                 "AudioSpectrogram__float32"):
        assert verdict[name] == EXACT, name
    runners = {r.model: r.signature_runners for r in rows}
    assert runners["signatures__float32_3_signatures"] == "exact"  # as get_signature_runner allocates


def test_complex_random_bucketing_and_hashing_kernels(measured_tflite):
    """The kernels built last: complex parts, random numbers (a computed shape or computed
    logits leave the output dynamic), BUCKETIZE, LSH_PROJECTION, EMBEDDING_LOOKUP_SPARSE (output
    resized at Eval), strings (SKIP_GRAM, hash tables: HASHTABLE stops allocate_tensors()'
    preparation), RFFT2D's two working areas (2.14; LiteRT's differ and are named), the
    BuiltinOptions2 operators, int4-weight and uint8 modes, the integer LSTMs, a computed
    TRANSPOSE_CONV output shape."""
    rows, _ = measured_tflite
    verdict = {r.model: r for r in rows}
    litert = rows[0].runtime.startswith("ai-edge-litert")
    for name in ("COMPLEX_ABS__complex64", "REAL__complex64", "IMAG__complex64",
                 "RANDOM_UNIFORM__float32", "RANDOM_UNIFORM__float32_shape_from_input",
                 "RANDOM_STANDARD_NORMAL__float32_shape_from_input", "BUCKETIZE__float32",
                 "BUCKETIZE__int32", "LSH_PROJECTION__float32_sparse",
                 "LSH_PROJECTION__float32_dense", "EMBEDDING_LOOKUP_SPARSE__float32",
                 "MULTINOMIAL__float32", "MULTINOMIAL__float32_constant_logits",
                 "SKIP_GRAM__string", "HASHTABLE_LOOKUP__float32",
                 "HASHTABLE__string_keys_int64_values_with_hashtable_import_hashtable_find_hashtable_size",
                 "TRANSPOSE_CONV__float32_output_shape_computed",
                 "TRANSPOSE_CONV__int8_output_shape_computed", "LSTM__int8x8_16",
                 "UNIDIRECTIONAL_SEQUENCE_LSTM__int8x8_16", "CONV_2D__int4_weights_3x3",
                 "CONV_2D__uint8_3x3", "DEPTHWISE_CONV_2D__int4_weights_3x3",
                 "FULLY_CONNECTED__uint8",
                 *(("DILATE__float32", "STABLEHLO_PAD__int8", "STABLEHLO_GATHER__float32",
                    "STABLEHLO_SCATTER__float32", "REDUCE_WINDOW__float32_2x2_window_sum",
                    "STABLEHLO_RNG_BIT_GENERATOR__uint64_state_threefry",
                    "FULLY_CONNECTED__int4_weights") if litert else ("RFFT2D__float32",))):
        assert verdict[name].verdict == EXACT, (name, verdict[name].why)
    for name in ("RFFT2D__float32",) if litert else ():
        assert verdict[name].verdict == NAMED, (name, verdict[name].why)


@pytest.mark.skipif(TFLM not in INSTALLED, reason="tflite-micro is not installed")
def test_tflm_kernels_whose_prepare_buffers_overlap_their_temporaries(matrix_folder):
    """The kernels that take persistent buffers in Prepare and then read only their
    temporaries' TfLiteTensors and quantization pointers: the smallest whole arena is
    predicted (it runs there, and fails 16 bytes below); int8 SOFTMAX runs (beta 1)."""
    rows, _ = _measured(str(matrix_folder), TFLM)
    verdict = {r.model: r.verdict for r in rows}
    for name in ("CONV_2D__int4_weights_3x3", "DEPTHWISE_CONV_2D__int4_weights_multiplier_2",
                 "UNIDIRECTIONAL_SEQUENCE_LSTM__int8x8_16",
                 "FULLY_CONNECTED__int8", "FULLY_CONNECTED__int16x8_keep_num_dims",
                 "BATCH_MATMUL__int8_constant_rhs", "GATHER__int8", "LOG_SOFTMAX__int8",
                 "DEPTH_TO_SPACE__int8", "SPACE_TO_DEPTH__int8", "SOFTMAX__int8"):
        assert verdict[name] == EXACT, name


@pytest.mark.skipif(LITERT not in INSTALLED, reason="ai-edge-litert is not installed")
def test_a_named_row_claims_no_saving(matrix_folder):
    path = matrix_folder / "models" / "WHILE__float32_two_loops_the_first_body_dynamic.tflite"
    model = read_model(path)
    result = compare_tflite(path, model, planned(with_prepared_shapes(model), TFLITE.name),
                            runtime=LITERT)
    assert result.measured is not None and not result.exact
    assert result.saving is None and result.saving_pct is None
    assert "WHILE" in result.saving_withheld_because


def test_the_docs_quote_the_measured_counts(matrix_folder):
    if set(INSTALLED) != {*CHOICES, TFLM}:
        pytest.skip("docs/op-matrix.md quotes both TFLite runtimes and TFLite Micro; one is missing")
    rows, registered = {}, {}
    for name in (*CHOICES, TFLM):
        measured_rows, ops = _measured(str(matrix_folder), name)
        label = next(r.runtime for r in measured_rows if r.verdict == EXACT)
        rows[label], registered[label] = measured_rows, ops
    page = (REPO / "docs" / "op-matrix.md").read_text(encoding="utf-8")
    for line in counts(rows, registered):
        assert line in page, f"docs/op-matrix.md is stale (python -m benchmarks.tflite_matrix --write docs/op-matrix.md): {line}"


@pytest.mark.parametrize("runtime", [name for name in INSTALLED if name != TFLM])
def test_compare_reports_each_signature_runner(matrix_folder, runtime):
    """`compare` itself measures every other signature's arena as get_signature_runner allocates
    it, beside the prediction, with a verdict per signature."""
    path = matrix_folder / "models" / "signatures__float32_3_signatures.tflite"
    model = read_model(path)
    result = compare_tflite(path, model, planned(with_prepared_shapes(model), TFLITE.name),
                            runtime=runtime)
    runners = result.signature_runners
    assert [(a.subgraph, a.signatures) for a in runners] == [(1, ("sig1",)), (2, ("sig2",))]
    assert all(a.exact and a.measured == a.predicted > 0 for a in runners)
    assert runners[-1].predicted > result.predicted  # not subgraph 0's figure again
    text = signature_runners_text(result)
    assert text.startswith("sig1 (subgraph 1): 768 B measured, 768 B predicted, exact")
