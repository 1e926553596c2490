"""The two-buffer rule `package --regions` declares by is TFLite Micro's own, byte for byte: the
packaged model sets up and runs once with the non-persistent buffer at the declared figure and the
persistent one ample, and not with 16 B less; the same for the persistent buffer. And the header's
own lines (the two declarations, the allocator, the interpreter) compile, link and run.

The harness is tests/oracle/tflm_regions.cc (a device build's use of MicroAllocator::Create over two
buffers), linked against TFLite Micro's x86-64 library built from ../shared/oracles/tflm with
compression (.ci/build_tflm_regions.sh, cached outside the clone; `.ci/run` builds it): the
`x86_64-linux` target's build, so the figures tried are those `package --target x86_64-linux`
DECLARES. (The `host` target, the wheel, lays out TfLiteFullyConnectedParams larger, 32 B aligned 8
against 16 B aligned 4: its figures with FULLY_CONNECTED are said to be modelled.) Models:
every fixture TFLite Micro runs (the dynamic ones at their stored shapes, as TFLite Micro runs them),
the Signal kernel fixtures (the library holds the Signal ops, kissfft downloaded by .ci/fetch_kissfft.sh)
and every ../shared/models/tflm model but the Vela one a host build cannot run (see LEFT_OUT).
`package` itself runs the same check before it writes (package/regions_verify.py).
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fixtures.catalog import RUNS_IN_TFLM
from fixtures.tflm_kernels import KERNEL_BUILDERS
from packager.kernels.tflm_arena import HOST, X86_64_LINUX
from packager.kernels.tflm_regions import predict_split
from packager.package.build import package
from packager.reader import read_model
from tests.conftest import REPO

# The kernel fixtures running the Signal library's ops (written when a test needs them), by name.
SIGNAL_FIXTURES = sorted(n for n in KERNEL_BUILDERS if n.startswith("signal_"))
SHARED_TFLM = REPO.parent / "shared" / "models" / "tflm"
LEFT_OUT = {"person_detect_vela": "its operator runs on the Ethos-U driver, which a host build does not have"}
MODELS = ([REPO / "fixtures" / "models" / f"{n}.tflite" for n in sorted(RUNS_IN_TFLM)]
          + sorted(p for p in SHARED_TFLM.glob("*.tflite") if p.stem not in LEFT_OUT)
          + SIGNAL_FIXTURES)
AMPLE = 8 << 20  # bytes: more than any model here needs in either buffer
REGIONS = f"non-persistent=.dtcm:{AMPLE},persistent=.sram:{AMPLE}"
FITS, DOES_NOT_SET_UP = 0, 4


def _build(what: str) -> Path:
    """The folder .ci/build_tflm_<what>.sh builds into (--print-dir), or a skip with the reason."""
    if not (REPO.parent / "shared" / "oracles" / "tflm" / "prepare.sh").is_file():
        pytest.skip("../shared/oracles/tflm is absent")
    if shutil.which("g++") is None:
        pytest.skip("no g++ on this machine")
    script = REPO / ".ci" / f"build_tflm_{what}.sh"
    return Path(subprocess.run(["bash", str(script), "--print-dir"], capture_output=True, text=True,
                               check=True).stdout.strip())


@pytest.fixture(scope="module")
def harness() -> Path:
    exe = _build("regions") / "tflm_regions"
    if not exe.is_file():
        pytest.skip(f"tflm_regions is not built ({exe}; bash .ci/build_tflm_regions.sh builds it)")
    return exe


def _stored_dims(path: Path) -> list[str]:
    """--dim binding each free input dimension to its stored size: the shape TFLite Micro runs."""
    sg = read_model(path).subgraphs[0]
    return [f"{sg.tensors[i].name}_{axis}={sg.tensors[i].shape[axis]}" for i in sg.inputs
            for axis, d in enumerate(sg.tensors[i].shape_signature or ()) if d < 0 and axis > 0]


@functools.cache
def _packaged(path: Path, folder: Path):
    result = package(path, folder, report=False, dims=_stored_dims(path), regions=REGIONS, target=X86_64_LINUX.name)
    return result.plan, folder / f"{path.stem}.tflite"


def _fully_connected(model) -> int:
    return sum(op.name == "FULLY_CONNECTED" for sg in model.subgraphs for op in sg.operators)


def _run(exe: Path, model: Path, persistent: int, non_persistent: int) -> int:
    return subprocess.run([str(exe), str(model), str(persistent), str(non_persistent)], capture_output=True,
                          timeout=120).returncode


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem if isinstance(p, Path) else p)
def test_each_buffer_is_the_smallest_that_works_with_the_other_ample(harness, path, tmp_path_factory):
    if not isinstance(path, Path):  # a Signal kernel fixture, by name
        name, path = path, tmp_path_factory.mktemp("fixtures") / f"{path}.tflite"
        path.write_bytes(KERNEL_BUILDERS[name]().build())
    plan, packed = _packaged(path, tmp_path_factory.mktemp(path.stem))
    non, per = plan.regions
    model, head = read_model(packed), plan.runtime_arena.head_bytes
    declared = predict_split(model, X86_64_LINUX, head=head)
    assert (non.bytes, per.bytes) == (declared.non_persistent, declared.persistent)  # the rule, as declared
    assert per.bytes % 16 == 0 and non.bytes % 16 == 0 and not declared.unmodelled
    p, n = per.bytes, non.bytes
    tries = [(p, AMPLE), (p - 16, AMPLE), (AMPLE, n), (AMPLE, n - 16)]
    codes = [_run(harness, packed, *sizes) for sizes in tries]
    # 16 B less does not work: set-up fails, or (trained_lstm_int8's non-persistent buffer) TFLite
    # Micro is killed by a signal instead of reporting it
    works = [code == FITS if code in (FITS, DOES_NOT_SET_UP) or code < 0 else f"exit {code}" for code in codes]
    assert works == [True, False, True, False], list(zip(tries, codes))
    assert _run(harness, packed, p, n) == FITS  # and both at once
    # The wheel's figures differ in one place: its larger TfLiteFullyConnectedParams in the tail.
    wheel = predict_split(model, HOST, head=head)
    assert wheel.non_persistent == n and (wheel.persistent > p if _fully_connected(model) else wheel.persistent == p)


@pytest.mark.parametrize("name", ["mobile_block", "variables", "quantized_int8"])
def test_package_runs_the_two_buffers_and_calls_them_exact(harness, name, tmp_path, monkeypatch):
    """`package --target x86_64-linux --regions ... ` (verify on) runs the packaged model on the harness
    at the declared figures and 16 B less in each: exact, said in a note, the header and the JSON."""
    from packager.runtimes import tflm_regions
    monkeypatch.setenv(tflm_regions.ENV, str(harness.parent))
    result = package(REPO / "fixtures" / "models" / f"{name}.tflite", tmp_path, report=False, regions=REGIONS,
                     target=X86_64_LINUX.name, verify=True)
    assert any(n.startswith("two buffers verified on TFLite Micro built for x86_64-linux") for n in result.notes), \
        result.notes
    assert {r.bound for r in result.plan.regions} == {"exact"}
    assert "runs it with both buffers as declared" in result.plan.regions[0].reason
    assert '_REGIONS_BOUND "exact"' in (tmp_path / f"{name}_plan.h").read_text()


def test_package_refuses_buffers_the_build_does_not_run_in(harness, tmp_path, monkeypatch):
    """A persistent figure 16 B short (the rule made wrong): refused, one line, nothing written."""
    from dataclasses import replace
    from packager.package import regions as regions_module
    from packager.package.verify import VerifyError
    from packager.runtimes import tflm_regions
    monkeypatch.setenv(tflm_regions.ENV, str(harness.parent))
    real = regions_module.predict_split
    monkeypatch.setattr(regions_module, "predict_split",
                        lambda model, target, head=None: replace(s := real(model, target, head),
                                                                 persistent=s.persistent - 16))
    with pytest.raises(VerifyError, match="does not run with its declared buffers"):
        package(REPO / "fixtures" / "models" / "chain.tflite", tmp_path / "o", report=False, regions=REGIONS,
                target=X86_64_LINUX.name, verify=True)
    assert not (tmp_path / "o").exists()


def test_the_host_figure_with_fully_connected_says_it_is_modelled_in_one_short_line(tmp_path):
    result = package(REPO / "fixtures" / "models" / "mobile_block.tflite", tmp_path, report=False, regions=REGIONS,
                     verify=True)  # the whole arena exact on the wheel
    reason = result.plan.regions[0].reason
    assert result.plan.regions[0].bound == "unknown" and "FULLY_CONNECTED" in reason and len(reason) < 100


@pytest.mark.parametrize("name", ["mobile_block", "variables"])
def test_the_headers_lines_compile_link_and_run_in_their_sections(harness, name, tmp_path):
    """The program a firmware writes from the header: its declarations at file scope, its lines
    creating the allocator and the interpreter (with resource variables for VAR_HANDLE), the model
    array and the op resolver package wrote beside it."""
    built = harness.parent
    folder = tmp_path / "pkg"
    package(REPO / "fixtures" / "models" / f"{name}.tflite", folder, report=False,
            regions="non-persistent=.dtcm:1M,persistent=.sram_bss:64K")
    header = (folder / f"{name}_plan.h").read_text()
    comment = header[header.index("TFLite Micro's memory in two buffers"):]
    comment = comment[:comment.index("*/")]
    shown = [line[len(" *     "):] for line in comment.splitlines() if line.startswith(" *     ")]
    at_file_scope = [line for line in shown if "_DECLARE_" in line]
    body = [line for line in shown if line not in at_file_scope]
    assert len(at_file_scope) == 2 and any("MicroAllocator::Create(" in line for line in body)
    (folder / "main.cc").write_text("\n".join([
        '#include "tensorflow/lite/micro/micro_allocator.h"',
        '#include "tensorflow/lite/micro/micro_interpreter.h"',
        '#include "tensorflow/lite/micro/micro_resource_variable.h"',
        f'#include "{name}_plan.h"', f'#include "{name}_model.h"', f'#include "{name}_op_resolver.h"', "",
        *at_file_scope, "", "int main() {", f"  {name}_op_resolver resolver;",
        f"  if ({name}_register_ops(resolver) != kTfLiteOk) return 3;", *body,
        "  if (interpreter.AllocateTensors() != kTfLiteOk) return 4;",
        "  return interpreter.Invoke() == kTfLiteOk ? 0 : 5;", "}", ""]))
    flags = (built / "cxxflags.txt").read_text().split()  # the library's own (USE_TFLM_COMPRESSION among them)
    exe = folder / "firmware"
    build = subprocess.run(["gcc", "-c", "-O1", str(folder / f"{name}_model.c"), "-o", str(folder / "model.o")],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    build = subprocess.run(["g++", *flags, "-I", str(folder), str(folder / "main.cc"), str(folder / "model.o"),
                            str(built / "libtflm.a"), "-o", str(exe)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    assert subprocess.run([str(exe)], timeout=60).returncode == 0
    sections = subprocess.run(["readelf", "-SW", str(exe)], capture_output=True, text=True).stdout
    sizes = {m.group(1): int(m.group(2), 16) for m in re.finditer(r"\] (\.\w+)\s+\w+\s+\w+\s+\w+\s+(\w+)", sections)}
    want = {r: int(re.search(rf"#define {name.upper()}_{r}_BYTES (\d+)", header).group(1))
            for r in ("NON_PERSISTENT", "PERSISTENT")}
    assert sizes[".dtcm"] >= want["NON_PERSISTENT"] and sizes[".sram_bss"] >= want["PERSISTENT"], sizes
