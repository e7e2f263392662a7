#!/usr/bin/env bash
# The frame-stall UI test (sinogram view open, 60 Hz centre drag, the main
# loop's longest stall) with TOMO_STRICT_FRAMES=1, in a real GTK window on the
# GPU machine: Xvfb + VirtualGL's EGL back end from ../shared/gpu-window's
# bundle, set up by tests/gpu-window-env.sh.
#   [VOLUME=1] tests/run-frames-on-gpu.sh PACKED_BUILD GPU_WINDOW_DIR     (OUT set)
# PACKED_BUILD is what tests/gpu-pack.sh made (tomolive, tests/, data/).
# Writes $OUT/frames.tap and prints the drag's numbers (the main loop's longest
# stall among them) and the result.
set -u
B=$(readlink -f "${1:?packed build}")
GW=$(readlink -f "${2:?the gpu-window folder}")
OUT=${OUT:?}
W=/tmp/tomolive-frames
N=87 TAG=frames
. "$(dirname "$0")/gpu-window-env.sh"
echo "frames: libraries not found: $(ldd "$B/tests/test-ui-interaction" | grep -c 'not found')"
ldd "$B/tests/test-ui-interaction" | grep 'not found' | head -5

[ -f "${TOMO_SAMPLE_SCAN:-}" ] || { echo "frames: TOMO_SAMPLE_SCAN not set"; exit 1; }
TOMO_STRICT_FRAMES=1 TOMOLIVE=$B/tomolive timeout -k 3 150 "$P/bin/vglrun" -d egl \
  "$B/tests/test-ui-interaction" -p /tomo/ui/interaction/frame-stalls --verbose >"$OUT/frames.tap" 2>&1
rc=$?
grep -E "centre drag|^ok|^not ok|ERROR|assert|CRITICAL" "$OUT/frames.tap" | head -10
echo "frames: rc=$rc"

# With VOLUME=1: the three views and the 3D pane in the same GPU window
# (test-ui-volume: the GPU store, the ray caster in the NVIDIA GL), the
# screenshots by the bundle's xshot into $OUT/shots.
if [ "${VOLUME:-0}" = 1 ]; then
  mkdir -p "$OUT/shots"
  TOMO_SCREENSHOT_DIR=$OUT/shots TOMO_SCREENSHOT_CMD=$P/bin/xshot TOMOLIVE=$B/tomolive \
    timeout -k 3 150 "$P/bin/vglrun" -d egl "$B/tests/test-ui-volume" --verbose >"$OUT/volume.tap" 2>&1
  rc=$?
  grep -E "3D pane|status:|^ok|^not ok|ERROR|assert" "$OUT/volume.tap" | head -20
  echo "volume: rc=$rc"
fi
