"""The read-back check of a plan file just written: the JSON form is compared column by column
without a parsed copy, and must refuse whatever parsing it in full would refuse."""

from __future__ import annotations

import json

import pytest

from packager.package import plan_flatbuffer, plan_json
from packager.arenas import bindings_for
from packager.package.build import make_plan
from packager.package.load import parse_plan
from packager.package.read_back import reads_back
from packager.package.sidecar import SourceModel
from packager.reader import read_model
from tests.package.support import model_file


def planned(name: str, semantics: str = "tflm", dims: tuple[str, ...] = ()):
    model = read_model(model_file(name))
    source = SourceModel(f"{name}.tflite", "0" * 64, len(model.raw), tuple(len(s.tensors) for s in model.subgraphs))
    return make_plan(model, semantics, "best", source, bindings_for(model, dims) if dims else None).plan


DIMS = {"dynamic_batch": ("image_0=1..4",)}  # a plan with symbols, passes and size expressions


def full_parse_agrees(data: bytes, plan) -> bool:
    try:
        return parse_plan(data) == plan
    except Exception:
        return False


def mutations(doc: dict):
    """(what, a changed copy of the JSON document): each one a plan that is not the original."""
    def changed(edit):
        copy = json.loads(json.dumps(doc))
        edit(copy)
        return copy
    tensors = lambda d: d["arenas"][0]["offsets"]["tensors"]
    yield "an offset", changed(lambda d: tensors(d)[1].update(offset=tensors(d)[1]["offset"] + 16))
    yield "a bool for an int", changed(lambda d: tensors(d)[0].update(first_op=True) if tensors(d)[0]["first_op"] == 1
                                       else tensors(d)[0].update(pass_=0, **{"pass": False}))
    yield "a float for an int", changed(lambda d: tensors(d)[0].update(size=float(tensors(d)[0]["size"])))
    # inside a shape and in alias_of (equal values, other types: the checker compares types there too)
    shaped = next(i for i, t in enumerate(tensors(doc)) if t["shape"])
    yield "a float in a shape", changed(lambda d: tensors(d)[shaped]["shape"].__setitem__(
        -1, float(tensors(d)[shaped]["shape"][-1])))
    ones = [i for i, t in enumerate(tensors(doc)) if 1 in t["shape"]]
    if ones:
        yield "a bool in a shape", changed(lambda d: tensors(d)[ones[0]]["shape"].__setitem__(
            tensors(d)[ones[0]]["shape"].index(1), True))
    aliased = [i for i, t in enumerate(tensors(doc)) if t["alias_of"] is not None]
    if aliased:
        yield "a float alias", changed(lambda d: tensors(d)[aliased[0]].update(
            alias_of=float(tensors(d)[aliased[0]]["alias_of"])))
    yield "a name", changed(lambda d: tensors(d)[0].update(name=tensors(d)[0]["name"] + "x"))
    yield "a shape", changed(lambda d: tensors(d)[0].update(shape=tensors(d)[0]["shape"] + [1]))
    yield "a tensor missing", changed(lambda d: tensors(d).pop())
    yield "two tensors swapped", changed(lambda d: tensors(d).insert(0, tensors(d).pop(1)))
    yield "a tensor twice", changed(lambda d: tensors(d).append(tensors(d)[-1]))
    yield "two objects swapped", changed(lambda d: d["arenas"][0]["objects"]["tensors"].insert(
        0, d["arenas"][0]["objects"]["tensors"].pop(1)))
    plain = [i for i, t in enumerate(tensors(doc)) if "size_expr" not in t]
    if plain:
        yield "a null size expression", changed(lambda d: tensors(d)[plain[-1]].update(size_expr=None))
    yield "a key missing", changed(lambda d: tensors(d)[0].pop("type"))
    yield "an alias", changed(lambda d: tensors(d)[0].update(alias_of=0))
    yield "a size expression", changed(lambda d: tensors(d)[0].update(size_expr="N"))
    yield "an object", changed(lambda d: d["arenas"][0]["objects"]["tensors"][0].update(object=99))
    yield "the objects' key", changed(lambda d: d["arenas"][0]["objects"]["tensors"][0].update(
        offset=d["arenas"][0]["objects"]["tensors"][0].pop("object")))
    yield "the arena", changed(lambda d: d["arenas"][0]["offsets"].update(arena_bytes=1))
    yield "the semantics", changed(lambda d: d.update(semantics="ideal"))
    yield "the format", changed(lambda d: d.update(format_version=2))


@pytest.mark.parametrize("name,semantics", [("mobile_block", "tflm"), ("if_else", "tflite"),
                                            ("dynamic_batch", "tflite"), ("while_loop", "tflm")])
def test_the_written_files_read_back(name, semantics):
    plan = planned(name, semantics, DIMS.get(name, ()))
    assert plan.is_dynamic == (name in DIMS)
    assert reads_back(plan_json.dumps(plan), plan)
    assert reads_back(plan_flatbuffer.dumps(plan), plan)


@pytest.mark.parametrize("name", ["mobile_block", "dynamic_batch"])
def test_a_changed_file_is_refused_exactly_when_the_full_parse_refuses_it(name):
    plan = planned(name, "tflite", DIMS.get(name, ()))
    doc = json.loads(plan_json.dumps(plan))
    for what, changed in mutations(doc):
        data = json.dumps(changed, indent=2, sort_keys=True).encode()
        assert not full_parse_agrees(data, plan), what  # each mutation is a real change
        assert not reads_back(data, plan), what
    assert reads_back(json.dumps(doc).encode(), plan)  # other spacing, same plan
    # Stricter than the full parse, which ignores a key it does not know: the writer writes none.
    doc["arenas"][0]["offsets"]["tensors"][0]["extra"] = 1
    assert full_parse_agrees(json.dumps(doc).encode(), plan) and not reads_back(json.dumps(doc).encode(), plan)
    assert not reads_back(b"{not json", plan) and not reads_back(b"", plan)


@pytest.mark.parametrize("name", ["mobile_block", "dynamic_batch"])
def test_entries_in_another_key_order_read_back_as_the_same_plan(name):
    """Entries are compacted as they are parsed only in the writer's key order; any other order
    is still the same plan, and a pair entry with the other section's key is still refused."""
    plan = planned(name, "tflite", DIMS.get(name, ()))
    doc = json.loads(plan_json.dumps(plan))
    arena = doc["arenas"][0]
    for key in ("offsets", "objects") + (("passes",) if "passes" in arena else ()):
        entries = arena[key]["tensors"]
        entries[0] = dict(reversed(list(entries[0].items())))  # one entry in another order
    assert reads_back(json.dumps(doc).encode(), plan)
    arena["offsets"]["tensors"] = [dict(reversed(list(t.items()))) for t in arena["offsets"]["tensors"]]
    assert reads_back(json.dumps(doc).encode(), plan)
    if "passes" in arena:  # the multi-pass plan's entries under the objects' key: refused
        arena["passes"]["tensors"] = [{"index": t["index"], "object": t["offset"]} for t in arena["passes"]["tensors"]]
        assert not reads_back(json.dumps(doc).encode(), plan)
    arena["objects"]["tensors"][-1] = {"offset": 0, "index": arena["objects"]["tensors"][-1]["index"]}
    assert not reads_back(json.dumps(doc).encode(), plan)


@pytest.mark.parametrize("name", ["mobile_block", "dynamic_batch"])
def test_the_flatbuffer_is_refused_for_a_plan_that_differs_in_one_column(name):
    from dataclasses import replace
    plan = planned(name, "tflite", DIMS.get(name, ()))
    data = plan_flatbuffer.dumps(plan)
    assert reads_back(data, plan)
    section = plan.arenas[0]
    t = section.offsets.tensors[0]
    for change in ({"offset": t.offset + 16}, {"name": t.name + "x"}, {"shape": (*t.shape, 1)},
                   {"alias_of": -1}, {"size_expr": "N"}, {"pass_": t.pass_ + 1}, {"tensor": t.tensor + 1}):
        tensors = (replace(t, **change), *section.offsets.tensors[1:])
        other = replace(plan, arenas=(replace(section, offsets=replace(section.offsets, tensors=tensors)),
                                      *plan.arenas[1:]))
        assert not reads_back(data, other), change
    fewer = replace(section, offsets=replace(section.offsets, tensors=section.offsets.tensors[1:]))
    assert not reads_back(data, replace(plan, arenas=(fewer, *plan.arenas[1:])))
    assert not reads_back(data[:len(data) // 2], plan)


@pytest.mark.parametrize("name", ["mobile_block", "dynamic_batch"])
def test_the_flatbuffer_texts_shapes_and_aliases_are_compared_as_stored(name):
    """The FlatBuffer's texts are compared as bytes and lengths, its shapes as ranks and
    dimensions: a change that keeps the bytes run together the same (a letter moved from one
    name to the next), a dimension moved from one shape to the next, an absent size expression
    against an empty one, a non-ASCII name, all refused; the plan itself still reads back."""
    from dataclasses import replace
    plan = planned(name, "tflite", DIMS.get(name, ()))
    section = plan.arenas[0]
    first, second, *rest = section.offsets.tensors

    def with_entries(*entries):
        offsets = replace(section.offsets, tensors=(*entries, *rest))
        return replace(plan, arenas=(replace(section, offsets=offsets), *plan.arenas[1:]))

    data = plan_flatbuffer.dumps(plan)
    assert reads_back(data, plan)
    both = (first.name + second.name)
    changes = [
        (replace(first, name=both[:len(first.name) + 1]), replace(second, name=both[len(first.name) + 1:])),
        (replace(first, shape=(*first.shape, *second.shape[:1])), replace(second, shape=second.shape[1:])),
        (replace(first, name=first.name + "é"), second),
        (replace(first, kind=first.kind + "x"), second),
        (replace(first, type=""), second),
        (replace(first, alias_of=second.index), second),
        (replace(first, size_expr="" if first.size_expr is None else None), second),
    ]
    for a, b in changes:
        assert not reads_back(data, with_entries(a, b)), (a, b)
    unicode = with_entries(replace(first, name=first.name + "é✓"), second)
    assert reads_back(plan_flatbuffer.dumps(unicode), unicode)
    assert plan_flatbuffer.loads(plan_flatbuffer.dumps(unicode)) == unicode


def test_numbers_gathered_at_aligned_and_unaligned_positions_are_structs():
    """The FlatBuffer reader's numbers, taken one index each where all are aligned (a sound
    file) and byte by byte where not (a damaged one), are struct's; out of the bytes, struct's error."""
    import random
    import struct

    import numpy as np

    from packager.package.plan_flatbuffer import _gather
    rng = random.Random(3)
    data = bytes(rng.randrange(256) for _ in range(203))
    u8 = np.frombuffer(data, np.uint8)
    for dtype, fmt in (("<u2", "<H"), ("<u4", "<I"), ("<i4", "<i"), ("<i8", "<q")):
        width = struct.calcsize(fmt)
        aligned = [width * rng.randrange(len(data) // width) for _ in range(50)]
        for positions in (aligned, [p + 1 for p in aligned if p + 1 + width <= len(data)], []):
            got = _gather(u8, np.asarray(positions, np.int64), dtype).tolist()
            assert got == [struct.unpack_from(fmt, data, p)[0] for p in positions]
        with pytest.raises(struct.error):
            _gather(u8, np.asarray([len(data) - width + 1], np.int64), dtype)
