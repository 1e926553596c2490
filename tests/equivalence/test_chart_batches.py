"""The charts' rectangles made a batch at a time by one format are, byte for byte, the ones
element() writes one by one, whatever the names hold (what escape() replaces, slashes at either
end, other scripts) and for buffers the file lacks."""

from __future__ import annotations

from packager.emit import charts
from packager.emit.report_data import AliasInfo, PlacedTensor, TensorInfo

NAMES = ["conv", "a//b", "<x>&\"y\"", "end/", "/start", "über–net", "", "//", "a/", "/b"]


def _tensors() -> list[TensorInfo]:
    out = []
    for i, name in enumerate(NAMES * 3):
        if i % 7 == 3:
            out.append(TensorInfo(i, f"scratch {name}", "", (), 48 * (i + 1)))  # a buffer the file lacks
        else:
            out.append(TensorInfo(i, name, "FLOAT32" if i % 2 else "INT8", (1, i, 3), 64 * (i + 1)))
    return out


def test_layout_rectangles_in_batches_are_the_elements_one_by_one(monkeypatch):
    tensors = _tensors()
    placed = [PlacedTensor(t, i % 5, i % 5 + i % 3, 128 * i,
                           (AliasInfo(tensors[(i + 1) % len(tensors)], i % 5, i % 5),) if i % 4 == 1 else ())
              for i, t in enumerate(tensors)]
    monkeypatch.setattr(charts, "ELEMENTS_PER_PIECE", 4)  # several batches, one partial
    for step_name in ("operator", "scope"):
        scale = charts.layout_scale(9, 128 * len(placed) + 4096)
        batched = "".join(charts._tensor_rects(placed, step_name, scale))
        assert batched == "".join(charts._tensor_rect(p, step_name, scale) for p in placed)
        assert batched.count("<rect") == len(placed) and "a//b" not in batched


def test_object_members_in_batches_are_the_elements_one_by_one(monkeypatch):
    tensors = _tensors()
    members = tuple((t, i % 6, i % 6 + i % 2) for i, t in enumerate(tensors))
    monkeypatch.setattr(charts, "ELEMENTS_PER_PIECE", 4)  # batches across rows, and within a row
    scale = charts.layout_scale(9, 1)
    rows = [charts.ObjectRow(0, ()), charts.ObjectRow(64 * (len(tensors) + 1), members), charts.ObjectRow(0, members[:3]),
            charts.ObjectRow(640, ()), charts.ObjectRow(512, members[5:6]), charts.ObjectRow(640, ()),
            charts.ObjectRow(512, members[7:8]), charts.ObjectRow(8, ()), charts.ObjectRow(8, ())]
    nums = charts._Numbers()
    one_by_one = "".join(charts._row_label(scale, k, row, nums)
                         + "".join(charts._member(scale, k, row, t, first, last, "operator") for t, first, last in row.tensors)
                         for k, row in enumerate(rows))
    assert "".join(charts._object_rows(scale, rows, "operator")) == one_by_one
    assert one_by_one.count("<text") == len(rows)
