"""Objects made a field at a time are the ones the frozen classes' constructors make."""

from __future__ import annotations

import dataclasses

import pytest

from packager.field_columns import made_field_by_field
from packager.model import Operator, OperatorCode, Tensor


def test_tensors_and_operators_made_a_field_at_a_time_are_the_constructors():
    tensors = [(0, "in", "INT8", (1, 4), None, 0, False, True, False, False, 0, ()),
               (1, "w", "FLOAT32", (), (-1, 3), 7, True, False, True, True, 4, (0,))]
    code = OperatorCode(9, "FULLY_CONNECTED", None, 1)
    operators = [(0, code, (0, -1), (1,), (), {}, ()), (1, code, (), (), (2,), {"a": 1}, (1,))]
    for cls, rows in ((Tensor, tensors), (Operator, operators)):
        made = made_field_by_field(cls, len(rows), zip(*rows))
        expected = [cls(*row) for row in rows]
        assert made == expected
        assert [dataclasses.astuple(m) for m in made] == [dataclasses.astuple(e) for e in expected]
        assert [repr(m) for m in made] == [repr(e) for e in expected]
    assert [hash(t) for t in made_field_by_field(Tensor, 2, zip(*tensors))] == \
        [hash(Tensor(*row)) for row in tensors]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made_field_by_field(Tensor, 1, zip(tensors[0]))[0].name = "x"


def test_every_field_must_be_given():
    with pytest.raises(TypeError):
        made_field_by_field(Tensor, 1, zip(*[(0, "in", "INT8", (1,), None, 0, False, False, False, False, 0)]))
    assert made_field_by_field(Tensor, 0, [()] * 12) == []


def test_a_class_that_checks_its_fields_is_refused():
    from dataclasses import dataclass

    @dataclass(frozen=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("negative")

    with pytest.raises(TypeError, match="__post_init__"):
        made_field_by_field(Checked, 1, [[-1]])
