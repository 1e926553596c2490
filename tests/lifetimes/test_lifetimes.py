"""Usage records under each semantics, on small graphs whose answer is known by hand."""

from __future__ import annotations

import numpy as np
import pytest

from fixtures.builder import ModelBuilder
from packager.lifetimes import ALIAS, CONSTANT, PERSISTENT, PLANNED, model_lifetimes
from packager.reader import parse_model
from tests.conftest import shared_model_path


def _chain(*ops: str, shape=(1, 4, 4, 8)):
    """x -> op -> t1 -> op -> t2 ... ; the last tensor is the output."""
    m = ModelBuilder()
    g = m.subgraph("main")
    prev = g.tensor("x", shape)
    g.inputs([prev])
    for k, name in enumerate(ops):
        nxt = g.tensor(f"t{k + 1}", shape)
        g.op(name, [prev], [nxt])
        prev = nxt
    g.outputs([prev])
    return parse_model(m.build())


def _records(model, semantics, arena=0):
    a = model_lifetimes(model, semantics)[arena]
    return {r.tensor: (r.first_op, r.last_op, r.size) for r in a.records}, a


def test_tflite_pins_inputs_and_keeps_outputs():
    model = _chain("RELU", "RELU", "RELU")
    recs, a = _records(model, "tflite")
    n = 512
    assert recs == {0: (0, 2, n), 1: (0, 1, n), 2: (1, 2, n), 3: (2, 2, n)}
    assert a.whole_run == frozenset({0})  # the input is allocated at op 0 and never freed


def test_tflm_frees_inputs_and_uses_scopes():
    model = _chain("RELU", "RELU", "RELU")
    recs, _ = _records(model, "tflm")
    # TFLite Micro: inputs created at scope 0, op i runs in scope i + 1, outputs kept to the end.
    assert recs == {0: (0, 1, 512), 1: (1, 2, 512), 2: (2, 3, 512), 3: (3, 3, 512)}


def test_tflm_rounds_sizes_to_16():
    model = _chain("RELU", shape=(1, 3))
    recs, _ = _records(model, "tflm")
    assert {size for _, _, size in recs.values()} == {16}
    recs, _ = _records(model, "tflite")
    assert {size for _, _, size in recs.values()} == {12}


def test_ideal_writes_activations_in_place():
    model = _chain("RELU", "LOGISTIC", "TANH")
    recs, a = _records(model, "ideal")
    assert list(recs) == [0]  # every output reuses the input's buffer
    assert a.aliases == {1: 0, 2: 0, 3: 0}
    assert recs[0][:2] == (0, 2)


def _add_graph(*, extra_reader=False, input_feeds_add=False, output_is_add=False, shape=(1, 8)):
    """x -> RELU -> a ; ADD(a, c) -> y -> RELU -> z (output); c from another RELU of x."""
    m = ModelBuilder()
    g = m.subgraph("main")
    x = g.tensor("x", shape)
    a = g.tensor("a", shape)
    c = g.tensor("c", shape)
    y = g.tensor("y", shape)
    z = g.tensor("z", shape)
    g.op("RELU", [x], [a])
    g.op("RELU", [x], [c])
    g.op("ADD", [x if input_feeds_add else a, c], [y])
    outs = [y] if output_is_add else [z]
    if not output_is_add:
        g.op("RELU", [y], [z])
    if extra_reader:
        w = g.tensor("w", shape)
        g.op("RELU", [a], [w])
        outs.append(w)
    g.inputs([x])
    g.outputs(outs)
    return parse_model(m.build())


def test_tflite_add_shares_a_single_reader_input():
    _, a = _records(_add_graph(), "tflite")
    assert a.aliases == {3: 1}  # y takes a's buffer (input 0 tried first)
    assert a.category[3] == ALIAS


@pytest.mark.parametrize("kwargs", [dict(extra_reader=True), dict(output_is_add=True),
                                    dict(shape=(1, 1))])
def test_tflite_add_does_not_share(kwargs):
    _, a = _records(_add_graph(**kwargs), "tflite")
    if kwargs.get("extra_reader"):
        assert a.aliases == {3: 2}  # a is read twice; c (input 1) still qualifies
    else:
        assert a.aliases == {}


def test_tflite_never_shares_a_graph_input():
    _, a = _records(_add_graph(input_feeds_add=True), "tflite")
    assert a.aliases == {3: 2}  # x is a graph input: ADD falls back to input 1


def test_alias_extends_the_owner_lifetime():
    recs, a = _records(_add_graph(), "tflite")
    assert a.aliases == {3: 1}
    assert recs[1] == (0, 3, 32)  # a now lives until z is computed from y


def test_unread_tensor_lives_to_the_end_in_tflite_only():
    m = ModelBuilder()
    g = m.subgraph("main")
    x, dead, y, z = (g.tensor(n, [1, 8]) for n in ("x", "dead", "y", "z"))
    g.op("RELU", [x], [dead])
    g.op("RELU", [x], [y])
    g.op("RELU", [y], [z])
    g.inputs([x])
    g.outputs([z])
    model = parse_model(m.build())
    assert _records(model, "tflite")[0][dead] == (0, 2, 32)
    assert _records(model, "tflm")[0][dead] == (1, 1, 32)
    assert _records(model, "ideal")[0][dead][:2] == (0, 0)


def test_constants_variables_and_dequantized_constants():
    m = ModelBuilder()
    g = m.subgraph("main")
    x = g.tensor("x", [1, 4])
    w16 = g.const("w16", np.ones((1, 4), np.float16))
    w = g.tensor("w", [1, 4])
    y = g.tensor("y", [1, 4])
    g.op("DEQUANTIZE", [w16], [w])
    g.op("ADD", [x, w], [y])
    g.inputs([x])
    g.outputs([y])
    model = parse_model(m.build())
    _, a = _records(model, "tflite")
    assert a.category[w16] == CONSTANT
    assert a.category[w] == PERSISTENT and a.persistent_bytes == 16
    _, a = _records(model, "tflm")
    assert a.category[w] == PLANNED


def test_iris_tflite_aliases_exactly_the_shared_adds():
    from packager.reader import read_model
    model = read_model(shared_model_path("iris_landmark"))
    a = model_lifetimes(model, "tflite")[0]
    producers = {op.outputs[0]: op.name for op in model.main.operators}
    assert len(a.aliases) == 26
    assert {producers[t] for t in a.aliases} == {"ADD"}


def test_control_flow_tflite_per_subgraph_tflm_inline():
    from fixtures.catalog import CATALOG
    model = parse_model(CATALOG["while_loop"]())
    arenas = model_lifetimes(model, "tflite")
    assert len(arenas) == len(model.subgraphs) >= 3
    assert arenas[0].calls  # the WHILE op names its cond and body subgraphs
    (inline,) = model_lifetimes(model, "tflm")
    assert inline.inline
    subgraphs_planned = {inline.tensor_subgraph[r.tensor][0] for r in inline.records}
    assert subgraphs_planned == set(range(len(model.subgraphs)))
    # Child tensors live inside the span of the op that runs them, in global tensor numbering.
    main_ops = len(model.main.operators)
    assert inline.num_steps > main_ops + 1
