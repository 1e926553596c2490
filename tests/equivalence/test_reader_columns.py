"""The reader's column-by-column fast path (packager/reader_columns.py) gives the very model the
table-by-table path gives, on every catalog model and the real ones, and hands anything unusual
(control flow, quantization, stored -1, damage) to that path."""

from __future__ import annotations

import pytest

import packager.reader as reader
from fixtures.catalog import CATALOG
from packager.reader_columns import Unusual
from tests.conftest import SHARED_MODELS


def _view(model):
    return [(sg.name, sg.tensors, sg.inputs, sg.outputs,
             [(o.index, o.opcode, o.inputs, o.outputs, o.intermediates, dict(o.options), o.subgraphs)
              for o in sg.operators]) for sg in model.subgraphs], model.buffers, model.metadata


def _table_by_table(monkeypatch, data: bytes):
    def unusual(*args, **kwargs):
        raise Unusual()
    with monkeypatch.context() as m:
        m.setattr(reader, "plain_tensors", unusual)
        m.setattr(reader._Parser, "_plain_operators", lambda self, *args: None)
        return reader.parse_model(data)


def _files():
    real = sorted(SHARED_MODELS.glob("*.tflite")) + sorted(SHARED_MODELS.glob("tflm/*.tflite"))
    return [pytest.param(lambda make=make: make(), id=name) for name, make in sorted(CATALOG.items())] + \
        [pytest.param(lambda p=p: p.read_bytes(), id=p.name) for p in real]


@pytest.mark.parametrize("data", _files())
def test_fast_path_reads_the_same_model(data, monkeypatch):
    raw = data()
    assert _view(reader.parse_model(raw)) == _view(_table_by_table(monkeypatch, raw))


def test_fast_path_takes_plain_subgraphs(monkeypatch):
    calls = []
    real = reader.plain_tensors
    monkeypatch.setattr(reader, "plain_tensors", lambda *a, **k: calls.append(1) or real(*a, **k))
    model = reader.parse_model(CATALOG["chain"]())
    assert calls and model.subgraphs[0].operators


def test_equal_shapes_are_one_tuple_and_operands_share_their_numbers():
    """What a model of 100,000 operators holds for the whole run: one tuple per distinct shape,
    and one number object per tensor id however many operand lists name it."""
    from benchmarks.synthetic import chain, tflite_bytes
    model = reader.parse_model(tflite_bytes(chain(300)))
    sg = model.subgraphs[0]
    shapes = [t.shape for t in sg.tensors]
    assert len({id(s) for s in shapes}) == len(set(shapes)) < len(shapes)
    by_id: dict[int, set[int]] = {}
    for op in sg.operators:
        for t in (*op.inputs, *op.outputs):
            by_id.setdefault(t, set()).add(id(t))
    assert any(t > 256 for t in by_id)  # past the numbers Python shares anyway
    assert all(len(objects) == 1 for objects in by_id.values())
