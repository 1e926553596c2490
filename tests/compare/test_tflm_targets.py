"""Each device target's figures on that target's own TFLite Micro (the oracle: tests/oracle/tflm_fit.cc
built by .ci/build_tflm_targets.sh for the target's core and kernels, run under qemu-arm; x86_64-linux's by
.ci/build_tflm_fit_x86_64.sh, run natively): every
shared TFLite Micro model and every TFLite Micro fixture the build registers the operators of sets
up and runs in exactly the declared arena and not in 16 B less; the coverage matrix
(packager/kernels/tflm_coverage.py) claims no kernel form these cases do not hold exact."""

from __future__ import annotations

import functools
import signal
from pathlib import Path

import pytest

from fixtures.runtime_cases import RUNTIME_CASES
from fixtures.tflm_cmsis_kernels import CMSIS_BUILDERS
from fixtures.tflm_kernels import KERNEL_BUILDERS
from packager.kernels import tflm_coverage
from packager.kernels.tflm_arena import target_named
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.reader import read_model
from packager.runtimes.tflm_targets import fits, registered, status
from tests.conftest import REPO, SHARED_MODELS
from tests.oracle.locate import program

# The reference builds (bare-metal Cortex-M, 32-bit ARM Linux, x86-64 Linux run natively) and the CMSIS-NN builds of the DSP,
# no-DSP and MVE families (each stands for its family's cores: packager/kernels/tflm_arena.py,
# CMSIS_NN_ORACLES).
TARGETS = ("cortex-m4", "armhf-linux", "cortex-m4+cmsis-nn", "cortex-m3+cmsis-nn", "cortex-m55+cmsis-nn",
           "x86_64-linux")
GENEROUS = 8 << 20  # the fit program's whole static arena
SHARED = sorted(p.stem for p in (SHARED_MODELS / "tflm").glob("*.tflite"))
FIXTURES = (sorted(KERNEL_BUILDERS) + [f"runtime_{f.__name__}" for f in RUNTIME_CASES]
            + sorted(CMSIS_BUILDERS))
CATALOG = REPO / "fixtures" / "models"
CASES = ([f"shared:{name}" for name in SHARED] + [f"fixture:{name}" for name in FIXTURES]
         + [f"catalog:{p.stem}" for p in sorted(CATALOG.glob("*.tflite"))])


@functools.cache
def case_path(case: str, folder: str) -> Path:
    kind, name = case.split(":")
    if kind == "shared":
        return SHARED_MODELS / "tflm" / f"{name}.tflite"
    if kind == "catalog":
        return CATALOG / f"{name}.tflite"
    path = Path(folder) / f"{name}.tflite"
    builders = {f"runtime_{f.__name__}": f for f in RUNTIME_CASES} | KERNEL_BUILDERS | CMSIS_BUILDERS
    path.write_bytes(builders[name]().build())
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("target_cases"))


def oracle(target: str):
    build = target_named(target).oracle
    found, why = program(build)
    if found is None:
        pytest.skip(why)
    return build, found


@functools.cache
def runs_exactly(target: str, case: str, folder: str) -> tuple[bool | None, str]:
    """(None: the build cannot run the case; else whether it runs in the declared arena and not
    in 16 B less, with what was seen)."""
    build, found = oracle(target)
    path = case_path(case, folder)
    model = read_model(path)
    missing = tflm_coverage.unregistered(model, build)
    if missing:
        return None, f"the {build} build registers no {', '.join(missing)}"
    prediction = predict_whole_arena(model, target_named(target))
    if not prediction.exact:
        return None, prediction.why_inexact
    n = prediction.arena
    seen = (fits(found, path, n), fits(found, path, n - 16))
    if not seen[0] and not fits(found, path, max(n, GENEROUS)):
        if status(found, path, max(n, GENEROUS)) == -signal.SIGILL:
            # The MVE build's buffer-size code is compiled for cortex-m55: some of it (the 1xN convolution's)
            # holds v8.1-M instructions the A-profile core qemu-arm runs does not have.
            return None, f"TFLite Micro built for {build} stops on an instruction qemu-arm's core does not have"
        return None, f"TFLite Micro built for {build} does not run it at all (not even in {GENEROUS:,} B)"
    return seen == (True, False), f"declared {n:,} B: runs in it {seen[0]}, in 16 B less {seen[1]}"


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("target", TARGETS)
def test_runs_in_the_declared_arena_and_not_16_bytes_less(target, case, folder):
    if case.startswith("shared:") and not SHARED_MODELS.exists():
        pytest.skip("no ../shared/models")
    ok, seen = runs_exactly(target, case, folder)
    if ok is None:
        pytest.skip(seen)
    assert ok, seen


@pytest.mark.parametrize("target", TARGETS)
def test_the_build_registers_the_operators_the_coverage_table_says(target):
    build, found = oracle(target)
    assert registered(found, sorted(tflm_coverage.TFLM_CUSTOM)) == set(tflm_coverage.registered_by(build))


@pytest.mark.parametrize("target", TARGETS)
def test_the_coverage_matrix_claims_only_what_ran_exact(target, folder):
    build, _ = oracle(target)
    claimed = set(tflm_coverage.PROVEN.get(build, frozenset()))
    held: set[str] = set()
    failed: set[str] = set()
    for case in CASES:
        if case.startswith("shared:") and not SHARED_MODELS.exists():
            continue
        ok, _ = runs_exactly(target, case, folder)
        if ok is not None:
            (held if ok else failed).update(tflm_coverage.forms(read_model(case_path(case, folder)), build))
    # Every claim is held by these cases or by a row of the coverage matrix (test_tflm_target_matrix.py).
    assert not claimed & failed, f"claimed, but in a case not exact: {sorted(claimed & failed)}"
    assert held, "no case ran exact"


def _lookups(count: int) -> bytes:
    """`count` float EMBEDDING_LOOKUPs of model-input ids: each Prepare moves its output's dims to
    persistent memory, then takes its OpData (on 32-bit the tail then lies off a 16-byte boundary,
    where the order changes the set-up room)."""
    import numpy as np
    from fixtures.builder import ModelBuilder
    m = ModelBuilder(description=f"lookups: {count} EMBEDDING_LOOKUP")
    g = m.subgraph("main")
    ids = g.tensor("ids", [3], "INT32")
    outs = {}
    for i in range(count):
        table = g.const(f"table{i}", np.arange(24, dtype=np.float32).reshape(6, 4) * (i + 1))
        outs[f"y{i}"] = g.tensor(f"y{i}", [3, 4])
        g.op("EMBEDDING_LOOKUP", [ids, table], [outs[f"y{i}"]])
    g.inputs([ids])
    g.outputs(list(outs.values()))
    m.signature("serving_default", inputs={"ids": ids}, outputs=outs, subgraph=0)
    return m.build()


def _add_n(inputs: int, type_name: str) -> bytes:
    """One ADD_N of `inputs` tensors of 64 values: its scratch holds a pointer per input (4 B on
    32-bit, 8 on the host), enough to change the head where 16-byte rounding does not hide it."""
    from fixtures.builder import ModelBuilder, Quantization
    m = ModelBuilder(description=f"add_n: {inputs} inputs, {type_name}")
    g = m.subgraph("main")
    q = {"quantization": Quantization(scale=[0.05], zero_point=[0])} if type_name == "INT8" else {}
    xs = [g.tensor(f"x{i}", [1, 64], type_name, **q) for i in range(inputs)]
    y = g.tensor("y", [1, 64], type_name, **q)
    g.op("ADD_N", xs, [y], options_table="AddNOptions")
    g.inputs(xs)
    g.outputs([y])
    m.signature("serving_default", inputs={f"x{i}": x for i, x in enumerate(xs)}, outputs={"y": y}, subgraph=0)
    return m.build()


POINTER_CASES = {**{f"lookups_{k}": functools.partial(_lookups, k) for k in (1, 2, 3)},
                 **{f"add_n_{k}_{t.lower()}": functools.partial(_add_n, k, t)
                    for k in (3, 5) for t in ("FLOAT32", "INT8")}}


@pytest.mark.parametrize("case", sorted(POINTER_CASES))
@pytest.mark.parametrize("target", ("cortex-m4", "armhf-linux"))
def test_32_bit_lookups_and_pointer_scratch_are_exact(target, case, tmp_path):
    """EMBEDDING_LOOKUP (dims before OpData) and ADD_N (a 4-byte pointer an input) on a 32-bit
    build: exact, set up and run in the declared arena and not in 16 B less."""
    _, found = oracle(target)
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(POINTER_CASES[case]())
    prediction = predict_whole_arena(read_model(path), target_named(target))
    assert prediction.exact, prediction.why_inexact
    n = prediction.arena
    assert (fits(found, path, n), fits(found, path, n - 16)) == (True, False), f"declared {n:,} B"


def test_package_places_a_32_bit_pointer_scratch_as_the_device_does(tmp_path, monkeypatch):
    """ADD_N's scratch is 12 B (three 4-byte pointers) on cortex-m4, 24 in the host's plan: the
    declared arena counts the device's head (TFLite Micro places the scratch around the packaged
    tensors), the device build runs in it and not 16 B less, and the host verification still sees
    the plan's own head."""
    from packager.package.build import package
    from packager.runtimes.tflm_targets import ENV
    from tests.oracle.locate import builds
    oracle("cortex-m4")
    monkeypatch.setenv(ENV, str(builds()))
    path = tmp_path / "add_n.tflite"
    path.write_bytes(_add_n(3, "FLOAT32"))
    result = package(path, tmp_path / "o", report=False, target="cortex-m4", verify=True)
    assert any(n.startswith("verified on tflite-micro") for n in result.notes), result.notes
    assert any(n.startswith("verified on TFLite Micro built for cortex-m4") for n in result.notes), result.notes
    arena = result.plan.runtime_arena
    assert arena.head_bytes < result.plan.arena_bytes  # 16 B of pointer scratch less than the host's
    assert "_ARENA_EXACT 1" in (tmp_path / "o" / "add_n_plan.h").read_text()


def _mul_int32() -> bytes:
    """An int32 MUL: registered by the device build, a form outside its coverage matrix (the
    matrix's MUL rows are float32, int8 and int16)."""
    import numpy as np
    from fixtures.builder import ModelBuilder
    m = ModelBuilder(description="mul_int32: one int32 MUL")
    g = m.subgraph("main")
    x, y = g.tensor("x", [1, 8], "INT32"), g.tensor("y", [1, 8], "INT32")
    g.op("MUL", [x, g.const("c", np.full([1], 3, np.int32))], [y],
         options=dict(fused_activation_function="NONE"))
    g.inputs([x])
    g.outputs([y])
    m.signature("serving_default", inputs={"x": x}, outputs={"y": y}, subgraph=0)
    return m.build()


def test_package_proves_a_model_outside_the_matrix_by_running_it(tmp_path, monkeypatch):
    from packager.package.build import package
    from packager.runtimes.tflm_targets import ENV
    from tests.oracle.locate import builds
    oracle("cortex-m4")
    monkeypatch.setenv(ENV, str(builds()))
    path = tmp_path / "mul_int32.tflite"
    path.write_bytes(_mul_int32())
    assert tflm_coverage.unproven(read_model(path), "cortex-m4") == ["MUL INT32"]
    unverified = package(path, tmp_path / "a", report=False, target="cortex-m4", verify=False)
    assert "_ARENA_EXACT 0" in (tmp_path / "a" / "mul_int32_plan.h").read_text()
    result = package(path, tmp_path / "b", report=False, target="cortex-m4", verify=True)
    assert any(n.startswith("verified on TFLite Micro built for cortex-m4") for n in result.notes), result.notes
    header = (tmp_path / "b" / "mul_int32_plan.h").read_text()
    assert "_ARENA_EXACT 1" in header and "this model run on TFLite Micro built for cortex-m4" in header
    assert result.plan.runtime_arena.arena_bytes == unverified.plan.runtime_arena.arena_bytes


def test_an_invoke_that_does_not_end_in_time_is_said_and_the_files_are_those_of_a_finished_one(tmp_path,
                                                                                              monkeypatch):
    """The arena is settled by the set-up (at the figure, not 16 B below); an Invoke still running at the
    time limit (a large model on an emulated core) is said in the note, and the files written are byte
    for byte those of a run whose Invoke ended: they never depend on how fast the machine is."""
    from packager.package.build import package
    from packager.runtimes import tflm_targets
    from tests.oracle.locate import builds
    oracle("cortex-m4")
    monkeypatch.setenv(tflm_targets.ENV, str(builds()))
    path = tmp_path / "mul_int32.tflite"
    path.write_bytes(_mul_int32())
    finished = package(path, tmp_path / "finished", report=False, target="cortex-m4", verify=True)
    real = tflm_targets.status

    def invoke_never_ends(program, model, arena, timeout=tflm_targets.TIMEOUT, set_up_only=False):
        return real(program, model, arena, timeout, set_up_only) if set_up_only else None
    monkeypatch.setattr(tflm_targets, "status", invoke_never_ends)
    slow = package(path, tmp_path / "slow", report=False, target="cortex-m4", verify=True)
    assert any(n.startswith("verified on TFLite Micro built for cortex-m4: sets up in") and "did not end within" in n
               for n in slow.notes), slow.notes
    assert not any("did not end" in n for n in finished.notes)
    for written in sorted((tmp_path / "finished").iterdir()):
        assert (tmp_path / "slow" / written.name).read_bytes() == written.read_bytes(), written.name
    assert "_ARENA_EXACT 1" in (tmp_path / "slow" / "mul_int32_plan.h").read_text()


def test_package_refuses_a_figure_the_device_build_does_not_run_in(tmp_path, monkeypatch):
    from dataclasses import replace
    from packager.package import runtime_arena
    from packager.package.build import package
    from packager.package.verify import VerifyError
    from packager.runtimes.tflm_targets import ENV
    from tests.oracle.locate import builds
    oracle("cortex-m4")
    monkeypatch.setenv(ENV, str(builds()))
    real = runtime_arena.predict_whole_arena

    def sixteen_short(model, target, head=None):
        whole = real(model, target, head=head)
        return replace(whole, arena=whole.arena - 16) if target.name == "cortex-m4" else whole
    monkeypatch.setattr(runtime_arena, "predict_whole_arena", sixteen_short)
    path = tmp_path / "mul_int32.tflite"
    path.write_bytes(_mul_int32())
    with pytest.raises(VerifyError, match="does not run in the declared .* built for cortex-m4"):
        package(path, tmp_path / "o", report=False, target="cortex-m4", verify=True)
    assert not (tmp_path / "o").exists()


def test_package_notes_a_model_the_m55_build_stops_on_and_does_not_call_it_exact(tmp_path, monkeypatch):
    """The M55 build's 1xN buffer-size code holds a v8.1-M instruction qemu-arm's core lacks: the note
    says so, and the figure stays modelled (its 1xN branch is proven by nothing); the M4 build runs it."""
    from packager.package.build import package
    from packager.runtimes.tflm_targets import ENV
    from tests.oracle.locate import builds
    oracle("cortex-m55+cmsis-nn")
    monkeypatch.setenv(ENV, str(builds()))
    path = tmp_path / "conv.tflite"
    path.write_bytes(CMSIS_BUILDERS["cmsis_conv_1xn"]().build())
    result = package(path, tmp_path / "o", report=False, target="cortex-m55+cmsis-nn", verify=True)
    assert ("not run on TFLite Micro built for cortex-m55+cmsis-nn: it stops on an instruction qemu-arm's core "
            "does not have (SIGILL)") in result.notes, result.notes
    header = (tmp_path / "o" / "conv_plan.h").read_text()
    assert "_ARENA_EXACT 0" in header and "CONV_2D INT8 per-channel [1xN]" in header
    oracle("cortex-m4+cmsis-nn")
    result = package(path, tmp_path / "m4", report=False, target="cortex-m4+cmsis-nn", verify=True)
    assert any(n.startswith("verified on TFLite Micro built for cortex-m4+cmsis-nn") for n in result.notes)
    assert "_ARENA_EXACT 1" in (tmp_path / "m4" / "conv_plan.h").read_text()


def test_package_notes_a_model_the_device_build_cannot_run_at_all(tmp_path, monkeypatch):
    from packager.package.build import package
    from packager.runtimes.tflm_targets import ENV
    from tests.oracle.locate import builds
    oracle("cortex-m4")
    monkeypatch.setenv(ENV, str(builds()))
    result = package(CATALOG / "dequantize_fp16.tflite", tmp_path / "o", report=False, target="cortex-m4",
                     verify=True)  # float16 DEQUANTIZE: no TFLite Micro runs it
    assert "not run on TFLite Micro built for cortex-m4: it does not run the model at all" in result.notes
    assert "_ARENA_EXACT 0" in (tmp_path / "o" / "dequantize_fp16_plan.h").read_text()


@pytest.mark.parametrize("target", ["cortex-m4+cmsis-nn", "cortex-m7+cmsis-nn", "cortex-m3+cmsis-nn",
                                    "cortex-m55+cmsis-nn"])
def test_package_verifies_a_cmsis_nn_target_on_its_build(target, tmp_path, monkeypatch):
    """An int8 3x3 convolution: CMSIS-NN asks for an im2col buffer the plan left no room for, which
    TFLite Micro places around the packaged model's fixed tensors; the declared arena must be the
    one the target's build sets the packaged model up in, and not 16 B less."""
    from packager.package.build import package
    from packager.runtimes.tflm_targets import ENV
    from tests.oracle.locate import builds
    build, _ = oracle(target)
    monkeypatch.setenv(ENV, str(builds()))
    path = tmp_path / "conv.tflite"
    path.write_bytes(CMSIS_BUILDERS["cmsis_conv_3x3"]().build())
    result = package(path, tmp_path / "o", report=False, target=target, verify=True)
    assert any(n.startswith(f"verified on TFLite Micro built for {build}") for n in result.notes), result.notes
    assert "_ARENA_EXACT 1" in (tmp_path / "o" / "conv_plan.h").read_text()
    arena = result.plan.runtime_arena
    assert arena.target == target and arena.head_bytes > result.plan.arena_bytes  # the im2col buffer


def test_package_verifies_x86_64_linux_natively_without_qemu(tmp_path, monkeypatch):
    """The x86_64-linux build runs as it is (no qemu-arm needed): `package --target x86_64-linux` runs the
    packaged model on it, in the declared arena and not 16 B less, and calls the figure exact. With
    FULLY_CONNECTED its figure is below the wheel's (the sources' smaller parameters)."""
    import shutil
    from packager.package.build import package
    from packager.runtimes import tflm_targets
    from tests.oracle.locate import builds
    oracle("x86_64-linux")
    monkeypatch.setenv(tflm_targets.NATIVE["x86_64-linux"][0], str(builds("x86_64-linux")))
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "qemu-arm" else real_which(name, *a, **k))
    path = CATALOG / "mobile_block.tflite"
    result = package(path, tmp_path / "o", report=False, target="x86_64-linux", verify=True)
    assert any(n.startswith("verified on TFLite Micro built for x86_64-linux: runs in") for n in result.notes), \
        result.notes
    assert "_ARENA_EXACT 1" in (tmp_path / "o" / "mobile_block_plan.h").read_text()
    host = package(path, tmp_path / "h", report=False, verify=False).plan.runtime_arena
    assert result.plan.runtime_arena.arena_bytes < host.arena_bytes  # 16 B parameters, not the wheel's 32
