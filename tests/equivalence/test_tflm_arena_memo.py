"""The whole-arena prediction shares each node's figures among nodes of one signature (op code,
options where a kernel reads them, the tensors' types, shapes and quantization): on every
fixture and real model, on both targets, the figure is the one computed node by node."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fixtures.write_models import DEFAULT_DIR
from packager.kernels import tflm_whole_arena
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.kernels.tflm_arena import ARMHF_LINUX, HOST
from packager.reader import read_model
from tests.conftest import SHARED_MODELS

MODELS = sorted(Path(DEFAULT_DIR).glob("*.tflite")) + sorted(SHARED_MODELS.glob("**/*.tflite"))


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_shared_figures_equal_node_by_node(path: Path, monkeypatch) -> None:
    try:
        model = read_model(path)
    except Exception as error:  # a fixture that is bad input on purpose
        pytest.skip(f"{path.name} does not read: {error}")
    shared = [predict_whole_arena(model, target) for target in (HOST, ARMHF_LINUX)]
    monkeypatch.setattr(tflm_whole_arena._OpFigures, "_key", lambda self, s, sg, op: None)
    monkeypatch.setattr(tflm_whole_arena._OpFigures, "shared", False)
    alone = [predict_whole_arena(model, target) for target in (HOST, ARMHF_LINUX)]
    assert shared == alone


def test_nodes_of_one_signature_are_computed_once(monkeypatch) -> None:
    """The repeated blocks of a chain share their figures: far fewer rule calls than nodes."""
    path = Path(DEFAULT_DIR) / "chain.tflite"
    model = read_model(path)
    calls = []
    real = tflm_whole_arena.tflm_arena.persistent_buffers
    monkeypatch.setattr(tflm_whole_arena.tflm_arena, "persistent_buffers",
                        lambda *a: calls.append(1) or real(*a))
    predict_whole_arena(model)
    assert len(calls) < sum(len(sg.operators) for sg in model.subgraphs)


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_skipping_quiet_nodes_changes_nothing(path: Path, monkeypatch) -> None:
    """Prepare visited at every node gives the figures of visiting only the nodes that can
    change them (a quiet node whose figures were seen since the last loud one is skipped)."""
    try:
        model = read_model(path)
    except Exception as error:  # a fixture that is bad input on purpose
        pytest.skip(f"{path.name} does not read: {error}")
    skipping = [predict_whole_arena(model, target) for target in (HOST, ARMHF_LINUX)]
    monkeypatch.setattr(tflm_whole_arena, "_visited", lambda distinct, which: np.arange(len(which)))
    assert [predict_whole_arena(model, target) for target in (HOST, ARMHF_LINUX)] == skipping


@pytest.mark.parametrize("high", [2, 1000, 2 ** 40])
def test_distinct_rows_group_equal_rows_only(high: int) -> None:
    """Rows packed into numbers (renumbered when 62 bits would not hold the next column) fall in
    one group exactly when they are equal, and each group's row is its first."""
    rng = np.random.default_rng(high)
    base = rng.integers(0, high, size=(40, 9))
    rows = base[rng.integers(0, len(base), size=500)]
    first, group = tflm_whole_arena._distinct_rows([rows[:, j] for j in range(rows.shape[1])])
    as_tuples = [tuple(r) for r in rows.tolist()]
    for k, g in enumerate(group.tolist()):
        assert as_tuples[first[g]] == as_tuples[k]
        assert first[g] == as_tuples.index(as_tuples[k])
    assert len(first) == len(set(as_tuples))
