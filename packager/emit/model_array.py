"""The model bytes as a C array `<prefix>_model.h` / `<prefix>_model.c`, the way TFLite Micro users
embed models: `const`, 16-byte aligned (kernels read constant data in place), with its length.

C99 has no alignment syntax (_Alignas is C11), so the .c uses GCC/Clang's
`__attribute__((aligned(16)))`, else C++11 `alignas` or C11 `_Alignas`, else MSVC's
`__declspec(align(16))`; all of them are quiet under -Wpedantic.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from packager.emit.c_text import block_comment

BYTES_PER_ROW = 12
ALIGNMENT = 16
_HEX = [f"0x{b:02x}," for b in range(256)]


def render_header(prefix: str, source: str, size: int, note: str) -> str:
    P = prefix.upper()
    guard = f"{P}_MODEL_H_"
    lines = block_comment([f"{prefix}_model.h: {source} as a C array ({note}), written by tflpack.",
                           "Generated: do not edit; run `tflpack package` again instead."])
    lines += ["", f"#ifndef {guard}", f"#define {guard}", "", "#include <stddef.h>", "",
              "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
              f"#define {P}_MODEL_BYTES {size}",
              f"#define {P}_MODEL_ALIGNMENT {ALIGNMENT}", "",
              f"/* The model, {ALIGNMENT}-byte aligned; pass it to tflite::GetModel(). */",
              f"extern const unsigned char {prefix}_model[{P}_MODEL_BYTES];",
              f"extern const size_t {prefix}_model_len;", "",
              "#ifdef __cplusplus", "}  /* extern \"C\" */", "#endif", "", f"#endif  /* {guard} */", ""]
    return "\n".join(lines)


def render_source(prefix: str, data: bytes) -> str:
    return render_source_bytes(prefix, data).decode("ascii")


def _source_parts(prefix: str, data: bytes) -> tuple[bytes, int, bytes]:
    """(the text before the rows, the bytes of the model in whole rows, the text after them)."""
    P = prefix.upper()
    lines = block_comment([f"{prefix}_model.c: the bytes of {prefix}_model.h, written by tflpack.",
                           "Generated: do not edit."])
    lines += ["", f'#include "{prefix}_model.h"', "",
              "/* Alignment without C11: the compiler's own syntax (see the header of model_array.py). */",
              "#if defined(__GNUC__) || defined(__clang__)",
              f"#define {P}_ALIGN_BEFORE",
              f"#define {P}_ALIGN_AFTER __attribute__((__aligned__({P}_MODEL_ALIGNMENT)))",
              "#elif defined(__cplusplus) && __cplusplus >= 201103L",
              f"#define {P}_ALIGN_BEFORE alignas({P}_MODEL_ALIGNMENT)",
              f"#define {P}_ALIGN_AFTER",
              "#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L",
              f"#define {P}_ALIGN_BEFORE _Alignas({P}_MODEL_ALIGNMENT)",
              f"#define {P}_ALIGN_AFTER",
              "#elif defined(_MSC_VER)",
              f"#define {P}_ALIGN_BEFORE __declspec(align({ALIGNMENT}))",
              f"#define {P}_ALIGN_AFTER",
              "#else  /* unknown compiler: align the array by other means (linker script) */",
              f"#define {P}_ALIGN_BEFORE",
              f"#define {P}_ALIGN_AFTER",
              "#endif", "",
              f"{P}_ALIGN_BEFORE const unsigned char {prefix}_model[{P}_MODEL_BYTES] {P}_ALIGN_AFTER = {{"]
    full = len(data) - len(data) % BYTES_PER_ROW
    rest = ["    " + " ".join(map(_HEX.__getitem__, data[i:i + BYTES_PER_ROW]))
            for i in range(full, len(data), BYTES_PER_ROW)]
    tail = ["};", "", f"const size_t {prefix}_model_len = {P}_MODEL_BYTES;", ""]
    return ("\n".join(lines) + "\n").encode("ascii"), full, "\n".join(rest + tail).encode("ascii")


def render_source_bytes(prefix: str, data: bytes) -> bytearray:
    """The .c file's bytes, made without a text copy of them: for a model of tens of megabytes
    the text is six times its size, and each copy counts in the peak memory of `package`."""
    head, full, end = _source_parts(prefix, data)
    # One buffer, the rows formatted in place: no second copy of tens of megabytes of text.
    rows = full // BYTES_PER_ROW * _ROW_BYTES
    out = bytearray(len(head) + rows + len(end))
    out[:len(head)] = head
    _fill_rows(memoryview(data)[:full], np.frombuffer(out, np.uint8, rows, len(head)))
    out[len(head) + rows:] = end
    return out


def source_chunks(prefix: str, data: bytes) -> Iterator[bytes | memoryview]:
    """The bytes of render_source_bytes a block of rows at a time, for a file written as they
    come: the whole text is six times the model, more than any other file `package` holds."""
    head, full, end = _source_parts(prefix, data)
    yield head
    step = _ROWS_AT_ONCE * BYTES_PER_ROW
    for start in range(0, full, step):
        yield render_rows(memoryview(data)[start:min(start + step, full)])
    yield end


def render_rows(data: bytes | memoryview) -> memoryview:
    """Whole rows of BYTES_PER_ROW bytes each (len(data) a multiple of it), formatted."""
    out = np.empty(len(data) // BYTES_PER_ROW * _ROW_BYTES, np.uint8)
    _fill_rows(data, out)
    return memoryview(out)


_ROWS_AT_ONCE = 1 << 16  # rows formatted per step: bounds the temporary array to a few megabytes


_ROW_BYTES = 4 + BYTES_PER_ROW * 6


def _fill_rows(data: bytes | memoryview, out: np.ndarray) -> None:
    """Rows of BYTES_PER_ROW bytes each, every row ending in a newline, written into `out` (a
    uint8 array of exactly their size) as one array: a model of tens of megabytes has millions
    of bytes to format. A row's text is a fixed template but for each byte's two hex digits,
    which sit on even offsets: the template is copied, then the digits set as 16-bit words."""
    values = np.frombuffer(data, np.uint8).reshape(-1, BYTES_PER_ROW)
    rows = out.reshape(values.shape[0], _ROW_BYTES)
    words = out.view(np.uint16).reshape(values.shape[0], _ROW_BYTES // 2)
    for start in range(0, values.shape[0], _ROWS_AT_ONCE):
        stop = start + _ROWS_AT_ONCE
        rows[start:stop] = _ROW_TEMPLATE
        words[start:stop, _DIGIT_WORDS] = _DIGITS[values[start:stop]]


# One row's text with "00" for every byte, and where each byte's two digits go (in 16-bit words:
# "    " then "0xNN, " per byte, so the digits of byte k start at 4 + 6k + 2, an even offset).
_ROW_TEMPLATE = np.frombuffer(("    " + " ".join(["0x00,"] * BYTES_PER_ROW) + "\n").encode("ascii"), np.uint8)
_DIGIT_WORDS = slice(3, 3 + 3 * BYTES_PER_ROW, 3)  # every third word from the fourth: a view, not a gather
_DIGITS = np.frombuffer("".join(f"{b:02x}" for b in range(256)).encode("ascii"), np.uint16)
assert len(_ROW_TEMPLATE) == _ROW_BYTES
