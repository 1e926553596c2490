"""Tensor entries made a field at a time are the entries the class's constructor makes."""

from __future__ import annotations

import dataclasses

import pytest

from packager.package.sidecar import TensorEntry, tensor_entries


def test_entries_made_a_field_at_a_time_are_the_constructors():
    rows = [(1, 0, 2, "tensor", "a", "INT8", (1, 4), 0, 16, 0, 1, None, 0, None),
            (2 ** 30, 1, -1, "scratch", "conv", "UINT8", (64,), 16, 64, 1, 2, 1, 1, "4*N"),
            (3, 0, 5, "tensor", "", "FLOAT32", (), 2 ** 40, 0, 2, 2, None, 0, "")]
    made = tensor_entries(rows)
    expected = [TensorEntry(*row) for row in rows]
    assert made == expected and [hash(e) for e in made] == [hash(e) for e in expected]
    assert [dataclasses.astuple(e) for e in made] == rows
    with pytest.raises(dataclasses.FrozenInstanceError):
        made[0].offset = 32
    assert tensor_entries([]) == []
    with pytest.raises(TypeError):
        tensor_entries([rows[0][:-1]])
