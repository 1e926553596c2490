#!/usr/bin/env bash
# Builds TFLite Micro's library for x86-64 (reference kernels and the Signal library's ops) with the
# shared recipe in ../shared/oracles/tflm/linux, with compression on as the pinned tflite-micro wheel is built (the
# `host` target's structure sizes). One library for every x86-64 harness: the op resolver's set-up test
# (tests/package/test_op_resolver_runs.py), the two-buffer harness (build_tflm_regions.sh) and the shared-arena one
# (build_tflm_shared.sh).
#   build_tflm_x86_64.sh [--print-dir]
# Cached outside the clone: ${TFLPACK_CACHE:-$HOME/.cache/tflpack}/tflm-x86_64-<key>, <key> the sha256 (first 16 hex)
# of the shared sources, the recipe, this script and kissfft's pinned tarball, so a machine builds it once
# (~13 CPU-minutes, 161 sources, and ~1 more for the Signal library's 41).
# The Signal library (signal/micro/kernels, signal/src and its kissfft wrappers) is not in TFLite Micro's
# sources.inc: its sources are added to the recipe's list, kissfft (.ci/fetch_kissfft.sh, downloaded into the
# cache) goes on the include path, and the tflite-micro Python package's op resolver is compiled whole
# (python_ops_resolver.o, every operator the wheel registers, the Signal ones included) for the harnesses.
# The folder gets build/x86_64-comp/libtflm.a, build/x86_64-comp/obj/python/tflite_micro/python_ops_resolver.o
# and cxxflags.txt (the recipe's compile flags, kissfft's folder among them, for the tests' harness).
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
KEY=$( { hash_files "$ORACLE" src prepare.sh linux; sha256sum "$HERE/.ci/build_tflm_x86_64.sh" "$HERE/.ci/fetch_kissfft.sh" | cut -c1-64
         bash "$HERE/.ci/fetch_kissfft.sh" --sha256; } | sha256sum | cut -c1-16)
OUT=$CACHE/tflm-x86_64-$KEY
if [ $PRINT = 1 ]; then echo "$OUT"; exit 0; fi
RESOLVER=build/x86_64-comp/obj/python/tflite_micro/python_ops_resolver.o
[ -f "$OUT/build/x86_64-comp/libtflm.a" ] && [ -f "$OUT/$RESOLVER" ] && [ -f "$OUT/cxxflags.txt" ] && exit 0
command -v g++ >/dev/null 2>&1 || { echo "note: no g++; TFLite Micro's x86-64 library is not built"; exit 0; }
[ -d /usr/include/gemmlowp ] || { command -v apt-get >/dev/null 2>&1 && (apt-get update -qq && apt-get install -y -qq libgemmlowp-dev) >/dev/null 2>&1 || true; }
KISSFFT=$(bash "$HERE/.ci/fetch_kissfft.sh")
mkdir -p "$OUT"
bash "$ORACLE/prepare.sh" "$OUT" >/dev/null
# The Signal library's sources (its tests' generated data and other targets' folders left out).
(cd "$OUT/src" && ls signal/micro/kernels/*.cc signal/src/*.cc signal/src/kiss_fft_wrappers/*.cc \
   | grep -v '_flexbuffers_generated_data\.cc$') >> "$OUT/srcs.txt"
# The recipe sets no ARCHFLAGS for x86-64: kissfft's folder goes there, so cxxflags.txt carries it too.
MK="make -s -f $ORACLE/linux/Makefile TOP=$OUT ARCH=x86_64 COMPRESSION=1 ARCHFLAGS=-I$KISSFFT"
start=$(date +%s)
nice -n 10 $MK -j2 "$OUT/build/x86_64-comp/libtflm.a" "$OUT/$RESOLVER" >"$OUT/build.log" 2>&1 \
  || { tail -20 "$OUT/build.log" >&2; exit 1; }
# The recipe's own compile flags, as make prints them for one object.
one=$(head -1 "$OUT/srcs.txt")
$MK -n -B "$OUT/build/x86_64-comp/obj/${one%.cc}.o" | grep -o ' -std=c++17.* -c ' | sed 's/ -c $//' > "$OUT/cxxflags.txt.tmp"
mv "$OUT/cxxflags.txt.tmp" "$OUT/cxxflags.txt"
echo "built TFLite Micro's x86-64 library (compression on) in $(( $(date +%s) - start )) s: $OUT"
