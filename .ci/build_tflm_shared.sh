#!/usr/bin/env bash
# Builds tests/oracle/tflm_shared.cc (several models on one MicroAllocator, one arena) against TFLite Micro's
# x86-64 library built as the pinned tflite-micro wheel is (the shared recipe ../shared/oracles/tflm/linux with
# COMPRESSION=1: the host target's struct sizes). `package A.tflite B.tflite ...` runs it to prove the shared
# arena; tests/package/test_shared_arena.py checks the figure with it.
#   build_tflm_shared.sh [--print-dir | --print-lib]
# Cached outside the clone in ${TFLPACK_CACHE:-$HOME/.cache/tflpack}: the library where .ci/build_tflm_x86_64.sh
# builds it (~13 CPU-minutes, once per machine), the harness in tflm-shared-<key> (<key>: that folder's name, the
# harness and this script: a change of the harness relinks only, ~10 CPU-s);
# the link tflm-shared points at the latest build (where the product looks). Without ../shared or g++ it says
# so and exits 0: the tests then skip, naming the reason.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${TFLPACK_SHARED:-$HERE/../shared}
ORACLE=$SHARED/oracles/tflm
CACHE=${TFLPACK_CACHE:-$HOME/.cache/tflpack}
if [ ! -f "$ORACLE/prepare.sh" ]; then
  [ -n "${1:-}" ] || echo "note: no $ORACLE; the shared-arena harness is not built (its tests skip)"
  exit 0
fi
LIB=$(bash "$HERE/.ci/build_tflm_x86_64.sh" --print-dir)  # the x86-64 library (compression on), cached there
KEY=$( { echo "$LIB"; sha256sum "$HERE/.ci/build_tflm_shared.sh" "$HERE/tests/oracle/tflm_shared.cc" | cut -c1-64; } \
      | sha256sum | cut -c1-16)
OUT=$CACHE/tflm-shared-$KEY
if [ "${1:-}" = "--print-dir" ]; then echo "$OUT"; exit 0; fi
if [ "${1:-}" = "--print-lib" ]; then echo "$LIB"; exit 0; fi  # the library's folder (build/x86_64-comp, cxxflags.txt)
command -v g++ >/dev/null 2>&1 || { echo "note: no g++; the shared-arena harness is not built"; exit 0; }
bash "$HERE/.ci/build_tflm_x86_64.sh"
[ -f "$LIB/build/x86_64-comp/libtflm.a" ] || { echo "note: TFLite Micro's x86-64 library is not built; the shared-arena harness is not built"; exit 0; }
if [ ! -x "$OUT/tflm_shared" ]; then
  mkdir -p "$OUT"
  start=$(date +%s)
  # The op resolver of the tflite-micro Python package, the Signal ops included (build_tflm_x86_64.sh builds it).
  nice -n 10 g++ $(cat "$LIB/cxxflags.txt") "$HERE/tests/oracle/tflm_shared.cc" \
    "$LIB/build/x86_64-comp/obj/python/tflite_micro/python_ops_resolver.o" \
    "$LIB/build/x86_64-comp/libtflm.a" -Wl,--gc-sections -o "$OUT/tflm_shared.tmp"
  mv "$OUT/tflm_shared.tmp" "$OUT/tflm_shared"
  echo "built the shared-arena harness in $(( $(date +%s) - start )) s: $OUT/tflm_shared"
fi
ln -sfn "$OUT" "$CACHE/tflm-shared"  # where `package A B ...` looks (packager/runtimes/tflm_shared.py)
