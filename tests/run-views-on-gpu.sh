#!/usr/bin/env bash
# The three views and the 3D pane in a real GTK window on the GPU machine:
# Xvfb + VirtualGL's EGL back end from ../shared/gpu-window's bundle, set up
# by tests/gpu-window-env.sh.
#   tests/run-views-on-gpu.sh PACKED_BUILD GPU_WINDOW_DIR VIEWS_SO   (OUT set)
# PACKED_BUILD is what tests/gpu-pack.sh made (tomolive, tests/, data/);
# VIEWS_SO is tests/gpu-window-views.c built here (it opens the three views).
# 1. the window tests that need a CUDA device (UI_CASES, "PROGRAM:PATH …";
#    by default test-ui-volume's /tomo/ui/volume/preview-device-fails:
#    interop on the NVIDIA GL context, a device preview that fails, a store
#    that does not fit; and test-ui's /tomo/ui/window/gpu-fault-banner),
#    screenshots into $OUT/shots (UITEST=0: none);
# 2. for each run in RUNS (default "interop keep"; RUNS= for none): the viewer on the sample
#    scan, the three views opened by VIEWS_SO, the bundle's spy logging every
#    title with the path the preview took; a screenshot $OUT/NAME.png after
#    SECS (default 18) seconds.  "keep" runs with TOMO_GPU_FAIL=keep:1: the
#    first preview kept on the device fails and comes through host memory,
#    the one after the centre nudge takes interop again.
set -u
B=$(readlink -f "${1:?packed build}")
GW=$(readlink -f "${2:?the gpu-window folder}")
VIEWS=$(readlink -f "${3:?libtomoviews.so}")
OUT=${OUT:?}
SECS=${SECS:-18}
W=/tmp/tomolive-views
mkdir -p "$OUT/shots"
N=91 TAG=views
. "$(dirname "$0")/gpu-window-env.sh"
echo "views: libraries not found: $(ldd "$B/tests/test-ui-volume" "$B/tomolive" | grep -c 'not found')"

SAMPLE=$W/sample.h5
timeout 60 "$B/tomolive" phantom --width 512 --height 64 --projections 360 --center-offset 3.37 \
  --noise --seed 1 -o "$SAMPLE" >"$OUT/phantom.log" 2>&1 || { echo "views: no sample scan"; tail -3 "$OUT/phantom.log"; }

# Window tests that need a CUDA device under the GL context: "PROGRAM:PATH …".
UI_CASES=${UI_CASES:-test-ui-volume:/tomo/ui/volume/preview-device-fails test-ui:/tomo/ui/window/gpu-fault-banner}
if [ "${UITEST:-1}" = 1 ]; then
  for c in $UI_CASES; do
    prog=${c%%:*} path=${c#*:} log=$OUT/${prog}-$(basename "$path").tap
    TOMO_SAMPLE_SCAN=$SAMPLE TOMO_SCREENSHOT_DIR=$OUT/shots TOMO_SCREENSHOT_CMD=$P/bin/xshot TOMOLIVE=$B/tomolive \
      G_DEBUG=fatal-criticals GSETTINGS_BACKEND=memory \
      timeout -k 3 120 "$P/bin/vglrun" -d egl "$B/tests/$prog" -p "$path" --verbose >"$log" 2>&1
    echo "$prog $path: rc=$?"
    grep -E "3D title|3D tooltip|host volume|after two|store too big|status:|banner:|device label:|max \||^ok|^not ok|SKIP|ERROR|assert" \
      "$log" | cut -c1-300 | head -20
  done
fi

SPY=$P/lib/libtomospy.so
for run in ${RUNS-interop keep}; do
  case $run in
    keep) extra="TOMO_GPU_FAIL=keep:1" ;;
    nofit) extra="TOMO_GPU_MEMORY_LIMIT=1K" ;;
    *) extra="" ;;
  esac
  echo "--- $run: ${extra:-no fault}"
  env $extra VGL_PRELOAD="$SPY:$VIEWS" timeout -k 3 "$SECS" "$P/bin/vglrun" -d egl "$B/tomolive" "$SAMPLE" \
    >"$OUT/$run.log" 2>&1 &
  pid=$!
  sleep $((SECS - 2))
  "$P/bin/xshot" "$OUT/$run.png" >/dev/null 2>&1
  wait $pid
  echo "exit status $? (124 = ended by the timeout, as planned)"
  grep -E "^\[views\]|GL_RENDERER|STATUS-BAR PATH|label: (GPU|CPU) store|3D preview|CRITICAL|WARNING|rror" "$OUT/$run.log" \
    | grep -Ev "object_path|session bus" | cut -c1-300 | head -14
done
