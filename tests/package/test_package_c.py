"""The C header and the model array compile without a warning as C99 and as C++, and a program
that includes them checks the plan from the header's own tables (tests/c/check_plan.c)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from packager.semantics import SEMANTICS
from tests.conftest import REPO
from tests.package.support import file_of, packaged

CHECKER = REPO / "tests" / "c" / "check_plan.c"
WARNINGS = ["-Wall", "-Wextra", "-Wpedantic", "-Werror"]
COMPILERS = {
    "gcc-c99": ["gcc", "-std=c99"],
    "g++-c++11": ["g++", "-std=c++11", "-x", "c++"],
    "g++-c++17": ["g++", "-std=c++17", "-x", "c++"],
}
# One arena with scratch buffers; control flow (three subgraphs in one arena); TFLite's aliases;
# several arenas (ideal, one per subgraph).
CASES = [("mobile_block", "tflm"), ("while_loop", "tflm"), ("inplace_candidates", "tflite"),
         ("if_else", "ideal")]
if "paper" in SEMANTICS:  # byte-aligned offsets
    CASES.append(("branches", "paper"))


def compiler(name: str) -> list[str]:
    command = COMPILERS[name]
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    return command


@pytest.mark.parametrize("compiler_name", sorted(COMPILERS))
@pytest.mark.parametrize("name,semantics", CASES)
def test_header_and_model_array_compile_cleanly_and_check_the_plan(name, semantics, compiler_name, tmp_path):
    cc = compiler(compiler_name)
    result = packaged(name, semantics)
    prefix = file_of(result, "_plan.h").name[: -len("_plan.h")]
    binary = tmp_path / "check"
    folder = file_of(result, "_plan.h").parent
    done = subprocess.run(
        [*cc, *WARNINGS, f"-I{folder}", f"-DPREFIX={prefix.upper()}",
         f'-DPLAN_HEADER="{prefix}_plan.h"', f'-DMODEL_HEADER="{prefix}_model.h"',
         f"-DMODEL_ARRAY={prefix}_model", str(CHECKER), str(folder / f"{prefix}_model.c"),
         "-o", str(binary)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    run = subprocess.run([str(binary)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout
    planned = sum(1 for a in result.plan.arenas for t in a.offsets.tensors if t.kind == "tensor")
    assert run.stdout.startswith(f"{planned} planned tensors"), run.stdout


def test_the_header_alone_is_quiet_when_nothing_of_it_is_used(tmp_path):
    cc = compiler("gcc-c99")
    header = file_of(packaged("if_else"), "_plan.h")
    source = tmp_path / "only_include.c"
    source.write_text(f'#include "{header.name}"\nint main(void) {{ return 0; }}\n')
    for command in (cc, compiler("g++-c++11")):
        done = subprocess.run([*command, *WARNINGS, f"-I{header.parent}", "-c", str(source),
                               "-o", str(tmp_path / "only_include.o")], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_a_broken_header_fails_the_c_check(tmp_path):
    """The C check is not vacuous: move one tensor onto another alive with it."""
    cc = compiler("gcc-c99")
    result = packaged("mobile_block")
    folder = file_of(result, "_plan.h").parent
    for f in folder.iterdir():
        shutil.copy(f, tmp_path / f.name)
    plan = result.plan.arenas[0]
    tensors = [t for t in plan.offsets.tensors if t.kind == "tensor"]
    a, b = next((a, b) for a in tensors for b in tensors if a.offset != b.offset and a.size and b.size
                and not (a.last_op < b.first_op or b.last_op < a.first_op))
    header = tmp_path / "mobile_block_plan.h"
    lines = header.read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{b.offset}, /* {b.index} sg"))
    lines[row] = lines[row].replace(f"{b.offset},", f"{a.offset},", 1)
    header.write_text("\n".join(lines) + "\n")
    done = subprocess.run([*cc, *WARNINGS, f"-I{tmp_path}", "-DPREFIX=MOBILE_BLOCK",
                           '-DPLAN_HEADER="mobile_block_plan.h"', '-DMODEL_HEADER="mobile_block_model.h"',
                           "-DMODEL_ARRAY=mobile_block_model", str(CHECKER),
                           str(tmp_path / "mobile_block_model.c"), "-o", str(tmp_path / "check")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    run = subprocess.run([str(tmp_path / "check")], capture_output=True, text=True)
    assert run.returncode == 1 and "overlap" in run.stdout, run.stdout
