"""The fixture builder writes what it is told, and the catalog models run where the catalog says."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from fixtures.builder import BUFFER_ALIGNMENT, ModelBuilder
from fixtures.catalog import BUILDERS, CATALOG, RESIZE_TO, RUNS_IN_TFLITE, RUNS_IN_TFLM
from fixtures.write_models import DEFAULT_DIR
from schemas.tflite.BuiltinOperator import BuiltinOperator
from schemas.tflite.BuiltinOptions import BuiltinOptions
from schemas.tflite.Conv2DOptions import Conv2DOptions
from schemas.tflite.Model import Model
from schemas.tflite.WhileOptions import WhileOptions

TFLM_ARENA_BYTES = 1 << 20


@functools.cache
def built(name: str) -> tuple[ModelBuilder, bytes]:
    m = BUILDERS[name]()
    return m, m.build()


def read(data: bytes) -> Model:
    assert Model.ModelBufferHasIdentifier(data, 0), "missing TFL3 identifier"
    return Model.GetRootAs(data, 0)


def sample(shape, dtype) -> np.ndarray:
    """Small deterministic input values of the given shape and numpy dtype."""
    n = int(np.prod(shape))
    ramp = (np.arange(n) % 7 - 3).reshape(shape)
    if dtype == np.bool_:
        return ramp > 0
    if np.issubdtype(dtype, np.integer):
        return ramp.astype(dtype)
    return (ramp / 4).astype(dtype)


def tflite_interpreter(data: bytes):
    litert = pytest.importorskip(
        "ai_edge_litert.interpreter", reason="ai-edge-litert is not installed")
    return litert.Interpreter(
        model_content=data,
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )


# -- the builder -------------------------------------------------------------------------------


def test_builder_writes_header_sentinel_and_aligned_constants():
    m, data = built("mobile_block")
    model = read(data)
    assert model.Version() == 3
    assert model.Buffers(0).DataLength() == 0
    buffers = [model.Buffers(i) for i in range(model.BuffersLength())]
    with_data = [buf for buf in buffers if buf.DataLength()]
    assert with_data
    for buf in with_data:
        start = buf._tab.Vector(buf._tab.Offset(4))  # field 0 (data): where its bytes begin
        assert start % BUFFER_ALIGNMENT == 0


def test_operator_codes_are_deduplicated_with_both_code_fields():
    m, data = built("variables")
    model = read(data)
    codes = [model.OperatorCodes(i) for i in range(model.OperatorCodesLength())]
    effective = [c.BuiltinCode() for c in codes]
    assert len(effective) == len(set(effective))
    for c in codes:
        assert c.DeprecatedBuiltinCode() == min(c.BuiltinCode(), 127)
    assert BuiltinOperator.VAR_HANDLE in effective  # used in two subgraphs, listed once

    _, chain_data = built("chain")
    assert read(chain_data).OperatorCodesLength() == 2  # CONV_2D and RELU only


def test_builtin_options_union_and_fields():
    m = ModelBuilder()
    g = m.subgraph("main")
    x = g.tensor("x", [1, 4, 4, 2])
    w = g.const("w", np.zeros([2, 1, 1, 2], np.float32))
    y = g.tensor("y", [1, 2, 2, 2])
    g.op("CONV_2D", [x, w, -1], [y], options=dict(
        padding="VALID", stride_w=2, stride_h=2, fused_activation_function="RELU6"))
    model = read(m.build())
    op = model.Subgraphs(0).Operators(0)
    assert op.BuiltinOptionsType() == BuiltinOptions.Conv2DOptions
    assert list(op.InputsAsNumpy()) == [x, w, -1]
    options = Conv2DOptions()
    options.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
    written = (options.Padding(), options.StrideW(), options.StrideH(),
               options.FusedActivationFunction())
    assert written == (1, 2, 2, 3)  # VALID, 2, 2, RELU6


def test_options_key_order_does_not_change_the_bytes():
    def one(options: dict) -> bytes:
        m = ModelBuilder()
        g = m.subgraph()
        a, b = g.tensor("a", [4]), g.tensor("b", [4])
        g.op("ADD", [a, a], [b], options=options)
        return m.build()

    assert one(dict(fused_activation_function="RELU", pot_scale_int16=False)) == one(
        dict(pot_scale_int16=False, fused_activation_function="RELU"))


def test_misspelt_option_field_fails():
    m = ModelBuilder()
    g = m.subgraph()
    a = g.tensor("a", [4])
    g.op("SOFTMAX", [a], [a], options=dict(betta=1.0))
    with pytest.raises(ValueError, match="betta"):
        m.build()


def test_broken_models_are_written_as_described():
    m = ModelBuilder()
    g = m.subgraph("main")
    x = g.tensor("x", [2], buffer=999)
    i = g.tensor("i", [2], "INT32")
    y = g.tensor("y", [2])
    g.op("WHILE", [x], [y], options=dict(cond_subgraph_index=99, body_subgraph_index=98),
         intermediates=[i])
    g.op("MyCustomOp", [y, -1], [x], custom=True, custom_options=b"\x07")
    g.inputs([x])
    g.outputs([y, 42])
    model = read(m.build())
    sub = model.Subgraphs(0)
    assert sub.Tensors(x).Buffer() == 999
    assert list(sub.OutputsAsNumpy()) == [y, 42]
    while_op = sub.Operators(0)
    options = WhileOptions()
    options.Init(while_op.BuiltinOptions().Bytes, while_op.BuiltinOptions().Pos)
    assert (options.CondSubgraphIndex(), options.BodySubgraphIndex()) == (99, 98)
    assert list(while_op.IntermediatesAsNumpy()) == [i]
    custom = sub.Operators(1)
    code = model.OperatorCodes(custom.OpcodeIndex())
    assert (code.BuiltinCode(), code.CustomCode()) == (BuiltinOperator.CUSTOM, b"MyCustomOp")
    assert bytes(custom.CustomOptionsAsNumpy()) == b"\x07"


def test_tensor_fields_metadata_and_signatures_round_trip():
    m, data = built("dequantize_fp16")
    model = read(data)
    sub = model.Subgraphs(0)
    tensors = {sub.Tensors(i).Name(): sub.Tensors(i) for i in range(sub.TensorsLength())}
    half = tensors[b"conv1_w_fp16"]
    assert half.Type() == 1  # FLOAT16
    assert model.Buffers(half.Buffer()).DataLength() == 8 * 3 * 3 * 3 * 2

    _, data = built("mobile_block")
    model = read(data)
    entry = model.Metadata(0)
    assert entry.Name() == b"min_runtime_version"
    assert bytes(model.Buffers(entry.Buffer()).DataAsNumpy()).startswith(b"1.14.0")
    sig = model.SignatureDefs(0)
    assert sig.SignatureKey() == b"serving_default" and sig.InputsLength() == 1

    _, data = built("dynamic_batch")
    x = read(data).Subgraphs(0).Tensors(0)
    assert list(x.ShapeAsNumpy()) == [1, 8, 8, 3]
    assert list(x.ShapeSignatureAsNumpy()) == [-1, 8, 8, 3]


# -- the catalog -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_catalog_model_is_deterministic_and_small(name):
    first = CATALOG[name]()
    assert first == CATALOG[name]()
    assert len(first) < 100_000


def test_written_models_match_the_catalog():
    on_disk = {p.stem for p in DEFAULT_DIR.glob("*.tflite")}
    assert on_disk == set(CATALOG), "rerun `python -m fixtures.write_models`"
    for name in CATALOG:
        assert (DEFAULT_DIR / f"{name}.tflite").read_bytes() == built(name)[1], (
            f"{name}.tflite is stale: rerun `python -m fixtures.write_models`")
    assert sum(p.stat().st_size for p in DEFAULT_DIR.glob("*.tflite")) < 1_000_000


def test_runtime_sets_name_catalog_models():
    assert RUNS_IN_TFLITE <= set(CATALOG) and RUNS_IN_TFLM <= set(CATALOG)
    assert set(RESIZE_TO) <= RUNS_IN_TFLITE


@pytest.mark.parametrize("name", sorted(RUNS_IN_TFLITE))
def test_runs_in_tflite_with_the_counts_built(name):
    m, data = built(name)
    main = m.subgraphs[0]
    interp = tflite_interpreter(data)
    # Before allocation the interpreter holds exactly the file's tensors; allocation may append
    # unnamed scratch tensors (im2col and the like) past them.
    assert len(interp.get_tensor_details()) == main.tensor_count
    assert len(interp._get_ops_details()) == main.op_count
    interp.allocate_tensors()
    assert len(interp._get_ops_details()) == main.op_count
    assert len(interp.get_tensor_details()) >= main.tensor_count
    for d in interp.get_input_details():
        interp.set_tensor(d["index"], sample(d["shape"], d["dtype"]))
    interp.invoke()
    for d in interp.get_output_details():
        assert interp.get_tensor(d["index"]).dtype == d["dtype"]


def test_custom_op_is_refused_by_tflite():
    with pytest.raises((RuntimeError, ValueError), match="MyCustomOp"):
        interp = tflite_interpreter(built("custom_op")[1])
        interp.allocate_tensors()


@pytest.mark.parametrize("name", sorted(RESIZE_TO))
def test_dynamic_model_resizes_and_runs(name):
    interp = tflite_interpreter(built(name)[1])
    d = interp.get_input_details()[0]
    assert -1 in list(d["shape_signature"])
    new_shape = RESIZE_TO[name]
    interp.resize_tensor_input(d["index"], new_shape, strict=True)
    interp.allocate_tensors()
    interp.set_tensor(d["index"], sample(new_shape, d["dtype"]))
    interp.invoke()
    out = interp.get_output_details()[0]
    assert all(n > 0 for n in interp.get_tensor(out["index"]).shape)
    assert list(interp.get_input_details()[0]["shape"]) == new_shape


@pytest.mark.parametrize("name", sorted(RUNS_IN_TFLM))
def test_runs_in_tflite_micro(name):
    # `runtime` is an attribute of the package, not an importable submodule of that name.
    runtime = pytest.importorskip("tflite_micro", reason="tflite-micro is not installed").runtime
    m, data = built(name)
    interp = runtime.Interpreter.from_bytes(data, arena_size=TFLM_ARENA_BYTES)
    for position in range(len(m.subgraphs[0].input_indices)):
        d = interp.get_input_details(position)
        interp.set_input(sample(d["shape"], d["dtype"]), position)
    interp.invoke()
    assert interp.get_output(0).size > 0


def test_op_zoo_options_take_effect():
    """Wrongly encoded options (alpha, slice masks, adj_y, axes...) would change these numbers."""
    interp = tflite_interpreter(built("op_zoo")[1])
    x = sample([1, 4, 4, 2], np.float32) * 4  # small integers: every result below is exact
    out = interp.get_signature_runner("serving_default")(x=x)
    sliced = x.transpose(0, 3, 1, 2)[0, :, ::2, ::2]
    leaky = np.where(sliced > 0, sliced, 0.25 * sliced)
    product = leaky @ leaky.transpose(0, 2, 1)
    difference = product[1:2] - product[0:1] / 2
    np.testing.assert_array_equal(out["leaky"], leaky)
    np.testing.assert_array_equal(out["product"], product)
    np.testing.assert_array_equal(out["as_int"], np.trunc(difference).astype(np.int32))
    np.testing.assert_array_equal(out["gathered_sum"], x[:, [3, 0]].sum(axis=(1, 2), keepdims=True))
    assert out["gated"].shape == (1, 4, 4, 2)
