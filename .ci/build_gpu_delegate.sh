#!/usr/bin/env bash
# Builds the TFLite GPU delegate's memory_management code (../shared/oracles/gpu_delegate: the
# delegate's sources, unmodified, and the gpu_assign harness) once per machine, into
# ${TFLPACK_CACHE:-$HOME/.cache/tflpack}/gpu_delegate-<first 16 hex of the sha256 of the sources
# and this recipe>/gpu_assign. benchmarks/gpu_delegate_oracle.py finds it by the same hash; tests
# that need it skip, saying why, where ../shared is absent or the build failed.
set -euo pipefail
cd "$(dirname "$0")/.."
ORACLE="../shared/oracles/gpu_delegate"
if [ ! -d "$ORACLE" ]; then
  echo "note: $ORACLE is absent; the GPU delegate's comparison tests will be skipped"
  exit 0
fi
need=()
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
pkg-config --exists absl_status 2>/dev/null || need+=(libabsl-dev)
[ -f /usr/include/fp16.h ] || need+=(libfp16-dev)
if [ ${#need[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y -qq "${need[@]}") >/dev/null 2>&1 \
    || echo "note: could not install ${need[*]}; the GPU delegate's comparison tests will be skipped"
fi
# The hash: every file of the oracle (path, NUL, content, NUL; paths in byte order), then this script.
HASH="$( (cd "$ORACLE" && find . -type f ! -path './build/*' | LC_ALL=C sort | while IFS= read -r f; do
          printf '%s\0' "$f"; cat "$f"; printf '\0'; done; cat "$OLDPWD/.ci/build_gpu_delegate.sh") \
        | sha256sum | cut -c1-16)"
OUT="${TFLPACK_CACHE:-$HOME/.cache/tflpack}/gpu_delegate-$HASH"
if [ -x "$OUT/gpu_assign" ]; then
  exit 0
fi
mkdir -p "$OUT.tmp"
if BUILD_DIR="$OUT.tmp" nice -n 10 bash "$ORACLE/build.sh" >"$OUT.tmp/build.log" 2>&1; then
  rm -rf "$OUT" && mv "$OUT.tmp" "$OUT"
  echo "built $OUT/gpu_assign"
else
  echo "note: the GPU delegate's build failed (log: $OUT.tmp/build.log); its comparison tests will be skipped"
fi
