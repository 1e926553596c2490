#!/usr/bin/env bash
# Builds the TFLite Micro fit oracle for each device target (tests/oracle/tflm_fit.cc, linked against
# TFLite Micro built by the shared recipe in ../shared/oracles/tflm for that core and kernel set).
#   build_tflm_targets.sh [--print-dir] [TARGET...]     (default: every target below)
# Cached outside the clone: ${TFLPACK_CACHE:-$HOME/.cache/tflpack}/tflm-targets-<key>/<target>/tflm_fit, where
# <key> is the sha256 (first 16 hex) of the shared sources, the recipes, this script and the harness. The library
# objects are cached by the sources and recipe alone (tflm-lib-<key>), so a change of the harness relinks only.
# `--print-dir` prints that folder and builds nothing (the tests' locator asks it). Without ../shared or the
# arm-none-eabi toolchain it says so and exits 0: the tests that need an oracle then skip, naming the reason.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${TFLPACK_SHARED:-$HERE/../shared}
ORACLE=$SHARED/oracles/tflm
CACHE=${TFLPACK_CACHE:-$HOME/.cache/tflpack}
# target -> "CPU KERNELS" of the shared Cortex-M recipe. Reference kernels compile the same on every core (no
# core-dependent code path changes a buffer), so one M4 build stands for cortex-m0/m3/m4/m7/m33/m55 reference.
# CMSIS-NN sizes its scratch buffers by core family: cortex-m3 is the no-DSP build, cortex-m4 the DSP one.
# MVE code cannot execute here: cortex-m55+cmsis-nn is the recipe's `mvesizes` build, the M4 CMSIS-NN library
# with CMSIS-NN's buffer-size functions compiled for cortex-m55 (MVE) swapped in. Its set-up (AllocateTensors)
# is an M55 build's; its Invoke runs DSP code on MVE-sized buffers, so only set-up counts there
# (packager/runtimes/tflm_targets.py).
declare -A RECIPE=(
  [cortex-m4]="cortex-m4 ref"
  [cortex-m4+cmsis-nn]="cortex-m4 cmsis_nn"
  [cortex-m3+cmsis-nn]="cortex-m3 cmsis_nn"
  [cortex-m55+cmsis-nn]="cortex-m4 cmsis_nn mvesizes"
)
ALL="cortex-m4 cortex-m4+cmsis-nn cortex-m3+cmsis-nn cortex-m55+cmsis-nn"
PRINT=0
if [ "${1:-}" = "--print-dir" ]; then PRINT=1; shift; fi
TARGETS=${*:-$ALL}
if [ ! -f "$ORACLE/prepare.sh" ]; then
  [ $PRINT = 1 ] || echo "note: no $ORACLE; the device-target oracles are not built (their tests skip)"
  exit 0
fi
hash_files() { (cd "$1" && find "${@:2}" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16; }
LIBKEY=$(hash_files "$ORACLE" src prepare.sh cortex-m)
FITKEY=$( { echo "$LIBKEY"; sha256sum "$HERE/.ci/build_tflm_targets.sh" "$HERE/tests/oracle/tflm_fit.cc" | cut -c1-64; } | sha256sum | cut -c1-16)
OUT=$CACHE/tflm-targets-$FITKEY
if [ $PRINT = 1 ]; then echo "$OUT"; exit 0; fi
if ! command -v arm-none-eabi-g++ >/dev/null 2>&1 || ! command -v qemu-arm >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq gcc-arm-none-eabi libnewlib-arm-none-eabi \
       libstdc++-arm-none-eabi-newlib qemu-user libgemmlowp-dev) >/dev/null 2>&1 || true
  fi
  command -v arm-none-eabi-g++ >/dev/null 2>&1 || { echo "note: no arm-none-eabi-g++; device-target oracles not built"; exit 0; }
fi
LIB=$CACHE/tflm-lib-$LIBKEY
mkdir -p "$LIB" "$OUT"
[ -f "$LIB/srcs_ref.txt" ] || bash "$ORACLE/prepare.sh" "$LIB" >/dev/null
MK="make -s -f $ORACLE/cortex-m/Makefile TOP=$LIB RESOLVER=trim"
for t in $TARGETS; do
  [ -n "${RECIPE[$t]:-}" ] || { echo "unknown target $t" >&2; exit 2; }
  [ -x "$OUT/$t/tflm_fit" ] && continue
  read -r cpu kernels variant <<<"${RECIPE[$t]}"
  B=$LIB/build/$cpu-$kernels
  start=$(date +%s)
  # The library, the trimmed op resolver and the Linux-syscall layer, as the shared recipe builds them.
  nice -n 10 $MK CPU="$cpu" KERNELS="$kernels" -j2 "$B/libtflm.a" "$B/obj/harness_trim/ops_resolver_trim.o" \
    "$B/obj/harness_sys/linux_syscalls.o" >"$LIB/build-$cpu-$kernels.log" 2>&1 \
    || { tail -20 "$LIB/build-$cpu-$kernels.log" >&2; exit 1; }
  lib=$B/libtflm.a
  if [ "${variant:-}" = mvesizes ]; then
    nice -n 10 $MK CPU="$cpu" KERNELS="$kernels" "$B-mvesizes/libtflm.a" >>"$LIB/build-$cpu-$kernels.log" 2>&1 \
      || { tail -20 "$LIB/build-$cpu-$kernels.log" >&2; exit 1; }
    lib=$B-mvesizes/libtflm.a
  fi
  # Our harness, compiled with the recipe's own flags (printed by make -n for one object).
  flags=$($MK CPU="$cpu" KERNELS="$kernels" -n -B "$B/obj/harness_trim/ops_resolver_trim.o" | grep -o ' -std=c++17.* -c ' | sed 's/ -c $//')
  mkdir -p "$OUT/$t"
  arm-none-eabi-g++ $flags "$HERE/tests/oracle/tflm_fit.cc" "$B/obj/harness_trim/ops_resolver_trim.o" \
    "$lib" -nostartfiles "$B/obj/harness_sys/linux_syscalls.o" -Wl,--gc-sections -o "$OUT/$t/tflm_fit.tmp"
  mv "$OUT/$t/tflm_fit.tmp" "$OUT/$t/tflm_fit"
  echo "tflm oracle $t: $OUT/$t/tflm_fit ($(( $(date +%s) - start )) s)"
done
ln -sfn "$OUT" "$CACHE/tflm-targets"  # where `package --target` looks (packager/runtimes/tflm_targets.py)
