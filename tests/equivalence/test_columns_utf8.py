"""A text column's UTF-8 form (the plan FlatBuffer's strings) is each text encoded on its own,
run together: ASCII columns are encoded at once, others text by text; None is absent."""

from __future__ import annotations

import numpy as np
import pytest

from packager.package.columns import utf8_texts


@pytest.mark.parametrize("texts", [
    ["conv", "", "relu_1", "x"],
    ["é", "✓ ok", "", "plain"],
    [None, "N*4", None, "", "é"],
    [None, None],
    [],
])
def test_utf8_texts_are_each_text_encoded(texts):
    got = utf8_texts(texts)
    present = [x for x in texts if x is not None]
    assert got.data == b"".join(x.encode("utf-8") for x in present)
    assert got.lengths.tolist() == [-1 if x is None else len(x.encode("utf-8")) for x in texts]
    assert got.lengths.dtype == np.int64
    assert [got.encoded(i) for i in range(len(texts))] == [None if x is None else x.encode("utf-8") for x in texts]


def test_a_value_that_is_not_text_is_a_type_error():
    with pytest.raises(TypeError):
        utf8_texts(["a", 1])
