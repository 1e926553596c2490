"""The cortex-m target (32-bit, reference kernels, plain MicroInterpreter, compression off) is
modelled, not measured in CI: its figures are checked against the smallest arenas measured on a
32-bit ARM build of TFLite Micro (the reference notes' table of 32-bit measurements). No runtime
is needed: the figures are the prediction's."""

from __future__ import annotations

from pathlib import Path

import pytest

from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.kernels.tflm_arena import ARMHF_LINUX
from packager.reader import read_model
from tests.conftest import SHARED_MODELS

# Smallest arenas (multiples of 16, 16 less fails) measured on the 32-bit ARM build.
MEASURED_32_BIT = {
    "person_detect": 82_304,
    "micro_speech_quantized": 6_816,
    "hello_world_int8": 1_104,
    "trained_lstm_int8": 3_232,
    "keyword_scrambled_8bit": 10_480,
}


@pytest.mark.parametrize("name", sorted(MEASURED_32_BIT))
def test_cortex_m_figure_matches_the_32_bit_measurement(name):
    path = SHARED_MODELS / "tflm" / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{path.name} is not in the shared models")
    prediction = predict_whole_arena(read_model(path), ARMHF_LINUX)
    assert prediction.arena == MEASURED_32_BIT[name]
    assert not prediction.measured_target and prediction.rule.startswith("modelled")


# Smallest arenas of kernel fixtures measured on the same 32-bit ARM Linux build (its prebuilt probe
# in ../shared/oracles/tflm, a plain interpreter; 16 B less fails). small_scratch: ADD_N's scratch at
# 4 B an input pointer; dims_copies: EMBEDDING_LOOKUP's dims before its OpData.
MEASURED_32_BIT_FIXTURES = {
    "lstm_float": 2_080, "transpose_conv_int8": 2_512, "opdata_kernels": 2_256, "device_kernels": 3_136,
    "setup_transpose_conv": 1_360, "setup_concatenation": 704, "reductions": 1_584, "svdf_int8": 864,
    "small_scratch": 1_632, "dims_copies": 1_744,
}


@pytest.mark.parametrize("name", sorted(MEASURED_32_BIT_FIXTURES))
def test_armhf_linux_figure_matches_the_32_bit_measurement_of_a_fixture(name):
    from fixtures.tflm_kernels import KERNEL_BUILDERS
    from packager.reader import parse_model
    model = parse_model(KERNEL_BUILDERS[name]().build())
    prediction = predict_whole_arena(model, ARMHF_LINUX)
    assert prediction.exact and prediction.arena == MEASURED_32_BIT_FIXTURES[name]


# Smallest arenas of catalog models measured on the same prebuilt 32-bit ARM Linux probe: the first
# CONV_2D's OpData (56 B without compression) sets where the tail's 16-byte rounding falls.
MEASURED_32_BIT_CATALOG = {"chain": 17_728, "branches": 42_608, "dynamic_batch": 3_760,
                           "quantized_int8": 3_520, "mobile_block": 172_256, "residual": 35_136}


@pytest.mark.parametrize("name", sorted(MEASURED_32_BIT_CATALOG))
def test_armhf_linux_figure_matches_the_32_bit_measurement_of_a_catalog_model(name):
    from tests.conftest import REPO
    model = read_model(REPO / "fixtures" / "models" / f"{name}.tflite")
    assert predict_whole_arena(model, ARMHF_LINUX).arena == MEASURED_32_BIT_CATALOG[name]


# Smallest arenas measured on TFLite Micro built for a Cortex-M4 as its own Cortex-M targets build it
# (bare metal, arm-none-eabi, short enums), reference kernels (../shared/docs/CMSIS_NN_ARENA.md).
MEASURED_M4_REFERENCE = {
    "hello_world_int8": 1_072,
    "person_detect": 82_304,
    "micro_speech_quantized": 6_800,
    "keyword_scrambled_8bit": 10_400,
    "trained_lstm_int8": 3_232,
    "mobilenet_v2_quantized_1x3x224x224": 2_600_560,
}


@pytest.mark.parametrize("name", sorted(MEASURED_M4_REFERENCE))
@pytest.mark.parametrize("target", ["cortex-m", "cortex-m0", "cortex-m4", "cortex-m55"])
def test_bare_metal_figure_matches_the_m4_reference_measurement(name, target):
    from packager.kernels.tflm_arena import target_named
    path = SHARED_MODELS / "tflm" / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{path.name} is not in the shared models")
    assert predict_whole_arena(read_model(path), target_named(target)).arena == MEASURED_M4_REFERENCE[name]


def test_a_device_figure_is_exact_only_where_proven(tmp_path):
    """ARENA_EXACT 1 on a device target only when every kernel form of the model is in the target's
    coverage matrix; otherwise the header says the figure is not proven and names the forms."""
    from fixtures.tflm_kernels import KERNEL_BUILDERS
    from packager.package.build import package
    from fixtures.write_models import DEFAULT_DIR

    import numpy as np
    from fixtures.builder import ModelBuilder

    def header(model: str, name: str) -> str:
        out = tmp_path / name
        package(model, out, report=False, target="cortex-m4", verify=False)  # the matrix alone
        return (out / f"{Path(model).stem}_plan.h").read_text()

    m = ModelBuilder(description="mul_int32: one int32 MUL, a form no case holds")
    g = m.subgraph("main")
    x, y = g.tensor("x", [1, 8], "INT32"), g.tensor("y", [1, 8], "INT32")
    g.op("MUL", [x, g.const("k", np.full([1], 3, np.int32))], [y], options=dict(fused_activation_function="NONE"))
    g.inputs([x])
    g.outputs([y])
    m.signature("serving_default", inputs={"x": x}, outputs={"y": y}, subgraph=0)
    mul = tmp_path / "mul_int32.tflite"
    mul.write_bytes(m.build())
    unproven = header(str(mul), "mul")
    assert "_ARENA_EXACT 0" in unproven and "Not proven either way" in unproven
    assert "MUL INT32" in unproven
    chain = header(str(DEFAULT_DIR / "chain.tflite"), "chain")  # float CONV_2D, RELU: rows of the matrix
    assert "_ARENA_EXACT 1" in chain
    svdf = tmp_path / "svdf_int8.tflite"
    svdf.write_bytes(KERNEL_BUILDERS["svdf_int8"]().build())
    proven = header(str(svdf), "svdf")
    assert "_ARENA_EXACT 1" in proven and "every kernel form proven on TFLite Micro built for cortex-m4" in proven


def test_every_target_name_a_plan_can_carry_is_in_the_schema():
    import json
    from packager.kernels.tflm_arena import TARGET_CHOICES, target_named
    from tests.conftest import REPO
    schema = json.loads((REPO / "schemas" / "plan.schema.json").read_text())

    def target_enum(node):
        if isinstance(node, dict):
            if isinstance(node.get("target"), dict) and "enum" in node["target"]:
                return node["target"]["enum"]
            return next((e for e in map(target_enum, node.values()) if e), None)
        return None

    assert {target_named(name).name for name in TARGET_CHOICES} <= set(target_enum(schema))
