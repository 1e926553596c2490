"""What makes `package` fast on large models writes the same bytes as the plain way: the plan JSON
is json.dumps's text, the model array row by row; the report draws at most MAX_DRAWN tensors and
keeps the breadth peak; the model is read once."""

from __future__ import annotations

import json

import pytest

import packager.reader
from packager.emit import model_array
from packager.emit.charts import breadth_groups
from packager.package.build import package
from packager.pictures import largest
from packager.plan.records import UsageRecord
from tests.package.support import model_file, packaged


@pytest.mark.parametrize("name, semantics", [("mobile_block", "tflm"), ("while_loop", "tflite"),
                                             ("dynamic_sequence", "tflm")])
def test_the_plan_json_is_what_json_dumps_writes(name, semantics):
    from packager.package import plan_json
    plan = packaged(name, semantics).plan
    assert plan_json.dumps(plan).decode() == json.dumps(plan_json.to_dict(plan), sort_keys=True,
                                                         ensure_ascii=False) + "\n"


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
