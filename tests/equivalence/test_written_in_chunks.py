"""The largest file of `package` is written a chunk at a time (the C array as its rows are
formatted): the chunks must be exactly the file's bytes as a whole, and the folder must write them
in order."""

from __future__ import annotations

import pytest

from packager.emit import model_array
from packager.package.output_dir import staged_folder


@pytest.mark.parametrize("size", [0, 1, 11, 12, 13, 12 * 7 + 5, 12 * (1 << 16) + 12 * 3 + 1])
def test_the_c_array_in_chunks_is_the_c_array(monkeypatch, size):
    data = bytes((i * 37 + 11) % 256 for i in range(size))
    whole = bytes(model_array.render_source_bytes("m", data))
    assert b"".join(bytes(c) for c in model_array.source_chunks("m", data)) == whole
    monkeypatch.setattr(model_array, "_ROWS_AT_ONCE", 3)  # many blocks, the last one short
    assert b"".join(bytes(c) for c in model_array.source_chunks("m", data)) == whole


def test_the_folder_writes_chunks_in_order(tmp_path):
    with staged_folder(tmp_path / "out") as folder:
        folder.add("a.bin", iter([b"ab", memoryview(b"cd"), b"", b"e"]))
        folder.add("b.bin", b"whole")
        folder.commit()
    assert (tmp_path / "out" / "a.bin").read_bytes() == b"abcde" and folder.sizes["a.bin"] == 5
    assert (tmp_path / "out" / "b.bin").read_bytes() == b"whole" and folder.sizes["b.bin"] == 5
