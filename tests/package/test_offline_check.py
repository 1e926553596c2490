"""The offline-planned model is checked without reading the model a second time: its structure
must show the input's bytes untouched behind the new root, else packaging stops with PlanError."""

from __future__ import annotations

import pytest

from packager.errors import ModelError, PlanError
from packager.package.check import check_offline_model
from packager.kernels.tflm_offline_plan import METADATA_NAME
from packager.package.offline_plan import with_offline_plan
from packager.package.tflite_patch import patched_payload, set_metadata_buffer
from packager.reader import parse_model
from tests.package.support import file_of, model_file, packaged


def _packed(name: str) -> tuple[bytes, bytes]:
    original = model_file(name).read_bytes()
    return original, file_of(packaged(name), ".tflite").read_bytes()


def test_the_written_model_passes_and_gives_its_payload():
    original, packed = _packed("mobile_block")
    payload = patched_payload(packed, original, METADATA_NAME)
    assert payload == parse_model(packed).metadata_bytes(METADATA_NAME)


def test_a_changed_byte_of_the_input_is_caught():
    original, packed = _packed("mobile_block")
    tampered = bytearray(packed)
    tampered[len(packed) - len(original) + len(original) // 2] ^= 0xFF
    with pytest.raises(ModelError, match="unchanged"):
        patched_payload(bytes(tampered), original, METADATA_NAME)


def test_a_root_pointing_elsewhere_is_caught():
    original = model_file("mobile_block").read_bytes()
    other = model_file("chain").read_bytes()
    # A correct patch of another model, glued to this model's bytes: the lengths do not even agree,
    # and a patch of this model whose prefix comes from the other is refused by its pointers.
    foreign = set_metadata_buffer(other, METADATA_NAME, b"\0" * 16)
    prefix = len(foreign) - len(other)
    with pytest.raises(ModelError):
        patched_payload(foreign[:prefix] + original, original, METADATA_NAME)


def test_packaging_stops_on_a_bad_offline_model():
    result = packaged("mobile_block")
    model = parse_model(model_file("mobile_block").read_bytes())
    packed = file_of(result, ".tflite").read_bytes()
    check_offline_model(packed, result.plan, model)  # what was written passes
    with pytest.raises(PlanError, match="does not match its input"):
        check_offline_model(packed[:-1] + b"\x01", result.plan, model)
    wrong = with_offline_plan(model.raw, [0] * sum(len(sg.tensors) for sg in model.subgraphs),
                              len(model.subgraphs))
    with pytest.raises(PlanError):  # every tensor at offset 0: the words are not a valid plan
        check_offline_model(wrong, result.plan, model)


def test_words_that_leave_a_planned_tensor_or_place_an_unplanned_one_are_refused():
    from packager.kernels.tflm_offline_plan import decode
    result = packaged("mobile_block")
    model = parse_model(model_file("mobile_block").read_bytes())
    packed = file_of(result, ".tflite").read_bytes()
    _, subgraphs, words = decode(patched_payload(packed, model.raw, METADATA_NAME))
    planned = [t.index for t in result.plan.arenas[0].planned if t.index < len(words)]
    unplanned = [g for g, o in enumerate(words) if o < 0]
    assert planned and unplanned
    check_offline_model(with_offline_plan(model.raw, words, subgraphs), result.plan, model)
    left = list(words)
    left[planned[-1]] = -1
    with pytest.raises(PlanError, match=r"leaves a planned tensor to the runtime"):
        check_offline_model(with_offline_plan(model.raw, left, subgraphs), result.plan, model)
    stray = list(words)
    for g in unplanned[:7]:
        stray[g] = 0
    with pytest.raises(PlanError, match=rf"places tensors \[{', '.join(map(str, unplanned[:5]))}\] that are not planned"):
        check_offline_model(with_offline_plan(model.raw, stray, subgraphs), result.plan, model)
