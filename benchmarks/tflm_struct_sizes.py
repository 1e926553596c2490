"""The sizes of the structures TFLite Micro's arena holds, as the device compiler lays them out:
tests/oracle/tflm_sizes.cc compiled (not run) with arm-none-eabi-g++ for a Cortex-M4, with short
enums (the bare-metal default) and with -fno-short-enums (the 32-bit Linux ABI); the sizes are read
back from the object's read-only data. Prints a Markdown table, starred where the two differ.

    python -m benchmarks.tflm_struct_sizes [SHARED_ORACLES_TFLM]   (default ../shared/oracles/tflm)
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROBE = REPO / "tests" / "oracle" / "tflm_sizes.cc"


def sizes(src: Path, enums: str, work: Path) -> list[tuple[int, int]]:
    obj, raw = work / f"sizes-{enums}.o", work / f"sizes-{enums}.bin"
    flags = [] if enums == "short" else ["-fno-short-enums"]
    subprocess.run(["arm-none-eabi-g++", "-std=c++17", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=soft", "-O2",
                    *flags, "-DTF_LITE_STATIC_MEMORY", f"-I{src / 'tflite-micro'}",
                    f"-I{src / 'flatbuffers' / 'include'}", "-I/usr/include/gemmlowp", f"-I{src / 'ruy'}",
                    "-c", str(PROBE), "-o", str(obj)], check=True)
    subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", "-j", ".rodata", str(obj), str(raw)], check=True)
    data = raw.read_bytes()
    return [struct.unpack_from("<II", data, 8 * i) for i in range(len(data) // 8)]


def main(argv: list[str]) -> None:
    oracle = Path(argv[0]) if argv else REPO.parent / "shared" / "oracles" / "tflm"
    names = re.findall(r"^    ENTRY\((.*?)\)", PROBE.read_text(), re.M)
    with tempfile.TemporaryDirectory() as tmp:
        short, wide = (sizes(oracle / "src", e, Path(tmp)) for e in ("short", "int"))
    print("| structure | short enums (size, align) | 4-byte enums | |")
    print("| --- | --- | --- | --- |")
    for name, a, b in zip(names, short, wide):
        print(f"| {name.split('::')[-1]} | {a[0]}, {a[1]} | {b[0]}, {b[1]} | {'*' if a != b else ''} |")


if __name__ == "__main__":
    main(sys.argv[1:])
