"""Each buffer `package --regions` declares is the smallest TFLite Micro works with, on TFLite
Micro itself: the packaged model sets up and runs once with the non-persistent buffer at its figure
and the persistent one ample, and not with 16 B less; the same for the persistent buffer. And the
header's own lines (the two declarations, the allocator, the interpreter) compile, link and run.

The harness is tests/oracle/tflm_regions.cc (a device build's use of MicroAllocator::Create over two
buffers), linked against TFLite Micro's x86-64 library built with compression, the build the `host`
target models (.ci/build_tflm_regions.sh, cached outside the clone; `.ci/run` builds it). Models:
every fixture TFLite Micro runs (the dynamic ones at their stored shapes, as TFLite Micro runs them)
and every ../shared/models/tflm model but the two a host build cannot run (see LEFT_OUT).
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fixtures.catalog import RUNS_IN_TFLM
from packager.package.build import package
from packager.reader import read_model
from tests.conftest import REPO

SHARED_TFLM = REPO.parent / "shared" / "models" / "tflm"
LEFT_OUT = {"person_detect_vela": "its operator runs on the Ethos-U driver, which a host build does not have",
            "audio_preprocessor_int8": "the Signal library's FFT kernels need kissfft, absent from ../shared/oracles"}
MODELS = ([REPO / "fixtures" / "models" / f"{n}.tflite" for n in sorted(RUNS_IN_TFLM)]
          + sorted(p for p in SHARED_TFLM.glob("*.tflite") if p.stem not in LEFT_OUT))
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
    result = package(path, folder, report=False, dims=_stored_dims(path), regions=REGIONS)
    return result.plan.regions, folder / f"{path.stem}.tflite"


def _run(exe: Path, model: Path, persistent: int, non_persistent: int) -> int:
    return subprocess.run([str(exe), str(model), str(persistent), str(non_persistent)], capture_output=True,
                          timeout=120).returncode


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_each_buffer_is_the_smallest_that_works_with_the_other_ample(harness, path, tmp_path_factory):
    (non, per), packed = _packaged(path, tmp_path_factory.mktemp(path.stem))
    assert non.bytes % 16 == 0 and per.bytes % 16 == 0
    tries = [(per.bytes, AMPLE), (per.bytes - 16, AMPLE), (AMPLE, non.bytes), (AMPLE, non.bytes - 16)]
    codes = [_run(harness, packed, p, n) for p, n in tries]
    assert codes == [FITS, DOES_NOT_SET_UP, FITS, DOES_NOT_SET_UP], list(zip(tries, codes))
    assert _run(harness, packed, per.bytes, non.bytes) == FITS  # and both at once


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
