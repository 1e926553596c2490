"""Several models in one TFLite Micro arena (`package A.tflite B.tflite ... -o DIR`): the declared figure is
the smallest with which TFLite Micro's own code sets the packaged models up in the given order on one
MicroAllocator and runs each once (it works at N, not at N - 16), and each model's outputs are those it
gives alone. The instrument is tests/oracle/tflm_shared.cc linked against TFLite Micro's x86-64 library
built from its sources (.ci/build_tflm_shared.sh, cached outside the clone; `.ci/run` builds it): the
`x86_64-linux` target's build, so the figure tried is the one `package --target x86_64-linux` declares,
FULLY_CONNECTED pairs included (the `host` target, the wheel, lays out its parameters larger).
The library holds the Signal library's ops (kissfft downloaded by .ci/fetch_kissfft.sh), so the pair the
issue names, micro_speech's audio preprocessor then its classifier, is among the pairs.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from packager.cli import app
from packager.kernels.tflm_arena import X86_64_LINUX
from packager.kernels.tflm_shared_arena import DIFFER_FROM_HOST, predict_shared_arena
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.package.shared_arena import package_shared
from packager.reader import read_model
from packager.runtimes import tflm_shared
from tests.conftest import REPO

FIXTURES = REPO / "fixtures" / "models"
TFLM = REPO.parent / "shared" / "models" / "tflm"
PAIRS = [(TFLM / "hello_world_int8.tflite", TFLM / "micro_speech_quantized.tflite"),
         (TFLM / "micro_speech_quantized.tflite", TFLM / "hello_world_int8.tflite"),  # the other order
         (TFLM / "keyword_scrambled_8bit.tflite", TFLM / "micro_speech_quantized.tflite"),
         (TFLM / "person_detect.tflite", TFLM / "hello_world_int8.tflite"),
         (FIXTURES / "chain.tflite", FIXTURES / "residual.tflite"),
         (FIXTURES / "quantized_int8.tflite", FIXTURES / "mobile_block.tflite"),
         (FIXTURES / "variables.tflite", FIXTURES / "while_loop.tflite"),  # resource variables, then control flow
         (FIXTURES / "if_else.tflite", FIXTURES / "variable_tensor.tflite"),
         (TFLM / "audio_preprocessor_int8.tflite", TFLM / "micro_speech_quantized.tflite"),  # Signal ops, then
         (TFLM / "micro_speech_quantized.tflite", TFLM / "audio_preprocessor_int8.tflite")]  # the other order
runner = CliRunner()


def _ids(pair) -> str:
    return "+".join(p.stem for p in pair)


@pytest.fixture(scope="module")
def harness():
    if not (REPO.parent / "shared" / "oracles" / "tflm" / "prepare.sh").is_file():
        pytest.skip("../shared/oracles/tflm is absent")
    where = subprocess.run(["bash", str(REPO / ".ci" / "build_tflm_shared.sh"), "--print-dir"],
                           capture_output=True, text=True, check=True).stdout.strip()
    exe = tflm_shared.program(Path(where))
    if exe is None:
        pytest.skip(f"the shared-arena harness is not built ({where}; bash .ci/build_tflm_shared.sh builds it)")
    return exe


def _needs(pair) -> None:
    missing = [p for p in pair if not p.is_file()]
    if missing:
        pytest.skip(f"{missing[0]} is absent (../shared/models)")


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_the_shared_figure_is_the_smallest_and_outputs_equal_each_model_alone(harness, pair, tmp_path):
    _needs(pair)
    result = package_shared(pair, tmp_path, report=False, verify=False, target=X86_64_LINUX.name)
    packed = [tmp_path / f"{p}.tflite" for p in result.prefixes]
    models = [read_model(p) for p in packed]
    heads = [r.plan.runtime_arena.head_bytes for r in result.packages]
    n = result.figure.arena  # the DECLARED figure
    assert n % 16 == 0 and result.figure.side == "exact", result.figure.why_inexact
    if not any(op.name in DIFFER_FROM_HOST for m in models for sg in m.subgraphs for op in sg.operators):
        assert n == predict_shared_arena(models, heads).arena  # the host figure too
    shared = tflm_shared.run(harness, packed, n)
    assert shared.fits, shared.said
    below = tflm_shared.run(harness, packed, n - 16)
    assert not below.fits, f"also runs in {n - 16} B"
    for path, outputs in zip(packed, shared.outputs):
        alone = tflm_shared.run(harness, [path], tflm_shared.ARENA_MAX)
        assert alone.fits and outputs and alone.outputs[0] == outputs, path.name
    # More than either model alone, less than the two side by side in arenas of their own.
    alone = [predict_whole_arena(m, X86_64_LINUX, head=h).arena for m, h in zip(models, heads)]
    assert max(alone) <= n < sum(alone)


def test_package_runs_the_shared_arena_and_calls_it_exact(harness, tmp_path, monkeypatch):
    pair = PAIRS[4]  # no FULLY_CONNECTED: the build here runs the host figure itself
    monkeypatch.setenv(tflm_shared.ENV, str(harness.parent))
    r = runner.invoke(app, ["package", *map(str, pair), "-o", str(tmp_path), "--no-report", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    shared = doc["shared_arena"]
    assert shared["bound"] == "exact" and shared["not_run"] == ""
    assert "not in 16 B less" in doc["notes"][0] and "the same as alone" in doc["notes"][0]
    assert [m["source"] for m in doc["models"]] == [p.name for p in pair]
    header = (tmp_path / "shared_arena.h").read_text()
    assert f"#define SHARED_TENSOR_ARENA_BYTES {shared['arena_bytes']}\n" in header
    assert "#define SHARED_ARENA_EXACT 1\n" in header


def test_with_fully_connected_the_host_figure_is_not_called_exact_but_the_run_is_said(harness, tmp_path,
                                                                                       monkeypatch):
    pair = PAIRS[0]
    _needs(pair)
    monkeypatch.setenv(tflm_shared.ENV, str(harness.parent))
    result = package_shared(pair, tmp_path, report=False, verify=True)
    assert result.standing.bound == "unknown"
    assert "FULLY_CONNECTED" in result.standing.reason and "x86_64-linux" in result.standing.reason
    assert "not in 16 B less" in result.notes[0] and "x86_64-linux" in result.notes[0]
    from packager.text.shared_summary import shared_lines
    assert len(shared_lines(result)[0]) < 200  # the summary's first line says it, shortly
    resolver = (tmp_path / "shared_op_resolver.h").read_text()
    for name in ("AddFullyConnected", "AddDepthwiseConv2D", "AddSoftmax", "AddReshape"):  # both models' operators
        assert f"resolver.{name}()" in resolver


@pytest.mark.parametrize("pair", [PAIRS[0], PAIRS[8]], ids=_ids)
def test_on_x86_64_linux_a_fully_connected_pair_is_run_and_exact(harness, pair, tmp_path, monkeypatch):
    """The target whose build the harness is: `package A B --target x86_64-linux` runs the declared
    figure at package time and calls it exact, FULLY_CONNECTED and the Signal ops included."""
    _needs(pair)
    monkeypatch.setenv(tflm_shared.ENV, str(harness.parent))
    r = runner.invoke(app, ["package", *map(str, pair), "-o", str(tmp_path), "--no-report", "--json",
                            "--target", "x86_64-linux"])
    assert r.exit_code == 0, r.output
    shared = json.loads(r.output)["shared_arena"]
    assert shared["target"] == "x86_64-linux" and shared["bound"] == "exact" and shared["not_run"] == ""
    assert "#define SHARED_ARENA_EXACT 1\n" in (tmp_path / "shared_arena.h").read_text()


def test_package_refuses_a_shared_figure_the_build_does_not_run_in(harness, tmp_path, monkeypatch):
    from dataclasses import replace
    from packager.package import shared_arena
    from packager.package.verify import VerifyError
    monkeypatch.setenv(tflm_shared.ENV, str(harness.parent))
    real = shared_arena.predict_shared_arena
    monkeypatch.setattr(shared_arena, "predict_shared_arena",
                        lambda models, heads, target: replace(f := real(models, heads, target), arena=f.arena - 16))
    with pytest.raises(VerifyError, match="do not run in .* sharing one arena"):
        package_shared(PAIRS[4], tmp_path, report=False, verify=True, target=X86_64_LINUX.name)
    assert not (tmp_path / "shared_arena.h").exists()


def test_without_the_build_the_figure_is_not_called_exact(tmp_path, monkeypatch):
    monkeypatch.setenv(tflm_shared.ENV, str(tmp_path / "nowhere"))
    pair = (FIXTURES / "chain.tflite", FIXTURES / "residual.tflite")
    result = package_shared(pair, tmp_path / "out", report=False, verify=True)
    assert result.standing.bound == "unknown" and "build_tflm_shared.sh" in result.standing.reason
    assert "not run sharing one arena" in result.notes[0]


def test_the_tails_stack_and_the_largest_plan_is_the_head():
    a, b = read_model(FIXTURES / "chain.tflite"), read_model(FIXTURES / "residual.tflite")
    fig = predict_shared_arena([a, b], [100, 400])
    assert fig.head == 400
    assert fig.tails[0] == predict_whole_arena(a, head=100).tail  # the first: as alone, allocator included
    assert fig.tails[1] < predict_whole_arena(b, head=400).tail  # no second allocator
    assert fig.tail == sum(fig.tails)


def test_a_rerun_replaces_its_own_shared_files_and_refuses_a_users(tmp_path):
    pair = [str(FIXTURES / "chain.tflite"), str(FIXTURES / "residual.tflite")]
    args = ["package", *pair, "-o", str(tmp_path), "--no-report", "--no-verify", "--name", "both"]
    assert runner.invoke(app, args).exit_code == 0
    assert runner.invoke(app, args).exit_code == 0  # its own files: replaced
    (tmp_path / "both_arena.h").write_text("mine\n")
    r = runner.invoke(app, args)
    assert r.exit_code == 2 and "not written by this tool" in r.output
    assert (tmp_path / "both_arena.h").read_text() == "mine\n"


def test_bad_uses_are_one_line_errors(tmp_path):
    chain = str(FIXTURES / "chain.tflite")
    for extra, said in ((["-s", "tflite"], "TFLite Micro only"), (["--dim", "x=1..2"], "--dim applies to one model"),
                        (["--name", "chain"], "also a model's prefix")):
        r = runner.invoke(app, ["package", chain, str(FIXTURES / "residual.tflite"), "-o", str(tmp_path), *extra])
        assert r.exit_code == 2 and said in r.output and "Traceback" not in r.output, r.output
    r = runner.invoke(app, ["package", chain, chain, "-o", str(tmp_path)])
    assert r.exit_code == 2 and "two models would be packaged as 'chain'" in r.output
    r = runner.invoke(app, ["package", chain, str(FIXTURES / "residual.tflite"), "-o", str(tmp_path),
                            "--no-verify", "--budget", "64"])
    assert r.exit_code == 3 and "over the budget" in r.output
    assert not any(tmp_path.iterdir())  # nothing written when over budget


def test_the_headers_set_up_code_compiles_and_runs_the_models_in_the_declared_arena(harness, tmp_path):
    """A firmware's main, made of the lines <name>_arena.h gives (with the packaged model arrays and the
    shared op resolver), built with TFLite Micro's library: every model sets up in the declared arena and runs."""
    pair = PAIRS[2]
    _needs(pair)
    lib = Path(subprocess.run(["bash", str(REPO / ".ci" / "build_tflm_shared.sh"), "--print-lib"],
                              capture_output=True, text=True, check=True).stdout.strip())
    result = package_shared(pair, tmp_path, report=False, verify=False)
    header = (tmp_path / "shared_arena.h").read_text()
    code = [line[len(" *     "):] for line in header.splitlines() if line.startswith(" *     ")]
    assert code and any("MicroAllocator::Create" in line for line in code)
    outside = "\n".join(line for line in code if line.endswith("// at file scope"))
    body = "\n".join(f"  {line.replace('return;', 'return 4;')}" for line in code
                     if not line.endswith("// at file scope"))
    runs = "\n".join(f"  if ({p}_interpreter.Invoke() != kTfLiteOk) return 5;" for p in result.prefixes)
    includes = "".join(f'#include "{p}_model.h"\n' for p in result.prefixes)
    (tmp_path / "main.cc").write_text(
        '#include "tensorflow/lite/micro/micro_interpreter.h"\n#include "shared_arena.h"\n'
        f'#include "shared_op_resolver.h"\n{includes}\n{outside}\n\n'
        "int main() {\n" + body + "\n" + runs + "\n  return 0;\n}\n")
    objects = []
    for p in result.prefixes:  # the model arrays are C
        objects.append(str(tmp_path / f"{p}_model.o"))
        subprocess.run(["gcc", "-c", str(tmp_path / f"{p}_model.c"), "-o", objects[-1]], check=True)
    exe = tmp_path / "firmware"
    flags = (lib / "cxxflags.txt").read_text().split()
    build = subprocess.run(["g++", *flags, "-I", str(tmp_path), str(tmp_path / "main.cc"), *objects,
                            str(lib / "build" / "x86_64-comp" / "libtflm.a"), "-Wl,--gc-sections", "-o", str(exe)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    done = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stdout[-2000:])
