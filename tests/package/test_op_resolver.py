"""`<prefix>_op_resolver.h`: TFLite Micro's op resolver with exactly the model's operators.

Checked statically on every fixture and every ../shared/models/tflm model (every operator the model
runs registered once, N the number of registrations), compiled against TFLite Micro's own headers
(../shared/oracles/tflm/src), and the method table held to TFLite Micro's micro_mutable_op_resolver.h.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from packager.cli import app
from packager.kernels.tflm_op_resolver import BUILTIN_ADD, CUSTOM_ADD
from packager.package.op_resolver import render
from packager.reader import read_model
from tests.conftest import REPO

FIXTURES = sorted((REPO / "fixtures" / "models").rglob("*.tflite"))
SHARED_TFLM = REPO.parent / "shared" / "models" / "tflm"
TFLM_SRC = REPO.parent / "shared" / "oracles" / "tflm" / "src"
TFLM_HEADER = TFLM_SRC / "tflite-micro" / "tensorflow" / "lite" / "micro" / "micro_mutable_op_resolver.h"
MODELS = FIXTURES + (sorted(SHARED_TFLM.glob("*.tflite")) if SHARED_TFLM.is_dir() else [])
ADD_LINE = re.compile(r"^  if \(resolver\.(Add\w+)\((\"[^\"]*\")?")


def _prefix(path) -> str:
    return re.sub(r"\W", "_", path.stem)


def _header(path) -> str:
    return render(read_model(path), _prefix(path), path.name).decode("ascii")


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_every_operator_the_model_runs_is_registered_once_and_n_counts_them(path):
    model = read_model(path)
    ran = {(op.name, op.opcode.is_custom) for sg in model.subgraphs for op in sg.operators}
    text = _header(path)
    calls = [ADD_LINE.match(line).groups() for line in text.splitlines() if ADD_LINE.match(line)]
    registered = []
    for method, custom_name in calls:
        if method == "AddCustom":  # a custom op of the user's: named as the model names it
            registered.append((custom_name.strip('"'), True))
        else:
            table = {**{v: (k, False) for k, v in BUILTIN_ADD.items()}, **{v: (k, True) for k, v in CUSTOM_ADD.items()}}
            registered.append(table[method])
    runnable = {(n, c) for n, c in ran if c or n in BUILTIN_ADD}
    assert len(registered) == len(set(registered)), "an operator registered twice"
    assert set(registered) == runnable
    count = int(re.search(rf"#define {_prefix(path).upper()}_OP_COUNT (\d+)", text).group(1))
    assert count == len(registered)
    for name, _ in ran - runnable:  # a builtin TFLite Micro has no kernel for: named, not registered
        assert f"NOT REGISTERED: builtin {name}" in text


def test_a_custom_op_is_a_parameter_the_firmware_must_pass():
    text = _header(REPO / "fixtures" / "models" / "custom_op.tflite")
    assert "const TFLMRegistration* register_mycustomop)" in text
    assert 'resolver.AddCustom("MyCustomOp", register_mycustomop)' in text
    assert "Custom op MyCustomOp: TFLite Micro has no kernel for it; pass your kernel's registration" in text


def test_package_writes_the_resolver_and_names_a_builtin_tflite_micro_cannot_run(tmp_path):
    r = CliRunner().invoke(app, ["package", str(REPO / "fixtures" / "models" / "nms.tflite"), "-o",
                                 str(tmp_path), "--no-verify", "--no-report"])
    assert r.exit_code == 0, r.output
    assert ("note: TFLite Micro has no kernel for builtin NON_MAX_SUPPRESSION_V5: the model will not set up "
            "in TFLite Micro (the op resolver leaves it out)") in r.output.splitlines()
    adds = [line for line in (tmp_path / "nms_op_resolver.h").read_text().splitlines() if "resolver.Add" in line]
    assert len(adds) == 3 and not any("NON_MAX_SUPPRESSION" in line for line in adds)  # only what it can run
    r = CliRunner().invoke(app, ["package", str(REPO / "fixtures" / "models" / "chain.tflite"), "-o",
                                 str(tmp_path / "tflite"), "-s", "tflite", "--no-report"])
    assert r.exit_code == 0 and not (tmp_path / "tflite" / "chain_op_resolver.h").exists()  # TFLite Micro's only


@pytest.mark.skipif(not TFLM_HEADER.is_file(), reason=f"{TFLM_HEADER} is absent (../shared/oracles is absent)")
def test_the_method_table_is_tflite_micros_own():
    text = TFLM_HEADER.read_text()
    builtin, custom = {}, {}
    for m in re.finditer(r"TfLiteStatus (Add\w+)\((.*?)\n  \}", text, re.S):
        b = re.search(r"AddBuiltin\(\s*BuiltinOperator_(\w+)", m.group(2))
        c = re.search(r'AddCustom\(\s*"([^"]+)"', m.group(2))
        if b:
            builtin[b.group(1)] = m.group(1)
        elif c:
            custom[c.group(1)] = m.group(1)
    assert builtin == BUILTIN_ADD
    assert custom == {k: v for k, v in CUSTOM_ADD.items() if v != "AddEthosU"}
    assert "TfLiteStatus AddEthosU()" in text  # its custom code comes from the Ethos-U build


@pytest.mark.skipif(not TFLM_HEADER.is_file(), reason=f"{TFLM_HEADER} is absent (../shared/oracles is absent)")
@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ on this machine")
def test_every_resolver_compiles_against_tflite_micros_headers(tmp_path):
    """One translation unit includes every model's resolver and calls it (TFLite Micro's own
    headers as system headers, so only the generated code must be warning-free)."""
    calls = []
    for path in MODELS:
        (tmp_path / f"{_prefix(path)}_op_resolver.h").write_text(_header(path))
        params = len(re.findall(r"const TFLMRegistration\* \w+", _header(path)))
        calls.append(f'#include "{_prefix(path)}_op_resolver.h"\n'
                     f"static int check_{_prefix(path)}() {{ static {_prefix(path)}_op_resolver r; "
                     f"return {_prefix(path)}_register_ops(r{', nullptr' * params}); }}")
    main = "\n".join(calls) + "\nint main() {\n  return " + " + ".join(f"check_{_prefix(p)}()" for p in MODELS) + ";\n}\n"
    (tmp_path / "all.cc").write_text(main)
    result = subprocess.run(
        ["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-DTF_LITE_STATIC_MEMORY",
         "-I", str(tmp_path), "-isystem", str(TFLM_SRC / "tflite-micro"),
         "-isystem", str(TFLM_SRC / "flatbuffers" / "include"), "-isystem", "/usr/include/gemmlowp",
         "-isystem", str(TFLM_SRC / "ruy"), str(tmp_path / "all.cc")],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    # and the compiler does check: a method TFLite Micro does not have is an error
    bad = tmp_path / "bad.cc"
    bad.write_text(f'#include "chain_op_resolver.h"\nint main() {{ chain_op_resolver r; return r.AddNoSuchOp(); }}\n')
    (tmp_path / "chain_op_resolver.h").write_text(_header(REPO / "fixtures" / "models" / "chain.tflite"))
    result = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-I", str(tmp_path),
                             "-isystem", str(TFLM_SRC / "tflite-micro"), "-isystem", str(TFLM_SRC / "flatbuffers" / "include"),
                             "-isystem", "/usr/include/gemmlowp", "-isystem", str(TFLM_SRC / "ruy"), str(bad)],
                            capture_output=True, text=True)
    assert result.returncode != 0 and "AddNoSuchOp" in result.stderr
