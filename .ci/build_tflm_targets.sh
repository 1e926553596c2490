#!/usr/bin/env bash
# Builds the TFLite Micro fit oracle for each device target (tests/oracle/tflm_fit.cc, linked against
# TFLite Micro built by the shared recipe in ../shared/oracles/tflm for that core and kernel set; armhf-linux by
# the shared 32-bit ARM Linux recipe).
#   build_tflm_targets.sh [--print-dir] [TARGET...]     (default: every target below)
# Cached outside the clone: ${TFLPACK_CACHE:-$HOME/.cache/tflpack}/tflm-targets-<key>/<target>/tflm_fit, where
# <key> is the sha256 (first 16 hex) of the shared sources, the recipes, this script and the harness. The library
# objects are cached by the sources and recipe alone (tflm-lib-<key>; armhf-linux: tflm-lib-linux-<key>), so a
# change of the harness relinks only.
# `--print-dir` prints that folder and builds nothing (the tests' locator asks it). Without ../shared or the
# arm-none-eabi toolchain it says so and exits 0: the tests that need an oracle then skip, naming the reason.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${TFLPACK_SHARED:-$HERE/../shared}
ORACLE=$SHARED/oracles/tflm
CACHE=${TFLPACK_CACHE:-$HOME/.cache/tflpack}
# target -> "CPU KERNELS RESOLVER [VARIANT]" of the shared Cortex-M recipe. Reference kernels compile the same on every core (no
# core-dependent code path changes a buffer), so one M4 build stands for cortex-m0/m3/m4/m7/m33/m55 reference.
# CMSIS-NN sizes its scratch buffers by core family: cortex-m3 is the no-DSP build, cortex-m4 the DSP one.
# MVE code cannot execute here: cortex-m55+cmsis-nn is the recipe's `mvesizes` build, the M4 CMSIS-NN library
# with CMSIS-NN's buffer-size functions compiled for cortex-m55 (MVE) swapped in. Its set-up (AllocateTensors)
# is an M55 build's; its Invoke runs DSP code on MVE-sized buffers, so only set-up counts there
# (packager/runtimes/tflm_targets.py).
declare -A RECIPE=(
  [cortex-m4]="cortex-m4 ref full"
  [cortex-m4+cmsis-nn]="cortex-m4 cmsis_nn full"
  [cortex-m3+cmsis-nn]="cortex-m3 cmsis_nn full"
  [cortex-m55+cmsis-nn]="cortex-m4 cmsis_nn full mvesizes"
  [armhf-linux]="armhf ref full"
)
# CI builds the reference-kernel device targets (bare-metal cortex-m4, 32-bit ARM Linux armhf-linux) and the
# CMSIS-NN builds (DSP, no DSP, and the M4 library with MVE's buffer sizes).
ALL="cortex-m4 armhf-linux cortex-m4+cmsis-nn cortex-m3+cmsis-nn cortex-m55+cmsis-nn"
# The resolver (third word above): full, the fit program registers every operator TFLite Micro's reference kernels
# have, as the tflite-micro Python package's op resolver does (python_ops_resolver.cc, the Signal library's ops
# included: the recipe's library has no Signal kernels, so they are built beside it, in tflm-signal-<key> keyed by
# the library's key and kissfft's pinned tarball, .ci/fetch_kissfft.sh, and linked with it); trim, the recipe's
# 33-operator resolver (kept for quick local builds). TFLPACK_TFLM_RESOLVER=full|trim overrides it for every target.
# Every Cortex-M build compiles through ccache (CCACHE_DIR in the cache folder) when it is there or installable: in its
# preprocessor mode -D and -I are not hashed, only the preprocessed text and the other options, so a reference-kernel
# object whose text -DCMSIS_NN leaves unchanged is compiled once for cortex-m4 and cortex-m4+cmsis-nn (a different
# -mcpu shares nothing). Without ccache the plain compilers build the same objects.
case ${TFLPACK_TFLM_RESOLVER:-} in
  ""|full|trim) ;;
  *) echo "TFLPACK_TFLM_RESOLVER must be full or trim" >&2; exit 2 ;;
esac
resolver_object() { [ "$1" = trim ] && echo obj/harness_trim/ops_resolver_trim.o || echo obj/harness/ops_resolver_nosignal.o; }
PRINT=0
if [ "${1:-}" = "--print-dir" ]; then PRINT=1; shift; fi
TARGETS=${*:-$ALL}
if [ ! -f "$ORACLE/prepare.sh" ]; then
  [ $PRINT = 1 ] || echo "note: no $ORACLE; the device-target oracles are not built (their tests skip)"
  exit 0
fi
hash_files() { (cd "$1" && find "${@:2}" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16; }
LIBKEY=$(hash_files "$ORACLE" src prepare.sh cortex-m)
LINUXKEY=$(hash_files "$ORACLE" src prepare.sh linux)
KISSKEY=$( { bash "$HERE/.ci/fetch_kissfft.sh" --sha256; sha256sum "$HERE/.ci/fetch_kissfft.sh" | cut -c1-64; } | sha256sum | cut -c1-16)
FITKEY=$( { echo "$LIBKEY $LINUXKEY $KISSKEY ${TFLPACK_TFLM_RESOLVER:-}"; sha256sum "$HERE/.ci/build_tflm_targets.sh" "$HERE/tests/oracle/tflm_fit.cc" | cut -c1-64; } | sha256sum | cut -c1-16)
OUT=$CACHE/tflm-targets-$FITKEY
if [ $PRINT = 1 ]; then echo "$OUT"; exit 0; fi
if ! command -v arm-none-eabi-g++ >/dev/null 2>&1 || ! command -v qemu-arm >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq gcc-arm-none-eabi libnewlib-arm-none-eabi \
       libstdc++-arm-none-eabi-newlib qemu-user libgemmlowp-dev) >/dev/null 2>&1 || true
  fi
  command -v arm-none-eabi-g++ >/dev/null 2>&1 || { echo "note: no arm-none-eabi-g++; device-target oracles not built"; exit 0; }
fi
if [[ " $TARGETS " == *" armhf-linux "* ]] && ! command -v arm-linux-gnueabihf-g++ >/dev/null 2>&1 \
    && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y -qq g++-arm-linux-gnueabihf) >/dev/null 2>&1 || true
fi
if ! command -v ccache >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y -qq ccache) >/dev/null 2>&1 || true
fi
CCVARS=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_DIR=$CACHE/ccache
  CCVARS=("CXX=ccache arm-none-eabi-g++" "CC=ccache arm-none-eabi-gcc")  # override the recipe's `:=`
fi
LIB=$CACHE/tflm-lib-$LIBKEY
mkdir -p "$LIB" "$OUT"
[ -f "$LIB/srcs_ref.txt" ] || bash "$ORACLE/prepare.sh" "$LIB" >/dev/null
MK="make -s -f $ORACLE/cortex-m/Makefile TOP=$LIB"
for t in $TARGETS; do
  [ -n "${RECIPE[$t]:-}" ] || { echo "unknown target $t" >&2; exit 2; }
  [ -x "$OUT/$t/tflm_fit" ] && continue
  read -r cpu kernels resolver variant <<<"${RECIPE[$t]}"
  resolver=${TFLPACK_TFLM_RESOLVER:-$resolver}
  ROBJ=$(resolver_object "$resolver")
  start=$(date +%s)
  if [ "$cpu" = armhf ]; then
    # 32-bit ARM Linux (arm-linux-gnueabihf, static): the linux recipe's library and op resolver, in a folder of
    # its own (keyed by that recipe); only the full resolver exists there.
    command -v arm-linux-gnueabihf-g++ >/dev/null 2>&1 || { echo "note: no arm-linux-gnueabihf-g++; $t not built"; continue; }
    LL=$CACHE/tflm-lib-linux-$LINUXKEY
    mkdir -p "$LL"
    [ -f "$LL/srcs.txt" ] || bash "$ORACLE/prepare.sh" "$LL" >/dev/null
    LMK="make -s -f $ORACLE/linux/Makefile TOP=$LL ARCH=armhf"
    LB=$LL/build/armhf
    # A failure here costs this target only (its tests then skip, naming it), not the other builds.
    nice -n 10 $LMK -j2 "$LB/libtflm.a" "$LB/obj/harness/ops_resolver_nosignal.o" >"$LL/build-armhf.log" 2>&1 \
      || { tail -20 "$LL/build-armhf.log" >&2; echo "note: $t not built"; continue; }
    flags=$($LMK -n -B "$LB/obj/harness/ops_resolver_nosignal.o" | grep -o ' -std=c++17.* -c ' | sed 's/ -c $//')
    mkdir -p "$OUT/$t"
    arm-linux-gnueabihf-g++ $flags "$HERE/tests/oracle/tflm_fit.cc" "$LB/obj/harness/ops_resolver_nosignal.o" \
      "$LB/libtflm.a" -Wl,--gc-sections -static -o "$OUT/$t/tflm_fit.tmp" || { echo "note: $t not linked"; continue; }
    mv "$OUT/$t/tflm_fit.tmp" "$OUT/$t/tflm_fit"
    echo "tflm oracle $t: $OUT/$t/tflm_fit ($(( $(date +%s) - start )) s)"
    continue
  fi
  B=$LIB/build/$cpu-$kernels
  # The library, the op resolver and the Linux-syscall layer, as the shared recipe builds them.
  nice -n 10 $MK "${CCVARS[@]}" RESOLVER="$resolver" CPU="$cpu" KERNELS="$kernels" -j2 "$B/libtflm.a" "$B/$ROBJ" \
    "$B/obj/harness_sys/linux_syscalls.o" >"$LIB/build-$cpu-$kernels.log" 2>&1 \
    || { tail -20 "$LIB/build-$cpu-$kernels.log" >&2; exit 1; }
  lib=$B/libtflm.a
  if [ "${variant:-}" = mvesizes ]; then
    nice -n 10 $MK RESOLVER="$resolver" CPU="$cpu" KERNELS="$kernels" "$B-mvesizes/libtflm.a" >>"$LIB/build-$cpu-$kernels.log" 2>&1 \
      || { tail -20 "$LIB/build-$cpu-$kernels.log" >&2; exit 1; }
    lib=$B-mvesizes/libtflm.a
  fi
  # Our harness, compiled with the recipe's own flags (printed by make -n for one object).
  flags=$($MK RESOLVER="$resolver" CPU="$cpu" KERNELS="$kernels" -n -B "$B/$ROBJ" | grep -o ' -std=c++17.* -c ' | sed 's/ -c $//')
  objs="$B/$ROBJ"
  if [ "$resolver" = full ]; then
    # The Signal library (not in TFLite Micro's sources.inc) and the wheel's whole op resolver, compiled by the same
    # recipe with kissfft on the include path (OPT is the one recipe variable free to carry it), in a folder of
    # their own; the fit program links them before the library.
    KISSFFT=$(bash "$HERE/.ci/fetch_kissfft.sh")
    SIG=$CACHE/tflm-signal-$( { echo "$LIBKEY $KISSKEY"; } | sha256sum | cut -c1-16)
    mkdir -p "$SIG"
    [ -f "$SIG/srcs_ref.txt" ] || bash "$ORACLE/prepare.sh" "$SIG" >/dev/null
    SB=$SIG/build/$cpu-$kernels
    sigsrcs=$(cd "$SIG/src" && ls signal/micro/kernels/*.cc signal/src/*.cc signal/src/kiss_fft_wrappers/*.cc \
              | grep -v '_flexbuffers_generated_data\.cc$')
    sigobjs=$(for f in $sigsrcs; do echo "$SB/obj/${f%.cc}.o"; done)
    nice -n 10 make -s -f "$ORACLE/cortex-m/Makefile" "${CCVARS[@]}" TOP="$SIG" RESOLVER=full CPU="$cpu" KERNELS="$kernels" \
      OPT="-O2 -I$KISSFFT" -j2 $sigobjs "$SB/obj/python/tflite_micro/python_ops_resolver.o" \
      >"$SIG/build-$cpu-$kernels.log" 2>&1 || { tail -20 "$SIG/build-$cpu-$kernels.log" >&2; exit 1; }
    rm -f "$SB/libsignal.a"; arm-none-eabi-ar rcs "$SB/libsignal.a" $sigobjs
    objs="$SB/obj/python/tflite_micro/python_ops_resolver.o $SB/libsignal.a"
  fi
  mkdir -p "$OUT/$t"
  arm-none-eabi-g++ $flags "$HERE/tests/oracle/tflm_fit.cc" $objs \
    "$lib" -nostartfiles "$B/obj/harness_sys/linux_syscalls.o" -Wl,--gc-sections -o "$OUT/$t/tflm_fit.tmp"
  mv "$OUT/$t/tflm_fit.tmp" "$OUT/$t/tflm_fit"
  echo "tflm oracle $t: $OUT/$t/tflm_fit ($(( $(date +%s) - start )) s)"
done
ln -sfn "$OUT" "$CACHE/tflm-targets"  # where `package --target` looks (packager/runtimes/tflm_targets.py)
