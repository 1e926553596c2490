"""The paper's six networks (fixtures/networks.py): planning-only files read and plan, the float
models run in TFLite, and well-known layers have their published shapes."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from fixtures.network_cache import network_bytes, network_path
from fixtures.networks import NETWORKS, make_divisible
from packager.lifetimes import model_lifetimes
from packager.model import Model, Subgraph
from packager.arenas import plan_model
from packager.reader import parse_model
from tests.conftest import shared_model_path

PLANNING_FILE_LIMIT = 64 * 1024


@functools.cache
def planning_model(name: str) -> Model:
    return parse_model(network_bytes(name, "planning"))


def op_shapes(sg: Subgraph, op_name: str) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(input 0 shape, output 0 shape) of every op of that type, in order."""
    return [(sg.tensors[op.inputs[0]].shape, sg.tensors[op.outputs[0]].shape)
            for op in sg.operators if op.name == op_name]


def float_params(model: Model) -> int:
    return sum(t.num_elements for t in model.main.tensors if t.is_constant and t.type == "FLOAT32")


# -- planning-only files --------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(NETWORKS))
def test_planning_file_is_small_reads_and_plans(name):
    data = network_bytes(name, "planning")
    assert len(data) < PLANNING_FILE_LIMIT
    model = parse_model(data)
    sg = model.main
    # Every weight counts as a constant, so no planner ever places one.
    consumers = {i for op in sg.operators for i in op.inputs[1:] if i >= 0}
    weights = [sg.tensors[i] for i in consumers if sg.tensors[i].type == "FLOAT32"
               and i not in {o for op in sg.operators for o in op.outputs}]
    assert weights and all(t.is_constant for t in weights)
    for semantics in ("paper", "tflite"):
        arenas = plan_model(model, semantics, "greedy_by_size")
        result = arenas[0].result
        assert result.best_offsets.total >= result.problem.offset_lower_bound > 0
        assert result.best_objects.total >= result.problem.object_lower_bound > 0


@pytest.mark.parametrize("name", list(NETWORKS))
def test_generation_is_deterministic_and_cached(name, tmp_path):
    path = network_path(name, "planning", cache_dir=tmp_path)
    assert path.read_bytes() == network_bytes(name, "planning")
    assert network_path(name, "planning", cache_dir=tmp_path) == path


def test_random_weights_are_deterministic():
    assert network_bytes("blazeface", "random") == network_bytes("blazeface", "random")


# -- published shapes -----------------------------------------------------------------------------

def test_mobilenet_v1_shapes():
    model = planning_model("mobilenet_v1")
    sg = model.main
    assert sg.tensors[sg.inputs[0]].shape == (1, 224, 224, 3)
    assert op_shapes(sg, "AVERAGE_POOL_2D") == [((1, 7, 7, 1024), (1, 1, 1, 1024))]
    assert len(op_shapes(sg, "DEPTHWISE_CONV_2D")) == 13
    assert sg.tensors[sg.outputs[0]].shape == (1, 1001)
    assert float_params(model) == pytest.approx(4.23e6, rel=0.01)


def test_mobilenet_v2_shapes():
    model = planning_model("mobilenet_v2")
    sg = model.main
    convs = op_shapes(sg, "CONV_2D")
    # The last bottleneck projects to 7x7x320, then the 1x1 conv widens to 1280.
    assert ((1, 7, 7, 960), (1, 7, 7, 320)) in convs
    assert ((1, 7, 7, 320), (1, 7, 7, 1280)) in convs
    assert op_shapes(sg, "AVERAGE_POOL_2D") == [((1, 7, 7, 1280), (1, 1, 1, 1280))]
    assert len(op_shapes(sg, "ADD")) == 10  # residual connections of the 17 bottlenecks
    assert float_params(model) == pytest.approx(3.5e6, rel=0.02)


def test_inception_v3_shapes():
    model = planning_model("inception_v3")
    sg = model.main
    concats = [out for _, out in op_shapes(sg, "CONCATENATION")]
    assert concats.count((1, 35, 35, 256)) == 1 and concats.count((1, 35, 35, 288)) == 2
    assert concats.count((1, 17, 17, 768)) == 5  # Mixed_6a..6e
    assert concats.count((1, 8, 8, 1280)) == 1  # Mixed_7a
    assert concats.count((1, 8, 8, 2048)) == 2  # Mixed_7b, 7c
    assert op_shapes(sg, "AVERAGE_POOL_2D")[-1] == ((1, 8, 8, 2048), (1, 1, 1, 2048))
    assert float_params(model) == pytest.approx(23.8e6, rel=0.01)


def test_deeplab_v3_shapes():
    model = planning_model("deeplab_v3")
    sg = model.main
    assert sg.tensors[sg.inputs[0]].shape == (1, 257, 257, 3)
    assert sg.tensors[sg.outputs[0]].shape == (1, 257, 257, 21)
    # Output stride 8: the backbone ends at 33x33 with 320 * 0.5 channels; ASPP concatenates two
    # 256-wide branches there.
    assert op_shapes(sg, "AVERAGE_POOL_2D") == [((1, 33, 33, 160), (1, 1, 1, 160))]
    assert [out for _, out in op_shapes(sg, "CONCATENATION")] == [(1, 33, 33, 512)]
    dilations = {op.options.get("dilation_w_factor") for op in sg.operators
                 if op.name == "DEPTHWISE_CONV_2D"}
    assert dilations == {1, 2, 4}
    # 2.7 MB of float32 weights, as the hosted deeplabv3_257_mv_gpu.tflite.
    assert 4 * float_params(model) == pytest.approx(2.7e6, rel=0.05)


def test_posenet_shapes():
    sg = planning_model("posenet").main
    assert sg.tensors[sg.inputs[0]].shape == (1, 257, 257, 3)
    assert [sg.tensors[o].shape for o in sg.outputs] == [
        (1, 17, 17, 17), (1, 17, 17, 34), (1, 17, 17, 32), (1, 17, 17, 32)]
    assert ((1, 17, 17, 1024), (1, 17, 17, 17)) in op_shapes(sg, "CONV_2D")


def test_blazeface_shapes():
    sg = planning_model("blazeface").main
    assert sg.tensors[sg.inputs[0]].shape == (1, 128, 128, 3)
    assert [sg.tensors[o].shape for o in sg.outputs] == [(1, 896, 16), (1, 896, 1)]
    adds = [out for _, out in op_shapes(sg, "ADD")]
    assert adds.count((1, 16, 16, 96)) == 3 and adds.count((1, 8, 8, 96)) == 3  # double blocks
    assert len(op_shapes(sg, "PAD")) == 2  # the two blocks that widen (24->48, 48->96)


def test_blazeface_outputs_match_mediapipe_front_model():
    """The released front model (face_detection_short_range) has the same anchor outputs."""
    real = parse_model(shared_model_path("face_detection_short_range").read_bytes()).main
    ours = planning_model("blazeface").main
    assert sorted(real.tensors[o].shape for o in real.outputs) == \
        sorted(ours.tensors[o].shape for o in ours.outputs)


def test_make_divisible_matches_slim():
    assert [make_divisible(c * 0.5) for c in (32, 16, 24, 32, 64, 96, 160, 320)] == \
        [16, 8, 16, 16, 32, 48, 80, 160]


def test_paper_semantics_plans_every_activation_once():
    model = planning_model("mobilenet_v1")
    records = model_lifetimes(model, "paper")[0].records
    # 30 intermediate tensors plus the input and the output, at their exact float32 sizes.
    assert len(records) == 32
    assert max(r.size for r in records) == 112 * 112 * 64 * 4


# -- the float models in the real interpreter -------------------------------------------------------

@pytest.mark.parametrize("name", list(NETWORKS))
def test_float_model_runs_in_tflite(name):
    """Inception v3 included: its 95 MB of weights build in memory in a few seconds."""
    litert = pytest.importorskip("ai_edge_litert.interpreter",
                                 reason="ai-edge-litert is not installed")
    interpreter = litert.Interpreter(
        model_content=network_bytes(name, "random"),
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interpreter.allocate_tensors()
    inp = interpreter.get_input_details()[0]
    image = np.random.default_rng(0).uniform(-1, 1, inp["shape"]).astype(np.float32)
    interpreter.set_tensor(inp["index"], image)
    interpreter.invoke()
    ours = planning_model(name).main
    expected = [ours.tensors[o].shape for o in ours.outputs]
    outputs = [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]
    assert sorted(o.shape for o in outputs) == sorted(expected)
    assert all(np.isfinite(o).all() for o in outputs)
