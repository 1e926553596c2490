"""The scale benchmark's reference reader reads what the real reader reads (tensor types, shapes,
names, buffers; operator codes, inputs and outputs), so the ratio it prints compares like with like."""

from __future__ import annotations

from benchmarks.phases import reader_rows
from benchmarks.reference_reader import read_reference
from benchmarks.synthetic import SHAPES, tflite_bytes
from packager.reader import read_model
from tests.package.support import model_file


def test_reference_reader_reads_what_the_reader_reads():
    path = model_file("mobile_block")
    model = read_model(path)
    for sg, (tensors, ops) in zip(model.subgraphs, read_reference(path), strict=True):
        assert [(t.shape, t.name, t.buffer) for t in sg.tensors] == \
            [(shape, name.decode(), buffer) for _, shape, name, buffer in tensors]
        assert [(o.inputs, o.outputs) for o in sg.operators] == [(i, o) for _, i, o in ops]


def test_reader_rows_time_both_and_give_the_ratio(tmp_path):
    path = tmp_path / "chain.tflite"
    path.write_bytes(tflite_bytes(SHAPES["chain"](50)))
    real, floor, ratio = reader_rows(lambda n: path, [50], repeats=2)
    assert 50 in real.seconds and 50 in floor.seconds and ratio.notes[50].endswith("x")


def test_object_memory_rows_measure_each_step(tmp_path):
    from benchmarks.phases import object_memory_rows
    path = tmp_path / "chain.tflite"
    path.write_bytes(tflite_bytes(SHAPES["chain"](50)))
    rows = object_memory_rows(lambda n: path, [50])
    assert [r.name.split(":")[0] for r in rows][:3] == ["model", "lifetimes under tflite", "lifetimes under tflm"]
    model_mb, per_tensor = rows[0].notes[50].split(", ")
    assert model_mb.endswith(" MB") and per_tensor.endswith(" B/tensor") and int(per_tensor.split()[0]) > 100
