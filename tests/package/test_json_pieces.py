"""The JSON read a piece at a time parses as json.loads does, whatever the pieces and the window."""

from __future__ import annotations

import json
import random

import pytest

from packager.package import json_pieces
from packager.package.json_pieces import loads_in_pieces


def _pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)] or [b""]


DOCUMENTS = [
    {"a": [1, 2.5, -3e10, True, False, None, "x\u00e9\\\"\n"], "b": {"c": {}, "d": []}, "e": 12345678901234567890},
    [{"k": i, "name": f"t{i} \u2013 ok", "shape": [1, i, 3]} for i in range(60)],
    {"arenas": [{"offsets": {"tensors": [{"index": i, "v": [i] * 3} for i in range(80)]}}], "z": "end"},
    12345,
    "a string",
    [],
]


@pytest.mark.parametrize("doc", DOCUMENTS)
@pytest.mark.parametrize("window", [8, 64, 1 << 20])
@pytest.mark.parametrize("batch", [2, 40, 1 << 12])
def test_same_value_and_same_hook_calls_as_json_loads(doc, window, batch, monkeypatch):
    monkeypatch.setattr(json_pieces, "WINDOW", window)
    monkeypatch.setattr(json_pieces, "BATCH", batch)  # runs of elements read at once, or one at a time
    text = json.dumps(doc, indent=2, ensure_ascii=False).encode()
    seen_whole: list = []
    whole = json.loads(text, object_hook=lambda d: seen_whole.append(dict(d)) or d)
    rng = random.Random(len(text) + window)
    for size in (1, 7, rng.randrange(1, 50), 300, len(text) + 1):
        seen: list = []
        calls = {"n": 0}

        def hook(d):
            calls["n"] += 1
            seen.append(dict(d))
            return d

        def undo():
            n, at = calls["n"], len(seen)

            def restore():
                calls["n"] = n
                del seen[at:]
            return restore
        assert loads_in_pieces(_pieces(text, size), object_hook=hook, undo=undo) == whole
        assert seen == seen_whole  # every object, once, in json.loads's order


def _flat(value) -> bool:
    """An object of scalars and arrays of scalars (a plan's entry)."""
    return type(value) is dict and not any(
        type(v) is dict or (type(v) is list and any(type(x) in (list, dict) for x in v)) for v in value.values())


def _counted(value):
    """What `runs` below makes of a value: each array of flat objects becomes the number of keys
    of each; any other array is kept, its elements' arrays treated the same way."""
    if type(value) is list:
        if value and all(map(_flat, value)):
            return [len(v) for v in value]
        return [_counted(v) for v in value]
    if type(value) is dict:
        return {k: _counted(v) for k, v in value.items()}
    return value


def _flat_objects_in_order(value) -> list:
    if type(value) is list and value and all(map(_flat, value)):
        return [dict(v) for v in value]
    inner = value if type(value) is list else value.values() if type(value) is dict else ()
    return [o for v in inner for o in _flat_objects_in_order(v)]


@pytest.mark.parametrize("doc", DOCUMENTS)
@pytest.mark.parametrize("window", [8, 64, 1 << 20])
@pytest.mark.parametrize("batch", [2, 40, 1 << 12])
def test_runs_see_every_array_once_in_order_and_stand_for_its_elements(doc, window, batch, monkeypatch):
    """An array read in pieces is given to `runs` a run of elements at a time: what the runs
    return, joined, stands for the array; an array kept as it was has its elements' arrays given
    in turn (or before it, for an element read in pieces). Every entry of every array of entries
    is seen once, in the order of the text."""
    monkeypatch.setattr(json_pieces, "WINDOW", window)
    monkeypatch.setattr(json_pieces, "BATCH", batch)
    text = json.dumps(doc, indent=2, ensure_ascii=False).encode()
    for size in (1, 13, 300, len(text) + 1):
        seen: list = []

        def runs(run):
            if run and all(map(_flat, run)):
                seen.extend(dict(v) for v in run)
                return [len(v) for v in run]
            return run
        assert loads_in_pieces(_pieces(text, size), runs=runs) == _counted(json.loads(text))
        assert seen == _flat_objects_in_order(json.loads(text)), size
    whole = json.loads(text)
    assert json_pieces.arrays_replaced(whole, lambda run: run) == json.loads(text)


@pytest.mark.parametrize("bad", [b"", b"{", b"[1, 2", b'{"a" 1}', b"[1,]", b"[1] x", b"\xef\xbb\xbf[1]",
                                 b'{"a": tru}', b"[1 2]", b'["\xff"]', b"{1: 2}"])
@pytest.mark.parametrize("window", [4, 1 << 20])
def test_refuses_what_json_loads_refuses(bad, window, monkeypatch):
    monkeypatch.setattr(json_pieces, "WINDOW", window)
    with pytest.raises(ValueError):
        json.loads(bad.decode("utf-8", "strict")) if bad.startswith(b"\xef") else json.loads(bad)
    for size in (1, 2, len(bad) + 1):
        with pytest.raises(ValueError):
            loads_in_pieces(_pieces(bad, size))


# -- the plan JSON read back from its pieces ---------------------------------------------------

def _plan_pieces(data: bytes, size: int = 4096):
    return (data[i:i + size] for i in range(0, len(data), size))


@pytest.mark.parametrize("name,semantics", [("mobile_block", "tflm"), ("dynamic_batch", "tflite"),
                                            ("while_loop", "tflite")])
def test_the_plan_reads_back_in_pieces_as_in_one_parse(name, semantics, monkeypatch):
    from packager.package import plan_json
    from packager.package.read_back import json_pieces_read_back, json_reads_back
    from tests.package.test_read_back import DIMS, mutations, planned
    plan = planned(name, semantics, DIMS.get(name, ()))
    data = b"".join(plan_json.encoded_pieces(plan))
    assert data == plan_json.dumps(plan)  # the pieces are the file's bytes
    monkeypatch.setattr(json_pieces, "WINDOW", 256)  # a window much smaller than the plan
    monkeypatch.setattr(json_pieces, "BATCH", 64)
    for size in (97, 1000, len(data)):
        assert json_pieces_read_back(_plan_pieces(data, size), plan)
    doc = json.loads(data)
    for what, changed in mutations(doc):
        other = json.dumps(changed, indent=2).encode()
        assert json_pieces_read_back(_plan_pieces(other), plan) == json_reads_back(other, plan) is False, what
    assert not json_pieces_read_back(_plan_pieces(data[:len(data) // 2]), plan)


def test_a_changed_byte_of_the_written_plan_is_refused(monkeypatch):
    from packager.package import plan_json
    from packager.package.read_back import json_pieces_read_back
    from tests.package.test_read_back import planned
    plan = planned("mobile_block", "tflite")
    data = plan_json.dumps(plan)
    monkeypatch.setattr(json_pieces, "WINDOW", 512)
    monkeypatch.setattr(json_pieces, "BATCH", 64)
    digits = [i for i, c in enumerate(data) if chr(c).isdigit()]
    for at in digits[::max(1, len(digits) // 40)]:
        changed = data[:at] + (b"1" if data[at:at + 1] != b"1" else b"2") + data[at + 1:]
        assert not json_pieces_read_back(_plan_pieces(changed, 101), plan), at


def test_package_refuses_a_plan_json_written_wrong(monkeypatch, tmp_path):
    from packager.errors import PlanError
    from packager.package import build, plan_json
    from tests.package.support import model_file
    real = plan_json.encoded_pieces

    def one_byte_off(plan):
        data = b"".join(real(plan))
        at = data.index(b'"offset": ') + len(b'"offset": ')
        yield data[:at] + (b"9" if data[at:at + 1] != b"9" else b"8") + data[at + 1:]
    monkeypatch.setattr(plan_json, "encoded_pieces", one_byte_off)
    with pytest.raises(PlanError, match="does not read back"):
        build.package(model_file("mobile_block"), tmp_path / "out", semantics="tflite", report=False)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())  # nothing half-written
