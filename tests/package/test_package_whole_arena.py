"""The header's arena is TFLite Micro's whole arena: the packaged model sets up and runs in the
Python interpreter in exactly <P>_TENSOR_ARENA_BYTES plus the recording allocator's 232 B (the
header states a plain MicroInterpreter's figure; runtimes/tflm.py's try_arenas adds the 232 B) and not in
16 bytes less, its head equals the plan, and its
outputs equal the original's. The sidecar carries the same figures; --budget compares them;
verification runs before anything is written."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fixtures.catalog import RUNS_IN_TFLM
from fixtures.write_models import DEFAULT_DIR
from packager.cli import app
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.runtimes.child import Unavailable
from packager.package import verify as verify_module
from packager.package.build import package
from packager.package.load import parse_plan
from packager.package.verify import VerifyError
from packager.reader import read_model
from tests.conftest import SHARED_MODELS

runner = CliRunner()
SHARED_RUNNABLE = ("hand_recrop", "iris_landmark", "tflm/audio_preprocessor_int8",
                   "tflm/hello_world_int8", "tflm/keyword_scrambled_8bit",
                   "tflm/micro_speech_quantized", "tflm/mobilenet_v2_quantized_1x3x224x224",
                   "tflm/person_detect", "tflm/trained_lstm_int8")


def macro(header: str, name: str) -> int:
    prefix = re.search(r"#define (\w+)_PLAN_H_", header).group(1)
    return int(re.search(rf"#define {prefix}_{name} (\d+)", header).group(1))


@functools.cache
def packaged(path: str, folder: str, verify: bool = True):
    result = package(path, folder, report=False, verify=verify)
    prefix = Path(path).stem
    return result, (Path(folder) / f"{prefix}_plan.h").read_text(), Path(folder) / f"{prefix}.tflite"


def _check(path: Path, tmp_path_factory) -> None:
    pytest.importorskip("tflite_micro", reason="tflite-micro is not installed (pip install '.[runtimes]')")
    from packager.runtimes.tflm import try_arenas
    result, header, packed = packaged(str(path), str(tmp_path_factory.mktemp("pkg")))
    arena = macro(header, "TENSOR_ARENA_BYTES")
    assert arena % 16 == 0 and macro(header, "ARENA_EXACT") == 1  # verified: shown by the runtime
    tries = try_arenas(packed, [arena, arena - 16])
    assert [t.ok for t in tries] == [True, False], tries
    assert tries[0].head == macro(header, "ARENA_HEAD_BYTES") == result.plan.arena_bytes
    assert tries[0].tail == macro(header, "ARENA_TAIL_BYTES")
    (original,) = try_arenas(path, [arena * 2])
    assert original.ok and original.outputs == tries[0].outputs
    # Never worse than the original model under TFLite Micro's own planner.
    assert arena <= predict_whole_arena(read_model(path)).arena


@pytest.mark.parametrize("name", sorted(RUNS_IN_TFLM - {"dynamic_batch", "dynamic_image", "dynamic_sequence"}))
def test_packaged_fixture_runs_in_exactly_the_declared_arena(name, tmp_path_factory):
    _check(DEFAULT_DIR / f"{name}.tflite", tmp_path_factory)


@pytest.mark.parametrize("name", SHARED_RUNNABLE)
def test_packaged_shared_model_runs_in_exactly_the_declared_arena(name, tmp_path_factory):
    path = SHARED_MODELS / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{name}.tflite not present (../shared/models is absent)")
    _check(path, tmp_path_factory)


def test_header_declares_the_whole_arena_and_the_sidecar_says_the_same(tmp_path):
    result, header, _ = packaged(str(DEFAULT_DIR / "mobile_block.tflite"), str(tmp_path), verify=False)
    whole = result.plan.runtime_arena
    assert whole is not None and whole.target == "host" and not whole.modelled
    assert (whole.bound, whole.exact, whole.not_run) == ("unknown", False, "--no-verify")
    assert macro(header, "TENSOR_ARENA_BYTES") == whole.arena_bytes
    assert whole.arena_bytes >= whole.head_bytes + whole.tail_bytes
    assert "uint8_t name[MOBILE_BLOCK_TENSOR_ARENA_BYTES]" in header
    assert "232 B more tail" in header  # the Python interpreter's difference, stated
    for name in ("mobile_block_plan.json", "mobile_block_plan.tplan"):
        assert parse_plan((tmp_path / name).read_bytes()).runtime_arena == whole
    doc = json.loads((tmp_path / "mobile_block_plan.json").read_text())
    assert doc["runtime_arena"]["arena_bytes"] == whole.arena_bytes


def test_other_semantics_have_no_tflm_whole_arena(tmp_path):
    result = package(DEFAULT_DIR / "chain.tflite", tmp_path / "o", semantics="tflite", report=False)
    assert result.plan.runtime_arena is None
    assert "TENSOR_ARENA_BYTES" not in (tmp_path / "o" / "chain_plan.h").read_text()


def test_summary_first_figure_is_declare_and_budget_compares_the_whole_arena(tmp_path):
    whole = package(DEFAULT_DIR / "chain.tflite", tmp_path / "a", report=False).plan.runtime_arena
    out = runner.invoke(app, ["package", str(DEFAULT_DIR / "chain.tflite"), "-o", str(tmp_path / "b"),
                              "--no-verify"])
    assert out.exit_code == 0, out.output
    first = out.output.splitlines()[0]
    assert first.startswith(f"not run on TFLite Micro (--no-verify): declare {whole.arena_bytes:,} bytes")
    assert "not verified on TFLite Micro (--no-verify)" in out.output
    # A budget the head fits but the whole arena does not.
    out = runner.invoke(app, ["package", str(DEFAULT_DIR / "chain.tflite"), "-o", str(tmp_path / "c"),
                              "--no-verify", "--budget", str(whole.head_bytes + 16)])
    assert out.exit_code == 3 and "TFLite Micro arena" in out.output
    assert not (tmp_path / "c").exists()


def test_cortex_m_target_is_smaller_and_marked_modelled(tmp_path):
    # float16 DEQUANTIZE: a form no device build runs, so the figure stays modelled
    out = runner.invoke(app, ["package", str(DEFAULT_DIR / "dequantize_fp16.tflite"), "-o", str(tmp_path / "m"),
                              "--no-verify", "--target", "cortex-m"])
    assert out.exit_code == 0, out.output
    header = (tmp_path / "m" / "dequantize_fp16_plan.h").read_text()
    assert "Modelled, not measured" in header and "modelled, not measured" in out.output
    host = package(DEFAULT_DIR / "dequantize_fp16.tflite", tmp_path / "h", report=False,
                   verify=False).plan.runtime_arena
    assert macro(header, "TENSOR_ARENA_BYTES") < host.arena_bytes
    out = runner.invoke(app, ["package", str(DEFAULT_DIR / "chain.tflite"), "-o", str(tmp_path / "x"),
                              "--target", "riscv"])
    assert out.exit_code == 2 and "unknown target" in out.output


def test_a_verification_mismatch_fails_with_one_line_and_writes_nothing(tmp_path, monkeypatch):
    pytest.importorskip("tflite_micro", reason="tflite-micro is not installed (pip install '.[runtimes]')")
    real = verify_module.predict_whole_arena

    def sixteen_short(model, target, head=None):
        from dataclasses import replace
        whole = real(model, target, head=head)
        return replace(whole, arena=whole.arena - 16) if head is not None else whole
    monkeypatch.setattr(verify_module, "predict_whole_arena", sixteen_short)
    with pytest.raises(VerifyError, match="does not run in"):
        package(DEFAULT_DIR / "chain.tflite", tmp_path / "o", report=False, verify=True)
    assert not (tmp_path / "o").exists()
    out = runner.invoke(app, ["package", str(DEFAULT_DIR / "chain.tflite"), "-o", str(tmp_path / "p")])
    assert out.exit_code != 0 and len(out.output.strip().splitlines()) == 1
    assert not (tmp_path / "p").exists()


def test_without_the_runtime_the_plan_is_said_unverified(tmp_path, monkeypatch):
    monkeypatch.setattr(verify_module, "try_arenas_each",
                        lambda *a, **k: Unavailable("missing", "tflite-micro is not installed"))
    result = package(DEFAULT_DIR / "chain.tflite", tmp_path / "o", report=False, verify=True)
    assert result.notes[0] == "unverified: tflite-micro is not installed"


def test_ethos_u_scratch_tensors_are_planned_and_vela_plan_is_reported(tmp_path):
    path = SHARED_MODELS / "tflm" / "person_detect_vela.tflite"
    if not path.exists():
        pytest.skip("person_detect_vela.tflite not present (../shared/models is absent)")
    from packager.lifetimes import model_lifetimes
    (arena,) = model_lifetimes(read_model(path), "tflm")
    planned = {r.tensor: r.size for r in arena.records}
    assert planned[3] == planned[4] == 74464  # the ethos-u op's scratch and fast scratch
    result = package(path, tmp_path / "o", report=False)
    note = next(n for n in result.notes if "OfflineMemoryAllocation written by Vela" in n)
    # Vela's plan (input and output inside its scratch) is smaller: kept, the model unchanged.
    assert "kept" in note
    assert (tmp_path / "o" / "person_detect_vela.tflite").read_bytes() == path.read_bytes()
    assert result.plan.runtime_arena.head_bytes == 74464
    assert not result.plan.runtime_arena.exact  # the ethos-u kernel's own memory is not modelled


def test_a_model_with_a_larger_offline_plan_gets_it_replaced_and_says_so(tmp_path):
    from packager.package.offline_plan import with_offline_plan
    model = read_model(DEFAULT_DIR / "chain.tflite")
    tensors = [t for sg in model.subgraphs for t in sg.tensors]
    wasteful, at = [], 0
    for t in tensors:  # every planned tensor on its own: a valid but large plan
        wasteful.append(-1 if t.is_constant else at)
        at += 0 if t.is_constant else -(-(t.nbytes or 0) // 16) * 16
    path = tmp_path / "planned.tflite"
    path.write_bytes(with_offline_plan(model.raw, wasteful, 1))
    result = package(path, tmp_path / "o", report=False)
    assert any("OfflineMemoryAllocation written by another tool" in n and "replaced by this plan" in n
               for n in result.notes)
    kept = package(path, tmp_path / "k", report=False, keep_offline_plan=True)
    assert kept.plan.runtime_arena.head_bytes == at > result.plan.runtime_arena.head_bytes


def test_a_model_with_several_signatures_says_which_one_a_device_runs(tmp_path):
    """TFLite Micro sets every subgraph up and runs subgraph 0: the note says so, and the head
    holds the other signatures' tensors (planned by tflpack, all live at once, as TFLite Micro's
    lifetime -1 makes them)."""
    from fixtures.tflm_kernels import three_signatures
    path = tmp_path / "three_signatures.tflite"
    path.write_bytes(three_signatures().build())
    result = package(path, tmp_path / "o", report=False, verify=False)
    assert any(n.startswith("3 signatures: TFLite Micro has no signature runner") and "('serving_default')" in n
               for n in result.notes), result.notes
    assert result.plan.arena_bytes == 1200  # 32 + 16 + 3 x 384 B of the other two subgraphs, beside subgraph 0's 96
