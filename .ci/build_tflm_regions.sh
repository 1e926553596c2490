#!/usr/bin/env bash
# Builds tflm_regions (tests/oracle/tflm_regions.cc): TFLite Micro set up over two buffers, a persistent and a
# non-persistent one, for the tests of `package --regions` (tests/package/test_regions_runs.py).
#   build_tflm_regions.sh [--print-dir]
# It links against TFLite Micro's x86-64 library as the shared recipe builds it with COMPRESSION=1, the build the
# `host` target models (the tflite-micro wheel's), which .ci/build_tflm_x86_64.sh builds and caches
# (build/x86_64-comp; ~11 CPU-minutes once per machine). The program is cached in
# ${TFLPACK_CACHE:-$HOME/.cache/tflpack}/tflm-regions-<key>/tflm_regions, <key> the sha256 (first 16 hex) of that
# folder's name (itself keyed by the sources and recipe), this script and the harness, with the compile flags
# (cxxflags.txt) and the library (libtflm.a, a link) beside it; the link tflm-regions points at the latest build.
# Without ../shared or g++ it says so and exits 0: the tests that need it then skip, naming the reason.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${TFLPACK_SHARED:-$HERE/../shared}
ORACLE=$SHARED/oracles/tflm
CACHE=${TFLPACK_CACHE:-$HOME/.cache/tflpack}
PRINT=0
if [ "${1:-}" = "--print-dir" ]; then PRINT=1; fi
if [ ! -f "$ORACLE/prepare.sh" ]; then
  [ $PRINT = 1 ] || echo "note: no $ORACLE; tflm_regions is not built (its tests skip)"
  exit 0
fi
TOP=$(bash "$HERE/.ci/build_tflm_x86_64.sh" --print-dir)
KEY=$( { echo "$TOP"; sha256sum "$HERE/.ci/build_tflm_regions.sh" "$HERE/tests/oracle/tflm_regions.cc" | cut -c1-64; } \
       | sha256sum | cut -c1-16)
OUT=$CACHE/tflm-regions-$KEY
if [ $PRINT = 1 ]; then echo "$OUT"; exit 0; fi
[ -x "$OUT/tflm_regions" ] && { ln -sfn "$OUT" "$CACHE/tflm-regions"; exit 0; }
command -v g++ >/dev/null 2>&1 || { echo "note: no g++; tflm_regions is not built"; exit 0; }
bash "$HERE/.ci/build_tflm_x86_64.sh"  # prepares TOP and builds the library (compression on), cached
B=$TOP/build/x86_64-comp
R=$B/obj/python/tflite_micro/python_ops_resolver.o  # the wheel's op resolver, the Signal ops included
[ -f "$B/libtflm.a" ] && [ -f "$R" ] || { echo "note: TFLite Micro's x86-64 library is not built; tflm_regions is not built"; exit 0; }
start=$(date +%s)
# Our harness, compiled with the recipe's own flags (build_tflm_x86_64.sh writes them).
flags=$(cat "$TOP/cxxflags.txt")
mkdir -p "$OUT"
g++ $flags "$HERE/tests/oracle/tflm_regions.cc" "$R" "$B/libtflm.a" \
  -Wl,--gc-sections -o "$OUT/tflm_regions.tmp"
echo "$flags" > "$OUT/cxxflags.txt"  # for the tests that compile the header's own lines against the library
ln -sfn "$B/libtflm.a" "$OUT/libtflm.a"
mv "$OUT/tflm_regions.tmp" "$OUT/tflm_regions"
ln -sfn "$OUT" "$CACHE/tflm-regions"  # where `package --target x86_64-linux --regions` looks (packager/runtimes/tflm_regions.py)
echo "built tflm_regions in $(( $(date +%s) - start )) s: $OUT"
