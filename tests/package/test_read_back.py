"""The read-back check of a plan file just written: either form must parse to exactly the plan it
was written from, and any change to the file (a value, a type, an entry) is refused."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from packager.arenas import bindings_for
from packager.errors import PlanError
from packager.package import build, plan_flatbuffer, plan_json
from packager.package.build import make_plan
from packager.package.read_back import reads_back
from packager.package.sidecar import SourceModel
from packager.reader import read_model
from tests.package.support import model_file


def planned(name: str, semantics: str = "tflm", dims: tuple[str, ...] = ()):
    model = read_model(model_file(name))
    source = SourceModel(f"{name}.tflite", "0" * 64, len(model.raw), tuple(len(s.tensors) for s in model.subgraphs))
    return make_plan(model, semantics, "best", source, bindings_for(model, dims) if dims else None).plan


DIMS = {"dynamic_batch": ("image_0=1..4",)}  # a plan with symbols, passes and size expressions


def mutations(doc: dict):
    """(what, a changed copy of the JSON document): each one a plan that is not the original."""
    def changed(edit):
        copy = json.loads(json.dumps(doc))
        edit(copy)
        return copy
    tensors = lambda d: d["arenas"][0]["offsets"]["tensors"]
    objects = lambda d: d["arenas"][0]["objects"]["tensors"]
    yield "an offset", changed(lambda d: tensors(d)["offset"].__setitem__(1, tensors(d)["offset"][1] + 16))
    yield "a bool for an int", changed(lambda d: tensors(d)["pass"].__setitem__(0, bool(tensors(d)["pass"][0])))
    yield "a number too large for 64 bits", changed(lambda d: tensors(d)["first_op"].__setitem__(0, 1 << 70))
    yield "a float for an int", changed(lambda d: tensors(d)["size"].__setitem__(0, float(tensors(d)["size"][0])))
    shaped = next(i for i, s in enumerate(tensors(doc)["shape"]) if s)
    yield "a float in a shape", changed(lambda d: tensors(d)["shape"][shaped].__setitem__(
        -1, float(tensors(d)["shape"][shaped][-1])))
    aliased = [i for i, a in enumerate(tensors(doc)["alias_of"]) if a is not None]
    if aliased:
        yield "a float alias", changed(lambda d: tensors(d)["alias_of"].__setitem__(
            aliased[0], float(tensors(d)["alias_of"][aliased[0]])))
    yield "a name", changed(lambda d: tensors(d)["name"].__setitem__(0, tensors(d)["name"][0] + "x"))
    yield "a shape", changed(lambda d: tensors(d)["shape"][0].append(1))
    yield "a column shorter", changed(lambda d: tensors(d)["index"].pop())
    yield "a tensor missing", changed(lambda d: [column.pop() for column in tensors(d).values()])
    yield "two tensors swapped", changed(lambda d: [column.insert(0, column.pop(1)) for column in tensors(d).values()])
    yield "two objects swapped", changed(lambda d: objects(d)["object"].insert(0, objects(d)["object"].pop(1)))
    yield "a column missing", changed(lambda d: tensors(d).pop("type"))
    yield "an alias", changed(lambda d: tensors(d)["alias_of"].__setitem__(0, 0))
    yield "a size expression", changed(lambda d: tensors(d).update(size_expr=["N"] * len(tensors(d)["index"])))
    yield "an object", changed(lambda d: objects(d)["object"].__setitem__(0, 99))
    yield "the objects' key", changed(lambda d: objects(d).update(offset=objects(d).pop("object")))
    yield "the arena", changed(lambda d: d["arenas"][0]["offsets"].update(arena_bytes=1))
    yield "the semantics", changed(lambda d: d.update(semantics="ideal"))
    yield "the format", changed(lambda d: d.update(format_version=1))
    yield "entries as in version 1", changed(lambda d: tensors(d).update(index=[{"index": i} for i in tensors(d)["index"]]))


@pytest.mark.parametrize("name,semantics", [("mobile_block", "tflm"), ("if_else", "tflite"),
                                            ("dynamic_batch", "tflite"), ("while_loop", "tflm")])
def test_the_written_files_read_back(name, semantics):
    plan = planned(name, semantics, DIMS.get(name, ()))
    assert plan.is_dynamic == (name in DIMS)
    assert reads_back(plan_json.dumps(plan), plan)
    assert reads_back(plan_flatbuffer.dumps(plan), plan)


@pytest.mark.parametrize("name", ["mobile_block", "dynamic_batch"])
def test_a_changed_json_file_is_refused(name):
    plan = planned(name, "tflite", DIMS.get(name, ()))
    doc = json.loads(plan_json.dumps(plan))
    for what, changed in mutations(doc):
        assert not reads_back(json.dumps(changed, indent=2, sort_keys=True).encode(), plan), what
    assert reads_back(json.dumps(doc, indent=1).encode(), plan)  # other spacing, same plan
    assert not reads_back(b"{not json", plan) and not reads_back(b"", plan)


@pytest.mark.parametrize("name", ["mobile_block", "dynamic_batch"])
def test_the_flatbuffer_is_refused_for_a_plan_that_differs_in_one_entry(name):
    plan = planned(name, "tflite", DIMS.get(name, ()))
    data = plan_flatbuffer.dumps(plan)
    assert reads_back(data, plan)
    section = plan.arenas[0]
    first, second, *rest = section.offsets.tensors

    def with_entries(*entries):
        offsets = replace(section.offsets, tensors=(*entries, *rest))
        return replace(plan, arenas=(replace(section, offsets=offsets), *plan.arenas[1:]))

    both = first.name + second.name
    changes = [(replace(first, **change), second) for change in (
        {"offset": first.offset + 16}, {"name": first.name + "x"}, {"shape": (*first.shape, 1)},
        {"alias_of": second.index}, {"pass_": first.pass_ + 1}, {"tensor": first.tensor + 1},
        {"kind": first.kind + "x"}, {"type": ""}, {"name": first.name + "é"},
        {"size_expr": "" if first.size_expr is None else None})]
    # what is run together in the file moved from one entry to the next
    changes.append((replace(first, name=both[:len(first.name) + 1]), replace(second, name=both[len(first.name) + 1:])))
    changes.append((replace(first, shape=(*first.shape, *second.shape[:1])), replace(second, shape=second.shape[1:])))
    for a, b in changes:
        assert not reads_back(data, with_entries(a, b)), (a, b)
    fewer = replace(section, offsets=replace(section.offsets, tensors=(second, *rest)))
    assert not reads_back(data, replace(plan, arenas=(fewer, *plan.arenas[1:])))
    assert not reads_back(data[:len(data) // 2], plan)
    unicode = with_entries(replace(first, name=first.name + "é✓"), second)
    assert reads_back(plan_flatbuffer.dumps(unicode), unicode)
    assert reads_back(plan_json.dumps(unicode), unicode)


def test_package_refuses_a_plan_json_written_wrong(monkeypatch, tmp_path):
    real = plan_json.dumps

    def one_digit_off(plan, *files):
        data = real(plan, *files)
        at = data.index(b'"offset": [') + len(b'"offset": [')
        return data[:at] + (b"9" if data[at:at + 1] != b"9" else b"8") + data[at + 1:]
    monkeypatch.setattr(plan_json, "dumps", one_digit_off)
    with pytest.raises(PlanError, match="does not read back"):
        build.package(model_file("mobile_block"), tmp_path / "out", semantics="tflite", report=False)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())  # nothing half-written
