#!/usr/bin/env bash
# kissfft, the FFT the Signal library's SignalRfft/SignalIrfft wrap (signal/src/kiss_fft_wrappers/*.cc include
# "kiss_fft.c" and "tools/kiss_fftr.c" inside a namespace per sample type). ../shared/oracles does not hold it, so
# the x86-64 and device builds of TFLite Micro take Debian's source tarball of kissfft 131.1.0 (sha256 pinned; a
# mismatch is refused), unpacked into the cache outside the clone, never into this repository.
#   fetch_kissfft.sh [--print-dir | --sha256]   -> prints the folder to put on the include path
# TFLite Micro pins kissfft v130 (its kissfft_download.sh) with a patch of its own. What matters for the arena is
# the same in both releases (read from both): struct kiss_fft_state {nfft, inverse, factors[64], twiddles[1]},
# struct kiss_fftr_state {substate, tmpbuf, super_twiddles} (a pad only under USE_SIMD), kiss_fft_alloc's size
# sizeof(kiss_fft_state) + (nfft-1) complex (131's KISS_FFT_ALIGN_SIZE_UP is the identity without USE_SIMD) and
# kiss_fftr_alloc's sizeof(kiss_fftr_state) + the sub-FFT's size + 3/2 nfft complex. Two layout changes make 131.1.0
# build as the wrappers expect, both also in TFLite Micro's patch of v130: kiss_fftr.{c,h} live in tools/ (131 moved
# them to the top folder), and the headers' extern "C" becomes extern "C++" (each wrapper's namespace must give
# its own symbols, not one C symbol three times).
set -euo pipefail
VERSION=131.1.0
SHA256=76c1aac87ddb7258f34b08a13f0eebf9e53afa299857568346aa5c82bcafaf1a
URL=http://deb.debian.org/debian/pool/main/k/kissfft/kissfft_${VERSION}.orig.tar.gz
CACHE=${TFLPACK_CACHE:-$HOME/.cache/tflpack}
if [ "${1:-}" = "--sha256" ]; then echo "$SHA256"; exit 0; fi
KEY=$( { echo "$SHA256"; sha256sum "$0" | cut -c1-64; } | sha256sum | cut -c1-16)
OUT=$CACHE/kissfft-$VERSION-$KEY
if [ "${1:-}" = "--print-dir" ]; then echo "$OUT"; exit 0; fi
if [ ! -f "$OUT/tools/kiss_fftr.c" ]; then
  mkdir -p "$CACHE"
  tmp=$(mktemp -d "$CACHE/kissfft-tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  curl -sSfL --retry 3 -o "$tmp/k.tar.gz" "$URL" || wget -q -O "$tmp/k.tar.gz" "$URL"
  got=$(sha256sum "$tmp/k.tar.gz" | cut -c1-64)
  [ "$got" = "$SHA256" ] || { echo "error: $URL has sha256 $got, not the pinned $SHA256" >&2; exit 1; }
  tar xzf "$tmp/k.tar.gz" -C "$tmp"
  src=$tmp/kissfft-$VERSION
  mkdir -p "$src/tools"
  mv "$src/kiss_fftr.c" "$src/kiss_fftr.h" "$src/tools/"
  sed -i 's/extern "C" {/extern "C++" {/' "$src/kiss_fft.h" "$src/tools/kiss_fftr.h"
  grep -q 'extern "C++" {' "$src/kiss_fft.h" && grep -q 'extern "C++" {' "$src/tools/kiss_fftr.h"
  rm -rf "$OUT"; mv "$src" "$OUT"
fi
echo "$OUT"
