"""`package --regions`: TFLite Micro's memory in two buffers, each in its region. The option's
syntax and its one-line errors, the fit verdict (exit 3 and nothing written when a part does not
fit), the figures in the summary, `--json`, both plan files and the header, and nothing changed
without it. That each figure is the smallest TFLite Micro works with: tests/package/test_regions_runs.py."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from packager.cli import app
from packager.kernels.tflm_arena import HOST
from packager.kernels.tflm_regions import predict_split
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.package import plan_flatbuffer, plan_json
from packager.package.regions import parse_regions
from packager.errors import PackagerError
from packager.reader import read_model
from tests.conftest import REPO

MODELS = REPO / "fixtures" / "models"
AMPLE = "non-persistent=.dtcm:1M,persistent=.sram_bss:64K"
runner = CliRunner()


def package(folder, *args, model="mobile_block"):
    return runner.invoke(app, ["package", str(MODELS / f"{model}.tflite"), "-o", str(folder), "--no-report", *args])


@pytest.mark.parametrize("text", ["non-persistent=.dtcm:64K", "persistent=.a:1K,persistent=.b:1K",
                                  "fast=.dtcm:64K,persistent=.sram:1K", "non-persistent=.dtcm,persistent=.sram:1K",
                                  "non-persistent=.dt\"cm:64K,persistent=.sram:1K", "non-persistent=:64K,persistent=.s:1K",
                                  "non-persistent=.dtcm:64Q,persistent=.sram:1K", ""])
def test_a_bad_regions_option_is_one_line_and_exit_2(tmp_path, text):
    with pytest.raises(PackagerError):
        parse_regions(text)
    r = package(tmp_path / "out", "--regions", text)
    assert r.exit_code == 2 and r.output.startswith("error: --regions") and r.output.count("\n") == 1, r.output
    assert not (tmp_path / "out").exists()


def test_the_syntax_names_each_part_its_section_and_its_capacity():
    non, per = parse_regions("persistent=.sram_bss:1M, non-persistent=.dtcm:64K")  # any order
    assert (non.part, non.section, non.capacity) == ("non-persistent", ".dtcm", 65536)
    assert (per.part, per.section, per.capacity) == ("persistent", ".sram_bss", 1 << 20)


def test_a_part_that_does_not_fit_exits_3_writes_nothing_and_names_every_overflow(tmp_path):
    r = package(tmp_path / "out", "--no-verify", "--regions", "non-persistent=.dtcm:64K,persistent=.sram:8K")
    assert r.exit_code == 3, r.output
    assert r.output == ("error: mobile_block.tflite: the non-persistent part needs 147,456 B in .dtcm, 81,920 B "
                        "over its 65,536 B; the persistent part needs 10,096 B in .sram, 1,904 B over its 8,192 B\n")
    assert not (tmp_path / "out").exists()
    r = package(tmp_path / "out", "--no-verify", "--regions", "non-persistent=.dtcm:144K,persistent=.sram:10096")
    assert r.exit_code == 0, r.output  # exactly the figures: both fit


def test_regions_are_stated_in_the_summary_json_plan_files_and_header(tmp_path):
    r = package(tmp_path, "--no-verify", "--regions", AMPLE)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert ("  non-persistent buffer (head and set-up temporaries): 147,456 B in .dtcm of 1,048,576 B: fits, "
            "901,120 B free") in lines
    assert "  persistent buffer (tail: TFLite Micro's persistent memory): 10,096 B in .sram_bss of 65,536 B: " \
           "fits, 55,440 B free" in lines
    # no runtime ran the whole arena: the regions are not shown exact either
    assert any(line.startswith("    two buffers: not proven either way: the whole arena is not shown exact")
               for line in lines)
    doc = json.loads((tmp_path / "mobile_block_plan.json").read_text())
    assert [(g["part"], g["section"], g["capacity"], g["bytes"], g["bound"]) for g in doc["regions"]] == [
        ("non-persistent", ".dtcm", 1 << 20, 147456, "unknown"), ("persistent", ".sram_bss", 65536, 10096, "unknown")]
    plan = plan_json.loads((tmp_path / "mobile_block_plan.json").read_bytes())
    assert plan_flatbuffer.loads((tmp_path / "mobile_block_plan.tplan").read_bytes()) == plan
    assert [g.bytes for g in plan.regions] == [147456, 10096]
    header = (tmp_path / "mobile_block_plan.h").read_text()
    for line in ("#define MOBILE_BLOCK_NON_PERSISTENT_BYTES 147456", '#define MOBILE_BLOCK_NON_PERSISTENT_SECTION ".dtcm"',
                 "#define MOBILE_BLOCK_PERSISTENT_BYTES 10096", '#define MOBILE_BLOCK_PERSISTENT_SECTION ".sram_bss"',
                 '#define MOBILE_BLOCK_REGIONS_BOUND "unknown"',
                 " *         mobile_block_persistent_arena, MOBILE_BLOCK_PERSISTENT_BYTES,",
                 "        __attribute__((__aligned__(16), __section__(MOBILE_BLOCK_PERSISTENT_SECTION)))"):
        assert line in header.splitlines(), line
    j = runner.invoke(app, ["package", str(MODELS / "mobile_block.tflite"), "-o", str(tmp_path / "j"), "--no-report",
                            "--no-verify", "--regions", AMPLE, "--json"])
    regions = json.loads(j.output)["regions"]
    assert [(g["part"], g["bytes"], g["fits"]) for g in regions] == [("non-persistent", 147456, True),
                                                                     ("persistent", 10096, True)]


def test_the_plan_json_with_regions_follows_its_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed ('.[test]')")
    assert package(tmp_path, "--no-verify", "--regions", AMPLE).exit_code == 0
    schema = json.loads((REPO / "schemas" / "plan.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads((tmp_path / "mobile_block_plan.json").read_text()))


def test_without_regions_every_file_is_as_before(tmp_path):
    assert package(tmp_path / "a", "--no-verify").exit_code == 0
    assert package(tmp_path / "b", "--no-verify", "--regions", AMPLE).exit_code == 0
    for name in ("mobile_block.tflite", "mobile_block_model.c", "mobile_block_op_resolver.h"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    a, b = (tmp_path / "a" / "mobile_block_plan.h").read_text(), (tmp_path / "b" / "mobile_block_plan.h").read_text()
    # the header with regions is the one without and the two-buffer block, inserted whole
    start = b.index("/*\n * TFLite Micro's memory in two buffers")
    end = b.index("#endif\n\n", b.index("DECLARE_PERSISTENT_ARENA(name) _Alignas")) + len("#endif\n\n")
    assert "PERSISTENT" not in a and b[:start] + b[end:] == a
    assert "regions" not in json.loads((tmp_path / "a" / "mobile_block_plan.json").read_text())


def test_regions_need_a_tflite_micro_arena(tmp_path):
    r = package(tmp_path, "-s", "tflite", "--regions", AMPLE)
    assert r.exit_code == 2 and "--regions: the tflite semantics has no TFLite Micro arena" in r.output, r.output


def test_the_persistent_buffer_holds_the_tail_with_the_two_buffer_allocators():
    # The one-buffer allocator objects (72 B each on x86-64) give way to the persistent and
    # non-persistent buffer allocators (32 + 56 B); the rest of the tail is the same allocations.
    model = read_model(MODELS / "chain.tflite")
    whole, split = predict_whole_arena(model, HOST), predict_split(model, HOST)
    assert split.persistent == -(-(whole.tail - 72 + 32 + 56) // 16) * 16
    # The set-up temporaries do not meet the tail: without it the non-persistent room is what the
    # one-buffer set-up room is over the tail it had then.
    assert split.non_persistent == max(whole.head, -(-split.setup // 16) * 16)


def test_a_device_targets_regions_are_modelled_and_say_so(tmp_path):
    r = package(tmp_path, "--no-verify", "--target", "cortex-m4", "--regions", AMPLE, "--json", model="chain")
    assert r.exit_code == 0, r.output
    regions = json.loads(r.output)["regions"]
    assert {g["bound"] for g in regions} == {"unknown"}
    assert "the two-buffer rule is measured on the host build; cortex-m4's figures are modelled" in regions[0]["reason"]
    # 32-bit allocator objects: a smaller tail than the host's
    host = json.loads(package(tmp_path / "h", "--no-verify", "--regions", AMPLE, "--json", model="chain").output)
    assert regions[1]["bytes"] < host["regions"][1]["bytes"]
