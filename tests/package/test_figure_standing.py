"""How far the whole-arena figure is proven, said the same everywhere it is stated: exact only
when TFLite Micro ran the packaged model in it and not in 16 B less; otherwise which side of the
runtime's need it is on and why, the runtime's not running it said first; the number to declare
first in the header; figures that add up."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fixtures.op_matrix import CASES
from fixtures.tflm_kernels import mlp_int8_perchannel, setup_conv
from fixtures.write_models import DEFAULT_DIR
from packager.cli import app
from packager.kernels.tflm_arena import CORTEX_M_REFERENCE
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.package import verify as verify_module
from packager.package.build import package
from packager.package.standing import Shown, decide
from packager.reader import parse_model
from packager.runtimes.child import Unavailable

runner = CliRunner()
NEEDS_TFLM = dict(reason="tflite-micro is not installed (pip install '.[runtimes]')")


def _write(tmp_path: Path, builder) -> Path:
    path = tmp_path / f"{builder.__name__}.tflite"
    path.write_bytes(builder().build())
    return path


def _header(folder: Path, prefix: str) -> str:
    return (folder / f"{prefix}_plan.h").read_text()


def _defines(header: str) -> list[tuple[str, str]]:
    return re.findall(r"^#define (\w+) (.*)$", header, flags=re.M)


def _package(args: list[str]):
    out = runner.invoke(app, ["package", *args])
    assert out.exit_code == 0, out.output
    return out.output


# -- 1. where the runtime did not run the model, nothing is exact and the first line says so first --

def test_a_model_tflite_micro_does_not_run_is_said_so_first_and_marked_nothing_exact(tmp_path):
    pytest.importorskip("tflite_micro", **NEEDS_TFLM)
    # float16 DEQUANTIZE: TFLite Micro refuses it at any arena size (as MediaPipe's landmark models)
    output = _package([str(DEFAULT_DIR / "dequantize_fp16.tflite"), "-o", str(tmp_path / "o")])
    first = output.splitlines()[0]
    assert first.startswith("not run on TFLite Micro (it does not run the original model: ")
    assert "(host, not proven either way)" in first
    header = _header(tmp_path / "o", "dequantize_fp16")
    assert header.splitlines()[1].startswith(" * Not run on TFLite Micro (it does not run the original model: ")
    assert "#define DEQUANTIZE_FP16_ARENA_EXACT 0" in header
    assert '#define DEQUANTIZE_FP16_ARENA_BOUND "unknown"' in header
    assert "the smallest arena with which" not in header and "Exact for this build" not in header
    doc = json.loads((tmp_path / "o" / "dequantize_fp16_plan.json").read_text())["runtime_arena"]
    assert doc["exact"] is False and doc["bound"] == "unknown" and "does not run" in doc["not_run"]


@pytest.mark.parametrize("how", ["--no-verify", "no runtime"])
def test_a_model_not_run_is_not_exact_however_it_was_not_run(how, tmp_path, monkeypatch):
    args = [str(DEFAULT_DIR / "chain.tflite"), "-o", str(tmp_path / "o")]
    if how == "--no-verify":
        args.append("--no-verify")
    else:
        monkeypatch.setattr(verify_module, "try_arenas_each",
                            lambda *a, **k: Unavailable("missing", "tflite-micro is not installed"))
    first = _package(args).splitlines()[0]
    why = "--no-verify" if how == "--no-verify" else "tflite-micro is not installed"
    assert first.startswith(f"not run on TFLite Micro ({why}): declare ")
    header = _header(tmp_path / "o", "chain")
    assert "#define CHAIN_ARENA_EXACT 0" in header and "the smallest arena with which" not in header
    assert header.splitlines()[1].startswith(f" * Not run on TFLite Micro ({why}): declare CHAIN_TENSOR_ARENA_BYTES")


def test_a_model_the_runtime_ran_in_exactly_its_figure_is_exact(tmp_path):
    pytest.importorskip("tflite_micro", **NEEDS_TFLM)
    first = _package([str(DEFAULT_DIR / "chain.tflite"), "-o", str(tmp_path / "o")]).splitlines()[0]
    assert first.startswith("declare ") and "(host)" in first
    header = _header(tmp_path / "o", "chain")
    assert "#define CHAIN_ARENA_EXACT 1" in header and '#define CHAIN_ARENA_BOUND "exact"' in header
    assert "not in 16 B less" in header


# -- 2. a figure that is not exact says which side it is on, and why -------------------------------

def embedding_lookup_int8():
    """EMBEDDING_LOOKUP of an int8 table: its Prepare takes a persistent buffer while its
    temporaries are live, and which of them it still reads is not modelled."""
    return next(c for c in CASES if c.name == "EMBEDDING_LOOKUP__int8").model()


def test_an_overlapping_prepare_makes_the_figure_an_upper_bound_not_at_least(tmp_path):
    prediction = predict_whole_arena(parse_model(embedding_lookup_int8().build()))
    assert prediction.side == "upper" and prediction.least < prediction.arena
    assert "may need up to" in prediction.why_inexact and "EMBEDDING_LOOKUP" in prediction.why_inexact
    output = _package([str(_write(tmp_path, embedding_lookup_int8)), "-o", str(tmp_path / "o"), "--no-verify"])
    first = output.splitlines()[0]
    assert f"declare at most {prediction.arena:,} bytes" in first and "an upper bound" in first
    assert "at least" not in output


def test_a_prepare_that_reads_only_the_tensor_structs_after_its_buffers_is_exact(tmp_path):
    # int8 FULLY_CONNECTED with per-channel weights takes its per-channel arrays while its
    # temporaries are live, then reads no more of them than their TfLiteTensors and quantization
    # pointers: the topmost zero-point array may be overwritten, and the figure is the smallest.
    pytest.importorskip("tflite_micro", **NEEDS_TFLM)
    result = package(_write(tmp_path, mlp_int8_perchannel), tmp_path / "o", report=False, verify=True)
    arena = result.plan.runtime_arena
    assert (arena.bound, arena.exact, arena.not_run) == ("exact", True, "")
    assert '#define MLP_INT8_PERCHANNEL_ARENA_BOUND "exact"' in _header(tmp_path / "o", "mlp_int8_perchannel")


# -- 3. device targets: modelled, not exact without a build of it to show it -----------------------

def test_a_modelled_target_figure_is_not_exact_without_a_run_of_it(tmp_path):
    # float16 DEQUANTIZE: a kernel form armhf-linux's build has not proven (no TFLite Micro runs it)
    _package([str(DEFAULT_DIR / "dequantize_fp16.tflite"), "-o", str(tmp_path / "m"), "--no-verify",
              "--target", "armhf-linux"])
    header = _header(tmp_path / "m", "dequantize_fp16")
    assert "#define DEQUANTIZE_FP16_ARENA_EXACT 0" in header
    assert '#define DEQUANTIZE_FP16_ARENA_BOUND "unknown"' in header
    assert "Exact for this build" not in header and "32-bit struct sizes" in header


def test_a_device_figure_is_exact_where_its_build_proved_every_kernel_form():
    # the coverage matrix (kernels/tflm_coverage.py) stands in for a run, for that target only
    proof = "every kernel form in the model proven on its build"
    assert decide(1104, "cortex-m4", "exact", "", None, "--no-verify", "", proof).bound == "exact"
    assert decide(1104, "cortex-m4", "upper", "why", None, "--no-verify", "", proof).bound == "upper"


def test_what_a_build_of_the_target_shows_settles_the_standing():
    # the hook a target's runtime or oracle uses: its run, not the host's, settles the figure
    host = Shown("host", "tflite-micro x", 1104, True, False)
    cortex = Shown("cortex-m", "an oracle", 1104, True, False)
    assert decide(1104, "cortex-m", "exact", "", host, "", "for the 32-bit ARM Linux ABI").bound == "unknown"
    assert decide(1104, "cortex-m", "exact", "", cortex, "", "for the 32-bit ARM Linux ABI").bound == "exact"
    assert decide(1104, "cortex-m", "exact", "", Shown("cortex-m", "o", 1104, False, None), "", "x").bound == "lower"
    assert decide(1104, "cortex-m", "exact", "", Shown("cortex-m", "o", 1104, True, True), "", "x").bound == "upper"
    assert predict_whole_arena(parse_model(mlp_int8_perchannel().build()), CORTEX_M_REFERENCE).side == "exact"


# -- 4, 5. the number first: the header's first comment line and define, --json, the report page ---

def test_the_whole_arena_is_the_first_define_and_no_plan_figure_is_named_like_it(tmp_path):
    output = _package([str(DEFAULT_DIR / "chain.tflite"), "-o", str(tmp_path / "o"), "--no-verify", "--json"])
    whole = json.loads(output)["runtime_arena"]
    header = _header(tmp_path / "o", "chain")
    defines = [d for d in _defines(header) if not d[0].endswith("_PLAN_H_")]
    assert defines[0] == ("CHAIN_TENSOR_ARENA_BYTES", f"{whole['arena_bytes']}  /* declare this: see below */")
    assert f"CHAIN_TENSOR_ARENA_BYTES = {whole['arena_bytes']} bytes" in header.splitlines()[1]
    grepped = [line for line in header.splitlines() if "ARENA_BYTES" in line and line.startswith("#define")]
    assert grepped[0].startswith(f"#define CHAIN_TENSOR_ARENA_BYTES {whole['arena_bytes']}")
    assert "#define CHAIN_ARENA_BYTES" not in header  # the plan (the head) is CHAIN_PLAN_BYTES
    assert ("CHAIN_PLAN_BYTES", f"{whole['head_bytes']}  /* this plan: TFLite Micro's head, not the arena "
                                "to declare */") in defines
    assert (whole["bound"], whole["not_run"]) == ("unknown", "--no-verify")
    page = (tmp_path / "o" / "chain_report.html").read_text()
    assert (f"Not run on TFLite Micro (--no-verify): declare {whole['arena_bytes']:,} bytes of TFLite Micro "
            "arena") in page
    # Other semantics have no whole arena: their plan is the arena, named as before.
    output = _package([str(DEFAULT_DIR / "chain.tflite"), "-o", str(tmp_path / "t"), "-s", "tflite", "--json"])
    assert "runtime_arena" not in json.loads(output)
    assert _defines(_header(tmp_path / "t", "chain"))[0][0] == "CHAIN_ARENA_BYTES"


# -- 6. --budget names the part that decides, and its figures add up --------------------------------

def test_budget_names_the_set_up_room_and_its_figures_add_up(tmp_path):
    path = _write(tmp_path, setup_conv)  # a model whose set-up room decides the arena
    out = runner.invoke(app, ["package", str(path), "-o", str(tmp_path / "o"), "--no-verify", "--budget", "64"])
    assert out.exit_code == 3
    needs = re.search(r"needs ([\d,]+) B of TFLite Micro arena \(the set-up room ([\d,]+) \(TFLite Micro needs "
                      r"it while it sets the model up\), more than head ([\d,]+) \+ tail ([\d,]+) = ([\d,]+)\)",
                      out.output)
    assert needs, out.output
    arena, setup, head, tail, total = (int(n.replace(",", "")) for n in needs.groups())
    assert head + tail == total < setup <= arena == -(-setup // 16) * 16
