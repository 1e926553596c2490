"""What makes `package` fast on large models writes the same bytes as the plain way: the JSON text
of json.dumps with indent, the FlatBuffer bytes of the library's Builder, the model array row by
row; the report draws at most MAX_DRAWN tensors and keeps the breadth peak; the model is read once."""

from __future__ import annotations

import json

import flatbuffers
import pytest

import packager.reader
from packager.emit import model_array
from packager.emit.charts import breadth_groups
from packager.emit.json_text import dumps_indented
from packager.package import plan_flatbuffer
from packager.package.build import package
from packager.pictures import largest
from packager.plan.records import UsageRecord
from tests.package.support import model_file, packaged


@pytest.mark.parametrize("doc", [
    {}, [], {"a": []}, {"b": {}}, [[1, 2], [3]], {"z": None, "t": True, "f": False, "x": 1.5, "s": "é\n\"/"},
    {"rows": [{"a": 1, "b": [1, 2]}, {"a": 2, "b": []}, {"a": 3, "c": "x"}, 5, {"k": [{"m": 2}, {"m": 3}]}]},
    [{"k": 1}], {"\u2028": "\x00\x1f", "n": -7},
])
def test_json_text_is_what_json_dumps_writes(doc):
    assert dumps_indented(doc) == json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)


@pytest.mark.parametrize("name, semantics", [("mobile_block", "tflm"), ("while_loop", "tflite"),
                                             ("dynamic_sequence", "tflm")])
def test_plan_files_are_what_the_libraries_write(name, semantics, monkeypatch):
    plan = packaged(name, semantics).plan
    lean = plan_flatbuffer.dumps(plan)
    monkeypatch.setattr(plan_flatbuffer, "LeanBuilder", flatbuffers.Builder)
    assert lean == plan_flatbuffer.dumps(plan)
    from packager.package import plan_json
    assert plan_json.dumps(plan).decode() == json.dumps(plan_json.to_dict(plan), indent=2, sort_keys=True,
                                                         ensure_ascii=False) + "\n"
    assert b"".join(plan_json.encoded_pieces(plan)) == plan_json.dumps(plan)  # what package writes


@pytest.mark.parametrize("size", [0, 1, 11, 12, 13, 24, 25, 1000])
def test_model_array_rows(size):
    data = bytes((i * 37 + 11) % 256 for i in range(size))
    body = model_array.render_source("m", data).split("= {\n", 1)[1].split("};", 1)[0]
    rows = ["    " + " ".join(f"0x{b:02x}," for b in data[i:i + 12]) + "\n" for i in range(0, size, 12)]
    assert body == "".join(rows)


def test_pictures_draw_the_largest_tensors_in_record_order():
    records = [UsageRecord(i, i, i + (i % 3), 10 + i % 7) for i in range(50)]
    assert largest(records, 100) == list(range(50))
    drawn = largest(records, 10)
    assert drawn == sorted(drawn) and len(drawn) == 10
    area = [r.size * (r.last_op - r.first_op + 1) for r in records]
    assert min(area[i] for i in drawn) >= max(area[i] for i in range(50) if i not in drawn)


def test_breadth_groups_keep_the_peak():
    breadths = [i % 1000 for i in range(45_001)]
    width, groups = breadth_groups(breadths)
    assert width > 1 and len(groups) <= 1000 and groups[-1][1] == len(breadths) - 1
    assert max(v for _, _, v in groups) == max(breadths)
    assert breadth_groups(breadths[:100]) == (1, [(i, i, b) for i, b in enumerate(breadths[:100])])


def test_package_reads_the_model_once(monkeypatch, tmp_path):
    reads = []
    real = packager.reader.parse_model
    monkeypatch.setattr(packager.reader, "parse_model", lambda data: reads.append(1) or real(data))
    package(model_file("mobile_block"), tmp_path / "out")
    assert len(reads) == 1


def test_tensor_tables_written_together_are_the_builders_bytes(monkeypatch):
    """Entries of every layout (string lengths, ranks, fields at their defaults or not, sizes
    expressed or not) in a mixed order, many of each, and object assignments with and without
    their fields: the tables written a layout at a time are the library Builder's bytes."""
    import dataclasses
    import random

    plan = packaged("mobile_block", "tflm").plan
    rng = random.Random(7)
    layouts = [(rng.choice([False, True]), rng.choice([False, True]), rng.choice([-1, 0, None]),
                rng.choice(["tensor", "scratch"]), rng.randrange(0, 9), rng.choice(["INT8", ""]),
                rng.randrange(0, 5), rng.choice([0, None]), rng.choice([0, None]),
                rng.choice([False, True]), rng.choice([None, -1, 0]), rng.choice([0, 2]),
                rng.choice([None, "", "4*N", "64*batch+1"])) for _ in range(12)]
    entries = []
    for i in range(3000):
        (index, subgraph, tensor, kind, name, type_, rank, offset, size, ops, alias, pass_,
         size_expr) = rng.choice(layouts)
        entries.append(dataclasses.replace(
            plan.arenas[0].offsets.tensors[0], index=i + 1 if index else 0, subgraph=int(subgraph),
            tensor=i + 1 if tensor is None else tensor, kind=kind, name=chr(97 + i % 26) * name,
            type=type_, shape=tuple(rng.randrange(1, 300) for _ in range(rank)),
            offset=rng.choice([16 * i + 16, 2**40 + i]) if offset is None else 0,
            size=rng.choice([7, 2**33]) if size is None else 0, first_op=i if ops else 0,
            last_op=i + 1 if ops else 0, alias_of=i + 1 if alias is None else alias, pass_=pass_,
            size_expr=size_expr))
    one_by_one = []
    real = plan_flatbuffer._tensor_entry
    monkeypatch.setattr(plan_flatbuffer, "_tensor_entry", lambda *a: one_by_one.append(1) or real(*a))
    pairs = tuple((rng.choice([0, i]), rng.choice([0, i % 50])) for i in range(3000))
    arena = dataclasses.replace(plan.arenas[0], offsets=dataclasses.replace(
        plan.arenas[0].offsets, tensors=tuple(entries)), objects=dataclasses.replace(
        plan.arenas[0].objects, assignment=pairs))
    mixed = dataclasses.replace(plan, arenas=(arena, *plan.arenas[1:]))
    lean = plan_flatbuffer.dumps(mixed)
    assert 0 < len(one_by_one) < 100  # the first of each vtable only
    monkeypatch.setattr(plan_flatbuffer, "LeanBuilder", flatbuffers.Builder)
    assert lean == plan_flatbuffer.dumps(mixed)


def test_tensor_tables_with_names_of_many_lengths_and_letters_are_the_builders_bytes(monkeypatch):
    """Names of every length up to 40 (so every alignment phase), some of letters that take
    two to four bytes in UTF-8, shapes of every rank up to 6, in a random order: the tables
    written a layout at a time are the library Builder's bytes."""
    import dataclasses
    import random

    from packager.package.tensor_tables import _row_ids
    plan = packaged("mobile_block", "tflm").plan
    rng = random.Random(11)
    letters = "aZ_9é✓𝄞"
    template = plan.arenas[0].offsets.tensors[0]
    entries = tuple(dataclasses.replace(
        template, index=i, name="".join(rng.choice(letters) for _ in range(rng.randrange(0, 41))),
        shape=tuple(rng.randrange(1, 1 << 20) for _ in range(rng.randrange(0, 7))),
        offset=16 * rng.randrange(0, 1000), size=rng.randrange(0, 1 << 20), first_op=i, last_op=i + 2)
        for i in range(2000))
    arena = dataclasses.replace(plan.arenas[0], offsets=dataclasses.replace(plan.arenas[0].offsets,
                                                                             tensors=entries))
    mixed = dataclasses.replace(plan, arenas=(arena, *plan.arenas[1:]))
    lean = plan_flatbuffer.dumps(mixed)
    assert plan_flatbuffer.loads(lean) == mixed
    monkeypatch.setattr(plan_flatbuffer, "LeanBuilder", flatbuffers.Builder)
    assert lean == plan_flatbuffer.dumps(mixed)
    # the rows' numbers as whole-row np.unique gives them
    import numpy as np
    rows = np.array([[rng.randrange(-1, 4) for _ in range(5)] for _ in range(500)], np.int64)
    ids, first = _row_ids(rows)
    _, expected = np.unique(rows, axis=0, return_inverse=True)
    assert len(first) == int(expected.max()) + 1 and (rows[first][ids] == rows).all()
    assert len(set(zip(ids.tolist(), expected.reshape(-1).tolist()))) == len(first)
