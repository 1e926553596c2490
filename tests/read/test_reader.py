"""The reader: real models load with the right structure; bad input is a ModelError, never a crash."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packager.errors import ModelError
from packager.lifetimes import model_lifetimes
from packager.reader import parse_model, read_model
from tests.conftest import SHARED_MODELS, shared_model_path


def test_real_models_read(shared_model):
    model = read_model(shared_model)
    assert model.version == 3
    sg = model.main
    assert sg.operators and sg.tensors
    for op in sg.operators:
        assert op.name  # every builtin code has a name from the enum
        assert all(-1 <= i < len(sg.tensors) for i in op.inputs)


def test_iris_structure():
    model = read_model(shared_model_path("iris_landmark"))
    sg = model.main
    assert (len(sg.operators), len(sg.tensors)) == (169, 386)
    assert sg.tensors[sg.inputs[0]].shape == (1, 64, 64, 3)
    assert sg.operators[0].name == "CONV_2D"
    assert sg.operators[0].options["stride_w"] == 2


def test_custom_op_and_metadata():
    model = read_model(shared_model_path("selfie_segmentation"))
    customs = {op.name for op in model.main.operators if op.opcode.is_custom}
    assert customs == {"Convolution2DTransposeBias"}
    assert [name for name, _ in model.metadata] == ["TFLITE_METADATA"]
    assert model.metadata_bytes("TFLITE_METADATA")


def test_fp16_constants_are_constants():
    model = read_model(shared_model_path("face_detection_short_range"))
    deq = [op for op in model.main.operators if op.name == "DEQUANTIZE"]
    assert len(deq) == 74
    assert all(model.main.tensors[op.inputs[0]].type == "FLOAT16" for op in deq)
    assert all(model.main.tensors[op.inputs[0]].is_constant for op in deq)


@pytest.mark.parametrize("data, message", [
    (b"", "too short"),
    (b"\x00" * 7, "too short"),
    (b"GIF89a\x00\x00\x00\x00\x00\x00", "file identifier"),
    (b"\x1c\x00\x00\x00TFL3", "corrupt"),
])
def test_bad_bytes(data, message):
    with pytest.raises(ModelError, match=message):
        parse_model(data)


def test_random_bytes_are_rejected():
    rng = random.Random(7)
    for _ in range(200):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 400)))
        with pytest.raises(ModelError):
            parse_model(data)


def test_truncated_real_model_is_rejected():
    data = shared_model_path("hand_recrop").read_bytes()
    for cut in (8, 64, 1000, len(data) // 2, len(data) - 1000):
        with pytest.raises(ModelError):
            parse_model(data[:cut])


def test_wrong_identifier_is_named():
    data = bytearray(shared_model_path("iris_landmark").read_bytes())
    data[4:8] = b"BFBS"
    with pytest.raises(ModelError, match="'BFBS'"):
        parse_model(bytes(data))


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(ModelError, match="cannot read"):
        read_model(tmp_path / "nope.tflite")
    with pytest.raises(ModelError, match="folder"):
        read_model(tmp_path)


def _mutation_corpus() -> list[bytes]:
    from fixtures.catalog import CATALOG
    corpus = [CATALOG[name]() for name in ("chain", "residual", "while_loop")]
    for name in ("iris_landmark", "hand_recrop"):
        path = SHARED_MODELS / f"{name}.tflite"
        if path.exists():
            corpus.append(path.read_bytes())
    return corpus


_CORPUS: list[bytes] = []


def corpus() -> list[bytes]:
    if not _CORPUS:
        _CORPUS.extend(_mutation_corpus())
    return _CORPUS


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.integers(0, 10), edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)),
                                                 min_size=1, max_size=8),
       cut=st.one_of(st.none(), st.floats(0, 1)))
def test_mutated_models_fail_cleanly(which, edits, cut):
    """Flipped bytes and truncation: the reader (and the lifetimes after it) either work or raise
    ModelError, and never take long."""
    models = corpus()
    data = bytearray(models[which % len(models)])
    # Aim most edits at the flatbuffer's tables (the start of the file), where offsets live.
    for where, value in edits:
        span = min(len(data), 4096) if where < 0.8 else len(data)
        data[int(where * (span - 1))] = value
    if cut is not None:
        data = data[: int(cut * len(data))]
    start = time.monotonic()
    try:
        model = parse_model(bytes(data))
        for semantics in ("tflite", "tflm", "ideal"):
            model_lifetimes(model, semantics)
    except ModelError:
        pass
    assert time.monotonic() - start < 10


def _one_op_model(**tensor_kwargs) -> bytes:
    from fixtures.builder import ModelBuilder
    m = ModelBuilder()
    g = m.subgraph("main")
    x = g.tensor("x", [1, 4])
    y = g.tensor("y", **{"shape": [1, 4], **tensor_kwargs})
    g.op("RELU", [x], [y])
    g.inputs([x])
    g.outputs([y])
    return m.build()


def test_tensor_pointing_to_missing_buffer():
    with pytest.raises(ModelError, match="buffer 999"):
        parse_model(_one_op_model(buffer=999))


def test_shape_overflowing_64_bits():
    with pytest.raises(ModelError, match="2\\^63"):
        parse_model(_one_op_model(shape=[2**31 - 1] * 3))


def test_control_flow_pointing_to_missing_subgraph():
    from fixtures.builder import ModelBuilder
    m = ModelBuilder()
    g = m.subgraph("main")
    x, y = g.tensor("x", [1], "INT32"), g.tensor("y", [1], "INT32")
    g.op("WHILE", [x], [y], options=dict(cond_subgraph_index=99, body_subgraph_index=0))
    g.inputs([x])
    g.outputs([y])
    with pytest.raises(ModelError, match="subgraph 99"):
        parse_model(m.build())


def test_operator_with_missing_tensor():
    from fixtures.builder import ModelBuilder
    m = ModelBuilder()
    g = m.subgraph("main")
    x = g.tensor("x", [1, 4])
    g.op("RELU", [x], [7])
    g.inputs([x])
    with pytest.raises(ModelError, match="tensor 7"):
        parse_model(m.build())
