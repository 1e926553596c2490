"""An inline arena's tensor_subgraph and op_scopes are worked out instead of stored per tensor and
per operator (lifetimes.GlobalIds, lifetimes.OneScopePerOp): they read, compare and print as the
dicts they replace, on every catalog model."""

from __future__ import annotations

import numpy as np
import pytest

from fixtures.catalog import CATALOG
from packager.lifetimes import PLANNED, EveryTensor, GlobalIds, OneScopePerOp, model_lifetimes
from packager.reader import parse_model


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_tensor_subgraph_is_every_tensor_in_order(name):
    model = parse_model(CATALOG[name]())
    (arena,) = model_lifetimes(model, "tflm")
    expected, g = {}, 0
    for s, sg in enumerate(model.subgraphs):
        for t in sg.tensors:
            expected[g] = (s, t.index)
            g += 1
    assert dict(arena.tensor_subgraph) == expected and list(arena.tensor_subgraph) == list(expected)
    assert arena.tensor_subgraph == expected and repr(arena.tensor_subgraph) == repr(expected)
    assert arena.tensor_subgraph.get(g) is None and arena.tensor_subgraph.get(-1, "none") == "none"
    assert all(arena.tensor_subgraph[r.tensor] == expected[r.tensor] for r in arena.records)


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_op_scopes_without_control_flow_are_one_per_op(name):
    model = parse_model(CATALOG[name]())
    (arena,) = model_lifetimes(model, "tflm")
    if any(op.subgraphs for op in model.main.operators):
        assert isinstance(arena.op_scopes, dict)  # control flow: the scopes are written down
        return
    ops = len(model.main.operators)
    expected = {(0, i): (i + 1, i + 1) for i in range(ops)}
    assert isinstance(arena.op_scopes, OneScopePerOp)
    assert arena.op_scopes == expected and list(arena.op_scopes) == list(expected)
    assert repr(arena.op_scopes) == repr(expected) and len(arena.op_scopes) == ops
    assert arena.num_steps == ops + 1


def test_the_mappings_answer_as_dicts_do():
    ids = GlobalIds([0, 5, 5, 9], 12)  # subgraph 1 has no tensors
    assert ids[5] == (2, 0) and ids[np.int64(9)] == (3, 0) and ids[True] == (0, 1)
    for missing in (12, -1, "5", 2.5, None):
        assert missing not in ids and ids.get(missing) is None
    with pytest.raises(KeyError):
        ids[12]
    scopes = OneScopePerOp(3)
    assert scopes[(0, 2)] == (3, 3) and scopes[(np.int64(0), np.int64(1))] == (2, 2)
    for missing in ((0, 3), (1, 0), (0, -1), 0, (0,), "ab", None):
        assert missing not in scopes and scopes.get(missing) is None


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_categories_are_every_tensors_in_order(name):
    model = parse_model(CATALOG[name]())
    (arena,) = model_lifetimes(model, "tflm")
    category = arena.category
    assert isinstance(category, EveryTensor)
    expected = {g: category[g] for g in range(sum(len(sg.tensors) for sg in model.subgraphs))}
    assert dict(category) == expected and list(category) == list(expected) and len(category) == len(expected)
    assert category == expected and repr(category) == repr(expected)
    assert list(category.items()) == list(expected.items()) and list(category.values()) == list(expected.values())
    assert category.items() == expected.items() and (0, expected[0]) in category.items()
    for c in set(expected.values()):
        assert arena.ids(c) == sorted(g for g, v in expected.items() if v == c)
    # every planned record is a planned tensor, every tensor of the file has a category
    assert all(category[r.tensor] == PLANNED for r in arena.records)


def test_the_categories_answer_as_a_dict_does():
    category = EveryTensor(["planned", "constant", "unused"])
    assert category[np.int64(1)] == "constant" and category[True] == "constant" and category.get(2) == "unused"
    for missing in (3, -1, "1", 1.5, None):
        assert missing not in category and category.get(missing) is None
    with pytest.raises(KeyError):
        category[3]
    assert EveryTensor([]) == {} and not EveryTensor([])
