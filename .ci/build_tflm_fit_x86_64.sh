#!/usr/bin/env bash
# Builds the fit oracle of the `x86_64-linux` target (tests/oracle/tflm_fit.cc, the program the device targets
# run under qemu-arm), natively: linked against TFLite Micro's x86-64 library as .ci/build_tflm_x86_64.sh builds it
# from the shared sources (compression on, reference kernels, the Python package's op resolver with the Signal ops).
# `package --target x86_64-linux` runs it to prove the figure; tests/compare/test_tflm_targets.py holds it.
#   build_tflm_fit_x86_64.sh [--print-dir]
# Cached outside the clone: ${TFLPACK_CACHE:-$HOME/.cache/tflpack}/tflm-fit-x86_64-<key>/x86_64-linux/tflm_fit, <key>
# the sha256 (first 16 hex) of the library's folder name (itself keyed by the sources and recipe), this script and
# the harness; the link tflm-fit-x86_64 points at the latest build (where the product looks:
# packager/runtimes/tflm_targets.py). The library costs ~13 CPU-minutes once per machine (shared with the regions
# and shared-arena harnesses); this link ~10 CPU-s. Without ../shared or g++ it says so and exits 0: the tests
# that need it then skip, naming the reason.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${TFLPACK_SHARED:-$HERE/../shared}
ORACLE=$SHARED/oracles/tflm
CACHE=${TFLPACK_CACHE:-$HOME/.cache/tflpack}
PRINT=0
if [ "${1:-}" = "--print-dir" ]; then PRINT=1; fi
if [ ! -f "$ORACLE/prepare.sh" ]; then
  [ $PRINT = 1 ] || echo "note: no $ORACLE; the x86_64-linux fit oracle is not built (its tests skip)"
  exit 0
fi
LIB=$(bash "$HERE/.ci/build_tflm_x86_64.sh" --print-dir)
KEY=$( { echo "$LIB"; sha256sum "$HERE/.ci/build_tflm_fit_x86_64.sh" "$HERE/tests/oracle/tflm_fit.cc" | cut -c1-64; } \
      | sha256sum | cut -c1-16)
OUT=$CACHE/tflm-fit-x86_64-$KEY
if [ $PRINT = 1 ]; then echo "$OUT"; exit 0; fi
command -v g++ >/dev/null 2>&1 || { echo "note: no g++; the x86_64-linux fit oracle is not built"; exit 0; }
bash "$HERE/.ci/build_tflm_x86_64.sh"
B=$LIB/build/x86_64-comp
[ -f "$B/libtflm.a" ] || { echo "note: TFLite Micro's x86-64 library is not built; the x86_64-linux fit oracle is not built"; exit 0; }
if [ ! -x "$OUT/x86_64-linux/tflm_fit" ]; then
  mkdir -p "$OUT/x86_64-linux"
  start=$(date +%s)
  nice -n 10 g++ $(cat "$LIB/cxxflags.txt") "$HERE/tests/oracle/tflm_fit.cc" \
    "$B/obj/python/tflite_micro/python_ops_resolver.o" "$B/libtflm.a" -Wl,--gc-sections \
    -o "$OUT/x86_64-linux/tflm_fit.tmp"
  mv "$OUT/x86_64-linux/tflm_fit.tmp" "$OUT/x86_64-linux/tflm_fit"
  echo "built the x86_64-linux fit oracle in $(( $(date +%s) - start )) s: $OUT/x86_64-linux/tflm_fit"
fi
ln -sfn "$OUT" "$CACHE/tflm-fit-x86_64"  # where `package --target x86_64-linux` looks
