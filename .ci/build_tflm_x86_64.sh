#!/usr/bin/env bash
# Builds TFLite Micro's library for x86-64 (reference kernels, every operator but the Signal library's) with the
# shared recipe in ../shared/oracles/tflm/linux, with compression on as the pinned tflite-micro wheel is built (the
# `host` target's structure sizes). One library for every x86-64 harness: the op resolver's set-up test
# (tests/package/test_op_resolver_runs.py), the two-buffer harness (build_tflm_regions.sh) and the shared-arena one
# (build_tflm_shared.sh).
#   build_tflm_x86_64.sh [--print-dir]
# Cached outside the clone: ${TFLPACK_CACHE:-$HOME/.cache/tflpack}/tflm-x86_64-<key>, <key> the sha256 (first 16 hex)
# of the shared sources, the recipe and this script, so a machine builds it once (~13 CPU-minutes, 161 sources).
# The folder gets build/x86_64-comp/libtflm.a and cxxflags.txt (the recipe's compile flags, for the tests' harness).
# Without ../shared or g++ it says so and exits 0: the tests that need the library then skip, naming the reason.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${TFLPACK_SHARED:-$HERE/../shared}
ORACLE=$SHARED/oracles/tflm
CACHE=${TFLPACK_CACHE:-$HOME/.cache/tflpack}
PRINT=0
if [ "${1:-}" = "--print-dir" ]; then PRINT=1; fi
if [ ! -f "$ORACLE/prepare.sh" ]; then
  [ $PRINT = 1 ] || echo "note: no $ORACLE; TFLite Micro's x86-64 library is not built (its tests skip)"
  exit 0
fi
hash_files() { (cd "$1" && find "${@:2}" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16; }
KEY=$( { hash_files "$ORACLE" src prepare.sh linux; sha256sum "$HERE/.ci/build_tflm_x86_64.sh" | cut -c1-64; } | sha256sum | cut -c1-16)
OUT=$CACHE/tflm-x86_64-$KEY
if [ $PRINT = 1 ]; then echo "$OUT"; exit 0; fi
[ -f "$OUT/build/x86_64-comp/libtflm.a" ] && [ -f "$OUT/cxxflags.txt" ] && exit 0
command -v g++ >/dev/null 2>&1 || { echo "note: no g++; TFLite Micro's x86-64 library is not built"; exit 0; }
[ -d /usr/include/gemmlowp ] || { command -v apt-get >/dev/null 2>&1 && (apt-get update -qq && apt-get install -y -qq libgemmlowp-dev) >/dev/null 2>&1 || true; }
mkdir -p "$OUT"
bash "$ORACLE/prepare.sh" "$OUT" >/dev/null
MK="make -s -f $ORACLE/linux/Makefile TOP=$OUT ARCH=x86_64 COMPRESSION=1"
start=$(date +%s)
nice -n 10 $MK -j2 "$OUT/build/x86_64-comp/libtflm.a" >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log" >&2; exit 1; }
# The recipe's own compile flags, as make prints them for one object.
one=$(head -1 "$OUT/srcs.txt")
$MK -n -B "$OUT/build/x86_64-comp/obj/${one%.cc}.o" | grep -o ' -std=c++17.* -c ' | sed 's/ -c $//' > "$OUT/cxxflags.txt.tmp"
mv "$OUT/cxxflags.txt.tmp" "$OUT/cxxflags.txt"
echo "built TFLite Micro's x86-64 library (compression on) in $(( $(date +%s) - start )) s: $OUT"
