"""The op resolver `package` writes is exactly sufficient, on TFLite Micro itself: every model TFLite Micro
runs sets up with it, and with any one of its registrations removed, or one place fewer (N - 1), it does not.

One program (tests/c/resolver_check.h) is compiled with every model's resolver and every variant of it,
and linked against TFLite Micro's x86-64 library as the shared recipe builds it (.ci/build_tflm_x86_64.sh,
cached outside the clone; `.ci/run` builds it, the Signal library's ops included). Models: every fixture
TFLite Micro runs, the Signal kernel fixtures and every ../shared/models/tflm model but the Vela one (its
one operator runs on the Ethos-U driver, not in a host build).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fixtures.catalog import RUNS_IN_TFLM
from fixtures.tflm_kernels import KERNEL_BUILDERS
from packager.package.op_resolver import render
from packager.reader import read_model
from tests.conftest import REPO

# The kernel fixtures running the Signal library's ops (written when a test needs them), by name.
SIGNAL_FIXTURES = sorted(n for n in KERNEL_BUILDERS if n.startswith("signal_"))
SHARED_TFLM = REPO.parent / "shared" / "models" / "tflm"
LEFT_OUT = {"person_detect_vela": "its operator runs on the Ethos-U driver, which a host build does not have"}
MODELS = ([REPO / "fixtures" / "models" / f"{n}.tflite" for n in sorted(RUNS_IN_TFLM)]
          + sorted(p for p in SHARED_TFLM.glob("*.tflite") if p.stem not in LEFT_OUT)
          + SIGNAL_FIXTURES)
ADD = re.compile(r"^  if \(resolver\.Add")
SET_UP, REGISTRATION_FAILED, ALLOCATE_FAILED = 0, 3, 4


def _library():
    """(the folder of TFLite Micro's x86-64 library build, the compile flags), or a reason to skip."""
    if not (REPO.parent / "shared" / "oracles" / "tflm" / "prepare.sh").is_file():
        return None, "../shared/oracles/tflm is absent"
    if shutil.which("g++") is None:
        return None, "no g++ on this machine"
    where = subprocess.run(["bash", str(REPO / ".ci" / "build_tflm_x86_64.sh"), "--print-dir"],
                           capture_output=True, text=True, check=True).stdout.strip()
    lib = Path(where)
    if not (lib / "build" / "x86_64-comp" / "libtflm.a").is_file() or not (lib / "cxxflags.txt").is_file():
        return None, f"TFLite Micro's x86-64 library is not built ({lib}; bash .ci/build_tflm_x86_64.sh builds it)"
    return lib, (lib / "cxxflags.txt").read_text().split()


def _variants(path, i: int) -> list[tuple[str, str, int]]:
    """(prefix, header text, the exit code expected) of the resolver as written and of each variant."""
    model = read_model(path)
    prefix = f"case{i}_"  # (no prefix is the start of another)
    text = render(model, prefix, path.name).decode("ascii")

    def renamed(text: str, new: str) -> str:  # names and include guard
        return text.replace(prefix, new).replace(prefix.upper(), new.upper())

    lines = text.splitlines(keepends=True)
    adds = [k for k, line in enumerate(lines) if ADD.match(line)]
    out = [(prefix, text, SET_UP)]
    for j, k in enumerate(adds):  # one registration removed: the model must not set up
        out.append((f"{prefix}without{j}_", renamed("".join(lines[:k] + lines[k + 1:]), f"{prefix}without{j}_"),
                    ALLOCATE_FAILED))
    count = len(adds)  # N - 1: the last registration finds no place
    fewer = text.replace(f"#define {prefix.upper()}_OP_COUNT {count}\n", f"#define {prefix.upper()}_OP_COUNT {count - 1}\n")
    assert fewer != text
    out.append((f"{prefix}fewer_", renamed(fewer, f"{prefix}fewer_"), REGISTRATION_FAILED))
    return out


def _file(entry, folder: Path) -> Path:
    """A model's file: the path itself, or a Signal kernel fixture (a name) written into folder."""
    if isinstance(entry, Path):
        return entry
    path = folder / f"{entry}.tflite"
    path.write_bytes(KERNEL_BUILDERS[entry]().build())
    return path


def _id(entry) -> str:
    return entry.stem if isinstance(entry, Path) else entry


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    lib, flags = _library()
    if lib is None:
        pytest.skip(flags)
    folder = tmp_path_factory.mktemp("resolvers")
    cases, entries = [], []
    for i, entry in enumerate(MODELS):
        path = _file(entry, folder)
        for prefix, text, expected in _variants(path, i):
            (folder / f"{prefix}_op_resolver.h").write_text(text)
            cases.append((entry, path, prefix, expected, len(entries)))
            entries.append(f"  [](const char* p) {{ return resolver_check::SetUp<{prefix}_op_resolver>(p, "
                           f"[]({prefix}_op_resolver& r) {{ return {prefix}_register_ops(r); }}); }},")
    includes = "".join(f'#include "{c[2]}_op_resolver.h"\n' for c in cases)
    (folder / "main.cc").write_text(
        '#include "resolver_check.h"\n' + includes + "\nstatic int (*const kCases[])(const char*) = {\n"
        + "\n".join(entries) + "\n};\n\nint main(int argc, char** argv) {\n"
        "  if (argc != 3) return 2;\n  return kCases[atoi(argv[2])](argv[1]);\n}\n")
    exe = folder / "resolver_check"
    build = subprocess.run(["g++", *flags, "-I", str(folder), "-I", str(REPO / "tests" / "c"), str(folder / "main.cc"),
                            str(lib / "build" / "x86_64-comp" / "libtflm.a"), "-Wl,--gc-sections", "-o", str(exe)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-4000:]
    return exe, cases


@pytest.mark.parametrize("entry", MODELS, ids=_id)
def test_the_model_sets_up_with_its_resolver_and_not_with_a_line_less(program, entry):
    exe, cases = program
    mine = [c for c in cases if c[0] == entry]
    assert len(mine) >= 3  # the resolver, at least one registration removed, one place fewer
    for _, path, prefix, expected, index in mine:
        run = subprocess.run([str(exe), str(path), str(index)], capture_output=True, text=True, timeout=120)
        assert run.returncode == expected, (prefix, run.returncode, run.stdout[-2000:], run.stderr[-2000:])
