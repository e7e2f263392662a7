#!/usr/bin/env bash
# Packs what the GPU machine needs from a build directory made here (the
# executables, stripped; the sample scan is remade there) into DEST, a folder
# of the checkout that git ignores, so a `run` can carry it:
#   tests/gpu-pack.sh BUILD_DIR DEST        e.g. _build _gpu/build
# On the device, `. tests/gpu-env.sh` first (runtime libraries), then
# `tests/run-on-gpu.sh DEST $OUT`.
set -euo pipefail
B=${1:?build dir}
D=${2:?destination}
rm -rf "$D"
mkdir -p "$D/tests" "$D/data"
cp "$B/tomolive" "$D/"
for t in "$B"/tests/test-* "$B"/tests/fuzz-* "$B"/tests/bench-*; do
  [ -f "$t" ] && [ -x "$t" ] && cp "$t" "$D/tests/"
done
[ -f "$B/data/gschemas.compiled" ] && cp "$B/data/gschemas.compiled" "$D/data/"
strip --strip-debug "$D/tomolive" "$D"/tests/* 2>/dev/null || true
du -sh "$D"
