#!/usr/bin/env bash
# Builds tests/oracle/tflm_shared.cc (several models on one MicroAllocator, one arena) against TFLite Micro's
# x86-64 library built as the pinned tflite-micro wheel is (the shared recipe ../shared/oracles/tflm/linux with
# COMPRESSION=1: the host target's struct sizes). `package A.tflite B.tflite ...` runs it to prove the shared
# arena; tests/package/test_shared_arena.py checks the figure with it.
#   build_tflm_shared.sh [--print-dir | --print-lib]
# Cached outside the clone in ${TFLPACK_CACHE:-$HOME/.cache/tflpack}: the library in tflm-x86_64c-<libkey> (the
# sha256, first 16 hex, of the shared sources and recipe; ~13 CPU-minutes, once per machine), the harness in
# tflm-shared-<key> (<key> adds the harness and this script: a change of the harness relinks only, ~10 CPU-s);
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
hash_files() { (cd "$1" && find "${@:2}" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16; }
LIBKEY=$( { hash_files "$ORACLE" src prepare.sh linux; echo COMPRESSION=1; } | sha256sum | cut -c1-16)
LIB=$CACHE/tflm-x86_64c-$LIBKEY
KEY=$( { echo "$LIBKEY"; sha256sum "$HERE/.ci/build_tflm_shared.sh" "$HERE/tests/oracle/tflm_shared.cc" | cut -c1-64; } \
      | sha256sum | cut -c1-16)
OUT=$CACHE/tflm-shared-$KEY
if [ "${1:-}" = "--print-dir" ]; then echo "$OUT"; exit 0; fi
if [ "${1:-}" = "--print-lib" ]; then echo "$LIB"; exit 0; fi  # the library's folder (build/x86_64-comp, cxxflags.txt)
command -v g++ >/dev/null 2>&1 || { echo "note: no g++; the shared-arena harness is not built"; exit 0; }
MK="make -s -f $ORACLE/linux/Makefile TOP=$LIB ARCH=x86_64 COMPRESSION=1"
if [ ! -f "$LIB/build/x86_64-comp/libtflm.a" ] || [ ! -f "$LIB/cxxflags.txt" ]; then
  [ -d /usr/include/gemmlowp ] || { command -v apt-get >/dev/null 2>&1 && (apt-get update -qq && apt-get install -y -qq libgemmlowp-dev) >/dev/null 2>&1 || true; }
  mkdir -p "$LIB"
  bash "$ORACLE/prepare.sh" "$LIB" >/dev/null
  start=$(date +%s)
  nice -n 10 $MK -j2 "$LIB/build/x86_64-comp/libtflm.a" >"$LIB/build.log" 2>&1 || { tail -20 "$LIB/build.log" >&2; exit 1; }
  one=$(head -1 "$LIB/srcs.txt")  # the recipe's own compile flags, as make prints them for one object
  $MK -n -B "$LIB/build/x86_64-comp/obj/${one%.cc}.o" | grep -o ' -std=c++17.* -c ' | sed 's/ -c $//' > "$LIB/cxxflags.txt.tmp"
  mv "$LIB/cxxflags.txt.tmp" "$LIB/cxxflags.txt"
  echo "built TFLite Micro's x86-64 library (compression on) in $(( $(date +%s) - start )) s: $LIB"
fi
if [ ! -x "$OUT/tflm_shared" ]; then
  mkdir -p "$OUT"
  start=$(date +%s)
  # The op resolver of the tflite-micro Python package without the Signal ops (prepare.sh writes it).
  nice -n 10 g++ $(cat "$LIB/cxxflags.txt") "$HERE/tests/oracle/tflm_shared.cc" "$LIB/harness/ops_resolver_nosignal.cc" \
    "$LIB/build/x86_64-comp/libtflm.a" -Wl,--gc-sections -o "$OUT/tflm_shared.tmp"
  mv "$OUT/tflm_shared.tmp" "$OUT/tflm_shared"
  echo "built the shared-arena harness in $(( $(date +%s) - start )) s: $OUT/tflm_shared"
fi
ln -sfn "$OUT" "$CACHE/tflm-shared"  # where `package A B ...` looks (packager/runtimes/tflm_shared.py)
