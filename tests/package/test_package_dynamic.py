"""`package` on models with dynamic shapes: every symbol needs a bound, the plan is made at the
largest sizes and holds for every binding, and the sidecar plan, the header and the summary carry
the symbols, each tensor's pass and size expression, and the multi-pass plan. Also the report page
`package` writes beside the other files."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from packager.cli import app
from packager.dynamic.shapes import DimError
from packager.errors import PlanError
from packager.package.build import package
from packager.plan.records import OffsetPlan, align_up
from packager.package.check import expected_arenas
from packager.package.load import load
from packager.reader import read_model
from packager.semantics import SEMANTICS
from packager.dynamic.symbolic import evaluate
from packager.plan.validate import check_offset_plan
from tests.conftest import REPO
from tests.package.support import as_rows, edit_rows, file_of, model_file, packaged

runner = CliRunner()
BATCH = ("image_0=1..8",)
WARNINGS = ["-Wall", "-Wextra", "-Wpedantic", "-Werror"]
COMPILERS = {"gcc-c99": ["gcc", "-std=c99"], "g++-c++11": ["g++", "-std=c++11", "-x", "c++"]}


def invoke(*args: str):
    result = runner.invoke(app, ["package", *map(str, args)])
    return result.exit_code, result.output


# -- bounds are required -----------------------------------------------------------------------

def test_without_bounds_it_fails_naming_the_symbol(tmp_path):
    # Height and width are dynamic (not only the batch): the stored shape is no plan for them.
    code, text = invoke(model_file("dynamic_image"), "-o", tmp_path / "out")
    assert code == 2, text
    assert text.startswith("error: ") and len(text.strip().splitlines()) == 1
    assert "image_1" in text and "--dim image_1=MIN..MAX" in text
    assert not (tmp_path / "out").exists()
    # TFLite's interpreter runs the stored batch too unless the input is resized: the same rule.
    code, text = invoke(model_file("dynamic_batch"), "-o", tmp_path / "out", "--semantics", "tflite")
    assert code == 0 and "TFLite's CPU interpreter runs the stored shape (image [1, 8, 8, 3]) unless" in text


def test_a_dynamic_batch_packages_at_the_stored_shape_for_tflite_micro(tmp_path):
    # TFLite Micro ignores shape_signature: it runs the stored batch of 1.
    code, text = invoke(model_file("dynamic_batch"), "-o", tmp_path / "out", "--no-verify")
    assert code == 0, text
    assert "dynamic batch (image_0): TFLite Micro runs the stored shape" in text
    assert "--dim image_0=MIN..MAX" in text
    plan = json.loads((tmp_path / "out" / "dynamic_batch_plan.json").read_text())
    assert "symbols" not in plan


def test_every_symbol_needs_a_bound_and_a_dim_must_name_one(tmp_path):
    with pytest.raises(DimError, match="image_2"):  # one of two bound
        package(model_file("dynamic_image"), tmp_path / "a", dims=("image_1=8..64",))
    code, text = invoke(model_file("dynamic_batch"), "-o", tmp_path / "b", "--dim", "batch=1..8")
    assert code == 2 and "no such symbol" in text and "image_0" in text
    code, text = invoke(model_file("chain"), "-o", tmp_path / "c", "--dim", "image_0=1..8")
    assert code == 2 and "no such symbol" in text  # a static model has none


def test_with_bounds_it_packages_at_the_largest_sizes(tmp_path):
    code, text = invoke(model_file("dynamic_batch"), "-o", tmp_path / "out", "--dim", "image_0=1..8")
    assert code == 0, text
    assert "dynamic shapes (image_0 in [1, 8])" in text
    assert any(line.strip().startswith("multi-pass plan (passes 0, 1,") for line in text.splitlines())
    plan = packaged("dynamic_batch", "tflm", BATCH).plan
    model = read_model(model_file("dynamic_batch"))
    image = model.main.tensors[model.main.inputs[0]]
    entry = next(t for t in plan.arenas[0].offsets.tensors if t.index == image.index)
    assert entry.size == image.nbytes * 8 and entry.pass_ == 1  # stored batch 1, planned at 8
    assert entry.size_expr == f"{image.nbytes} * image_0"
    assert entry.shape == image.shape  # shapes stay as the file stores them


# -- the sidecar plan --------------------------------------------------------------------------

def test_the_sidecar_json_carries_symbols_passes_and_expressions():
    result = packaged("dynamic_batch", "tflm", BATCH)
    doc = json.loads(file_of(result, "_plan.json").read_bytes())
    assert doc["symbols"] == [{"name": "image_0", "source": "input 'image' axis 0", "data_dependent": False,
                               "pass": 1, "min": 1, "max": 8}]
    (arena,) = doc["arenas"]
    tensors = as_rows(arena["offsets"]["tensors"])
    assert {t["pass"] for t in tensors} == {0, 1}
    assert all("size_expr" in t for t in tensors)
    assert all(t["size_expr"] == str(t["size"]) for t in tensors if t["pass"] == 0)
    assert all("image_0" in t["size_expr"] for t in tensors if t["pass"] == 1)
    planned = [t["index"] for t in tensors if t["alias_of"] is None]
    assert arena["passes"]["tensors"]["index"] == planned
    assert arena["passes"]["arena_bytes"] >= arena["offsets"]["lower_bound"]


@pytest.mark.parametrize("name,semantics,dims", [("dynamic_batch", "tflm", BATCH),
                                                 ("dynamic_image", "tflite", ("image_1=8..64", "image_2=8..64")),
                                                 ("where_op", "ideal", ())])
def test_the_dynamic_json_follows_its_schema_and_both_forms_load_back(name, semantics, dims):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed ('.[test]')")
    schema = json.loads((REPO / "schemas" / "plan.schema.json").read_text())
    result = packaged(name, semantics, dims)
    jsonschema.Draft202012Validator(schema).validate(json.loads(file_of(result, "_plan.json").read_bytes()))
    from_json = load(file_of(result, "_plan.json"), model_file(name))
    from_fb = load(file_of(result, "_plan.tplan"), model_file(name))
    assert from_json == from_fb == result.plan
    assert from_json.symbols and all(a.passes is not None for a in from_json.arenas)


def test_where_op_packages_with_its_derived_bound_and_a_pass_2(tmp_path):
    for semantics in ("tflite", "ideal", "tflm"):
        result = packaged("where_op", semantics)
        (symbol,) = result.plan.symbols
        assert symbol.data_dependent and symbol.pass_ == 2 and (symbol.min, symbol.max) == (0, 16)
        later = [t for a in result.plan.arenas for t in a.offsets.tensors if t.pass_ == 2]
        assert {t.name for t in later} >= {"positions", "picked"}
        assert all(symbol.name in t.size_expr for t in later)
    # TFLite Micro has no WHERE kernel: the plan is still made, with the usual note.
    code, text = invoke(model_file("where_op"), "-o", tmp_path / "out")
    assert code == 0, text
    assert any(line.startswith("note: ") and "WHERE" in line for line in text.splitlines())


def test_a_renamed_symbol_keeps_its_name_through_load(tmp_path):
    result = package(model_file("dynamic_batch"), tmp_path / "out", dims=("image_0:batch=2..4",))
    assert [(s.name, s.min, s.max) for s in result.plan.symbols] == [("batch", 2, 4)]
    assert load(file_of(result, "_plan.tplan"), model_file("dynamic_batch")) == result.plan
    header = file_of(result, "_plan.h").read_text()
    assert "#define DYNAMIC_BATCH_SYM_BATCH_MIN 2" in header and "#define DYNAMIC_BATCH_SYM_BATCH_MAX 4" in header


def test_the_plan_holds_at_every_binding_inside_the_bounds():
    """Sizes only shrink below the bounds, and the stated offsets stay valid at each binding."""
    result = packaged("dynamic_batch", "tflm", BATCH)
    model = read_model(model_file("dynamic_batch"))
    (arena,) = expected_arenas(result.plan, model)
    section = result.plan.arenas[0]
    offsets = {t.index: t.offset for t in section.planned}
    rounding = SEMANTICS["tflm"].size_rounding
    for batch in (1, 3, 8):
        records = [replace(r, size=align_up(evaluate(arena.sizes.expressions[r.tensor], {"image_0": batch}), rounding))
                   for r in arena.lifetimes.records]
        assert all(r.size <= w.size for r, w in zip(records, arena.lifetimes.records))
        plan = OffsetPlan("packaged", tuple(offsets[r.tensor] for r in records), section.offsets.arena_bytes,
                          result.plan.alignment)
        check_offset_plan(records, plan, arena.lifetimes.aliases, arena.lifetimes.alias_intervals)


# -- load() refuses what does not match ---------------------------------------------------------

def _edited(tmp_path: Path, edit) -> Path:
    doc = json.loads(file_of(packaged("dynamic_batch", "tflm", BATCH), "_plan.json").read_bytes())
    edit(doc)
    path = tmp_path / "edited_plan.json"
    path.write_text(json.dumps(doc))
    return path


def _first_of_pass(doc: dict, pass_: int, **change) -> None:
    """The first entry of this pass changed."""
    edit_rows(doc["arenas"][0]["offsets"],
              lambda rows: next(t for t in rows if t["pass"] == pass_).update(change))


@pytest.mark.parametrize("what,edit,message", [
    ("a wider bound", lambda d: d["symbols"][0].update(max=16), "does not match the model"),
    ("no symbols", lambda d: d.pop("symbols"), "symbols stated"),
    ("another pass", lambda d: _first_of_pass(d, 1, **{"pass": 0}), "pass 0"),
    ("another expression", lambda d: _first_of_pass(d, 1, size_expr="1 * image_0"), "1 \\* image_0"),
    ("no multi-pass plan", lambda d: d["arenas"][0].pop("passes"), "multi-pass plan"),
    ("an overlapping multi-pass plan",
     lambda d: d["arenas"][0]["passes"]["tensors"].update(offset=[0] * len(d["arenas"][0]["passes"]["tensors"]["offset"])),
     "overlap"),
])
def test_load_refuses_an_edited_dynamic_plan(tmp_path, what, edit, message):
    with pytest.raises(PlanError, match=message):
        load(_edited(tmp_path, edit), model_file("dynamic_batch"))


# -- the header --------------------------------------------------------------------------------

def _compiler(name: str) -> list[str]:
    command = COMPILERS[name]
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    return command


def _build_and_run(cc: list[str], sources: list[Path], folder: Path, defines: list[str], binary: Path) -> str:
    done = subprocess.run([*cc, *WARNINGS, f"-I{folder}", *defines, *map(str, sources), "-o", str(binary)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    run = subprocess.run([str(binary)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout
    return run.stdout


@pytest.mark.parametrize("compiler_name", sorted(COMPILERS))
@pytest.mark.parametrize("name,semantics,dims,symbol", [("dynamic_batch", "tflm", BATCH, "IMAGE_0"),
                                                        ("where_op", "tflite", (), "WHERE2_OUT0_0")])
def test_the_header_compiles_and_its_multipass_plan_checks(name, semantics, dims, symbol, compiler_name, tmp_path):
    cc = _compiler(compiler_name)
    result = packaged(name, semantics, dims)
    header = file_of(result, "_plan.h")
    P, folder = name.upper(), header.parent
    common = [f"-DPREFIX={P}", f'-DPLAN_HEADER="{header.name}"']
    # The worst-case plan, checked as for a static model ...
    _build_and_run(cc, [REPO / "tests" / "c" / "check_plan.c", folder / f"{name}_model.c"], folder,
                   [*common, f'-DMODEL_HEADER="{name}_model.h"', f"-DMODEL_ARRAY={name}_model"],
                   tmp_path / "check_plan")
    # ... and the multi-pass plan, with the symbols' macros.
    out = _build_and_run(cc, [REPO / "tests" / "c" / "check_passes.c"], folder, [*common, f"-DSYMBOL={symbol}"],
                         tmp_path / "check_passes")
    (s,) = result.plan.symbols
    arena = sum(a.passes.arena_bytes for a in result.plan.arenas)
    assert f"1 symbols, {symbol} in [{s.min}, {s.max}], multi-pass arena {arena} B, 0 failures" in out
    text = header.read_text()
    assert f"#define {P}_SYM_{symbol}_MIN {s.min}" in text and f"#define {P}_SYM_{symbol}_MAX {s.max}" in text
    assert f"static const int32_t {P}_TENSOR_PASSES[{P}_TENSOR_COUNT]" in text


def test_a_static_header_has_nothing_of_it():
    text = file_of(packaged("mobile_block"), "_plan.h").read_text()
    assert "_SYM_" not in text and "MULTIPASS" not in text and "TENSOR_PASSES" not in text
    doc = json.loads(file_of(packaged("mobile_block"), "_plan.json").read_bytes())
    assert "symbols" not in doc and "passes" not in doc["arenas"][0]
    assert "size_expr" not in doc["arenas"][0]["offsets"]["tensors"]


# -- the report ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name,dims", [("mobile_block", ()), ("dynamic_batch", BATCH)])
def test_the_report_is_written_and_byte_identical(name, dims, tmp_path):
    first = package(model_file(name), tmp_path / "a", dims=dims)
    second = package(model_file(name), tmp_path / "b", dims=dims)
    page = file_of(first, "_report.html").read_bytes()
    assert page == file_of(second, "_report.html").read_bytes()
    assert page.startswith(b"<!DOCTYPE html>") and b"the plan as packaged" in page
    assert (b"Dynamic shapes (image_0 in [1, 8])" in page) == bool(dims)
    assert b" ms</td>" not in page  # no planning times


def test_the_report_measures_nothing(tmp_path, monkeypatch):
    """Measuring TFLite's layout would run it in a child process: package never does."""
    def refuse(*args, **kwargs):
        raise AssertionError("package started a child process")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    result = package(model_file("residual"), tmp_path / "out", semantics="tflite")
    assert b"measured layout" not in file_of(result, "_report.html").read_bytes()


def test_no_report_leaves_it_out(tmp_path):
    code, text = invoke(model_file("chain"), "-o", tmp_path / "out", "--no-report")
    assert code == 0, text
    assert not list((tmp_path / "out").glob("*_report.html"))
    assert (tmp_path / "out" / "chain_plan.h").exists()


# -- TFLite Micro runs the worst-case plan -----------------------------------------------------

def test_tflm_runs_the_worst_case_offline_plan(tmp_path):
    """TFLite Micro runs the stored shapes (batch 1) inside the plan made for batch 8."""
    pytest.importorskip("tflite_micro", reason="tflite-micro is not installed (pip install 'tflpack[runtimes]')")
    from tests.package.test_package_tflm import GENEROUS, run_tflm

    result = packaged("dynamic_batch", "tflm", BATCH)
    head = result.plan.arena_bytes
    runs = run_tflm(tmp_path, "dynamic_batch", [(model_file("dynamic_batch"), head + GENEROUS),
                                                (file_of(result, ".tflite"), head + GENEROUS)])
    assert runs is not None
    reference, measured = runs
    assert reference["loaded"] and measured["loaded"], runs
    assert measured["head"] <= head and measured["outputs"] == reference["outputs"]
