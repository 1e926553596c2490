"""The reader agrees with the real TFLite interpreter on ops, tensors and shapes."""

from __future__ import annotations

import numpy as np
import pytest

from fixtures.catalog import CATALOG, RUNS_IN_TFLITE
from packager.reader import parse_model
from tests.conftest import SHARED_MODELS

litert = pytest.importorskip("ai_edge_litert.interpreter",
                             reason="TFLite runtime not installed (pip install '.[runtimes]')")

RUNNABLE_SHARED = ("face_detection_short_range", "iris_landmark", "hand_recrop")


def _cases():
    for name in sorted(RUNS_IN_TFLITE):
        yield pytest.param(("fixture", name), id=f"fixture-{name}")
    for name in RUNNABLE_SHARED:
        yield pytest.param(("shared", name), id=f"shared-{name}")


def _bytes(case) -> bytes:
    kind, name = case
    if kind == "fixture":
        return CATALOG[name]()
    path = SHARED_MODELS / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{name}.tflite not present (../shared/models is absent)")
    return path.read_bytes()


@pytest.mark.parametrize("case", list(_cases()))
def test_reader_matches_interpreter(case):
    data = _bytes(case)
    model = parse_model(data)
    it = litert.Interpreter(model_content=data, experimental_op_resolver_type=
                            litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    native = it._interpreter
    assert native.NumSubgraphs() == len(model.subgraphs)
    for sg in model.subgraphs:
        assert native.NumTensors(sg.index) == len(sg.tensors)
    ops = it._get_ops_details()
    assert len(ops) == len(model.main.operators)
    for detail, op in zip(ops, model.main.operators):
        assert detail["op_name"] == op.name
        assert list(detail["inputs"]) == list(op.inputs)
        assert list(detail["outputs"]) == list(op.outputs)
    for detail in it.get_tensor_details():
        t = model.main.tensors[detail["index"]]
        assert detail["name"] == t.name
        assert tuple(detail["shape"]) == t.shape
        expected_sig = t.shape_signature if t.shape_signature is not None else t.shape
        assert tuple(detail["shape_signature"]) == tuple(expected_sig)
        assert np.dtype(detail["dtype"]).name == _numpy_name(t.type)


def _numpy_name(tensor_type: str) -> str:
    return {"FLOAT32": "float32", "FLOAT16": "float16", "INT32": "int32", "UINT8": "uint8",
            "INT64": "int64", "BOOL": "bool", "INT16": "int16", "INT8": "int8",
            "FLOAT64": "float64", "STRING": "object", "RESOURCE": "object",
            "VARIANT": "object"}.get(tensor_type, tensor_type.lower())
