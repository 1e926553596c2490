"""Corrupt files get a reason in plain words: where the file ends and how much the model needs, or
which reference leads outside it; never the flatbuffer library's internals."""

from __future__ import annotations

import random
import re
import struct

import pytest

from packager.errors import ModelError
from packager.reader import parse_model
from tests.cli.test_cli_errors import run_cli
from tests.conftest import REPO

CHAIN = (REPO / "fixtures" / "models" / "chain.tflite").read_bytes()
# Words of Python or of the flatbuffers library that a user must never see.
INTERNALS = re.compile(r"unpack_from|bad number|uint32|requested size|Error\b|Traceback|struct\.|"
                       r"object has no attribute|index out of range")


def message(data: bytes) -> str | None:
    try:
        parse_model(data)
    except ModelError as e:
        return str(e)
    return None


def test_a_twelve_byte_file_says_where_it_ends_and_what_the_model_needs():
    data = struct.pack("<I", 2_608_740) + b"TFL3" + b"\x00" * 4
    assert message(data) == ("corrupt or truncated model: the file ends at byte 12; "
                             "the model needs 2,608,744 bytes")


@pytest.mark.parametrize("cut", [9, 16, 40, 100, 200, len(CHAIN) // 2, len(CHAIN) - 1])
def test_a_truncated_model_says_where_the_file_ends(cut):
    text = message(CHAIN[:cut])
    assert text is not None
    assert re.fullmatch(rf"corrupt or truncated model: the file ends at byte {cut:,}; "
                        rf"(the model|buffer \d+) needs [\d,]+ bytes", text), text
    needed = int(text.rsplit("needs ", 1)[1].split()[0].replace(",", ""))
    assert needed > cut


def test_flipped_bytes_never_show_internals():
    rng = random.Random(18)
    failures = 0
    for _ in range(600):
        data = bytearray(CHAIN)
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(8, len(data))] = rng.randrange(256)
        if rng.random() < 0.3:
            data = data[: rng.randrange(8, len(data))]
        text = message(bytes(data))
        if text is not None:
            failures += 1
            assert not INTERNALS.search(text), text
            assert "\n" not in text
    assert failures > 200  # the corruptions did reach the reader's checks


def test_a_list_longer_than_the_file_is_named_in_words():
    # The root table's first vector length (buffers, operator codes, ...) set absurdly high.
    rng = random.Random(3)
    texts = set()
    for _ in range(2000):
        data = bytearray(CHAIN)
        data[rng.randrange(8, 400)] = 0xFF
        text = message(bytes(data)) or ""
        if "claims" in text:
            texts.add(text)
    assert texts
    for text in texts:
        assert re.fullmatch(r"corrupt or truncated model: the list of [a-z ]+ claims [\d,]+ entries, "
                            r"more than the [\d,]+-byte file can hold", text), text


def test_the_command_line_prints_one_plain_line(tmp_path):
    path = tmp_path / "cut.tflite"
    path.write_bytes(CHAIN[:300])
    result = run_cli("plan", str(path))
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "the file ends at byte 300; the model needs" in lines[0]
    assert not INTERNALS.search(result.stderr)


def run_cli_in_1_gib(*args: str):
    """The command line in a child that may not map more than 1 GiB: a reader that reads what it
    must not fails there at once, instead of filling the machine's memory."""
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    return subprocess.run([sys.executable, str(REPO / "cli.py"), *args], capture_output=True, text=True,
                          cwd=REPO, timeout=120, preexec_fn=limit)


def test_a_device_is_refused_without_reading_it():
    result = run_cli_in_1_gib("inspect", "/dev/zero")
    assert result.returncode == 2, result.stderr[-300:]
    assert result.stderr == "error: /dev/zero: not a regular file (a device, pipe or socket), so not a .tflite file\n"


def test_a_file_larger_than_a_flatbuffer_is_not_read(tmp_path):
    big = tmp_path / "big.tflite"
    with open(big, "wb") as f:  # sparse: 3 GiB on no disk space
        f.write(struct.pack("<I", 16) + b"TFL3")
        f.truncate(3 << 30)
    result = run_cli_in_1_gib("inspect", str(big))
    assert result.returncode == 2, result.stderr[-300:]
    assert result.stderr == (f"error: {big}: 3,221,225,472 bytes, larger than a flatbuffer can be (2 GiB); "
                             "tflpack reads models up to that size\n")
    with open(big, "r+b") as f:  # not a model at all: its identifier is all that is read
        f.write(b"\x00" * 8)
    result = run_cli_in_1_gib("inspect", str(big))
    assert result.returncode == 2, result.stderr[-300:]
    assert result.stderr == "error: big.tflite: not a TFLite model: file identifier '00000000', expected 'TFL3'\n"
