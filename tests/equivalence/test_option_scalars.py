"""Options tables whose fields are all scalars are decoded straight from the bytes: the very
values (and types) the generated accessors give, defaults included, on every options class of
the schema, every catalog model and the real ones; a table whose reads would leave the file goes
to the generated accessors, which fail as they always did."""

from __future__ import annotations

import flatbuffers
import pytest

import packager.reader as reader
from fixtures.catalog import CATALOG
from tests.conftest import SHARED_MODELS

OPTION_CLASSES = sorted(reader._OPTION_TABLES.values())


def _both(data: bytes, table_name: str, table: int):
    parser = reader._Parser.__new__(reader._Parser)
    parser.data = data
    fast = reader._scalars(data, table, reader._scalar_layout(reader._option_class(table_name)))
    return fast, parser.decode_options_generated(table_name, table)


def _typed(options: dict) -> list:
    return [(k, type(v), v) for k, v in options.items()]


def _table(table_name: str, values: dict[str, object] | None) -> tuple[bytes, int]:
    """A buffer holding one options table: every field set to `values` (by slot), or none set."""
    layout = reader._scalar_layout(reader._option_class(table_name))
    builder = flatbuffers.Builder(64)
    builder.StartObject(max((slot - 4) // 2 + 1 for _, slot, *_ in layout) if layout else 0)
    for field, slot, unpack, width, as_bool, default in layout if values is not None else ():
        kind = {1: builder.PrependInt8Slot, 2: builder.PrependInt16Slot, 4: builder.PrependInt32Slot,
                8: builder.PrependInt64Slot}[width]
        value = values[field]
        if isinstance(default, float):
            kind = builder.PrependFloat32Slot if width == 4 else builder.PrependFloat64Slot
        kind((slot - 4) // 2, value, None)  # no default: every field is written
    end = builder.EndObject()
    builder.Finish(end)
    data = bytes(builder.Output())
    return data, int.from_bytes(data[:4], "little")


def test_every_options_class_but_three_is_all_scalars():
    generic = [name for name in OPTION_CLASSES if reader._scalar_layout(reader._option_class(name)) is None]
    assert generic == ["ReshapeOptions", "SqueezeOptions", "VarHandleOptions"]  # vectors, strings


@pytest.mark.parametrize("table_name", [n for n in OPTION_CLASSES
                                        if reader._scalar_layout(reader._option_class(n)) is not None])
def test_each_scalar_class_reads_as_the_generated_accessors(table_name):
    layout = reader._scalar_layout(reader._option_class(table_name))
    for values in (None, {f: (2 if isinstance(d, bool) else d + 3) for f, _, _, _, _, d in layout},
                   {f: (0 if isinstance(d, bool) else -1 if not isinstance(d, float) else 0.5)
                    for f, _, _, _, _, d in layout}):
        data, table = _table(table_name, values)
        fast, generated = _both(data, table_name, table)
        assert fast is not None and _typed(fast) == _typed(generated), values


def _files():
    real = sorted(SHARED_MODELS.glob("*.tflite")) + sorted(SHARED_MODELS.glob("tflm/*.tflite"))
    return [pytest.param(lambda make=make: make(), id=name) for name, make in sorted(CATALOG.items())] + \
        [pytest.param(lambda p=p: p.read_bytes(), id=p.name) for p in real]


@pytest.mark.parametrize("data", _files())
def test_every_operator_of_the_models_gets_the_generated_options(data):
    raw = data()
    model = reader.parse_model(raw)
    parser = reader._Parser(raw)
    decoded = 0
    for sg in model.subgraphs:
        for op in sg.operators:
            options = op.options
            if isinstance(options, reader._LazyOptions):
                assert _typed(parser.decode_options(options._table_name, options._table)) == \
                    _typed(parser.decode_options_generated(options._table_name, options._table))
                decoded += 1
    assert decoded or not any(op.options for sg in model.subgraphs for op in sg.operators)


def test_a_table_outside_the_file_goes_to_the_generated_accessors():
    data, table = _table("FullyConnectedOptions", {"fused_activation_function": 1, "weights_format": 1,
                                                   "keep_num_dims": True})
    layout = reader._scalar_layout(reader._option_class("FullyConnectedOptions"))
    assert reader._scalars(data, table, layout) is not None
    assert reader._scalars(data, len(data) - 2, layout) is None
    assert reader._scalars(data[:table + 2], table, layout) is None
    assert reader._scalars(data, -4, layout) is None
