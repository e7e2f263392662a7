#!/usr/bin/env bash
# The three views and the 3D pane in a real GTK window on the GPU machine:
# Xvfb + VirtualGL's EGL back end from ../shared/gpu-window's bundle, set up
# as tests/run-frames-on-gpu.sh does (the live-input libraries from .gl/).
#   tests/run-views-on-gpu.sh PACKED_BUILD GPU_WINDOW_DIR VIEWS_SO   (OUT set)
# PACKED_BUILD is what tests/gpu-pack.sh made (tomolive, tests/, data/);
# VIEWS_SO is tests/gpu-window-views.c built here (it opens the three views).
# 1. test-ui-volume's /tomo/ui/volume/preview-device-fails (interop on the
#    NVIDIA GL context, a device preview that fails, a store that does not
#    fit), screenshots into $OUT/shots;
# 2. for each run in RUNS (default "interop keep"): the viewer on the sample
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
rm -rf "$W" && mkdir -p "$W/xdg" "$W/cache" "$W/home" "$W/gio" /tmp/debroot /tmp/tomolive-extra "$OUT/shots"
chmod 700 "$W/xdg"
tar -xJf "$GW/bundle.tar.xz" -C "$W" || { echo "views: cannot unpack the bundle"; exit 1; }
P=$W/tl
for f in .gl/*.deb; do dpkg -x "$f" /tmp/debroot; done
for l in libzmq.so.5 libsodium.so.23 libpgm-5.3.so.0 libnorm.so.1 libjson-glib-1.0.so.0 libbsd.so.0 libmd.so.0; do
  cp -L /tmp/debroot/usr/lib/x86_64-linux-gnu/$l /tmp/tomolive-extra/ 2>/dev/null
done
for j in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json; do
  [ -f "$j" ] && { export __EGL_VENDOR_LIBRARY_FILENAMES=$j; break; }
done
export LD_LIBRARY_PATH=$P/lib:/usr/local/nvidia/lib64:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib:/tmp/tomolive-extra
export PATH=$P/bin:$PATH XLOCALEDIR=$P/share/X11/locale
export GSETTINGS_SCHEMA_DIR=$B/data GSETTINGS_BACKEND=memory
export GIO_MODULE_DIR=$W/gio GTK_A11Y=none NO_AT_BRIDGE=1
export XDG_RUNTIME_DIR=$W/xdg XDG_CACHE_HOME=$W/cache XDG_CONFIG_HOME=$W/home HOME=$W/home
export XDG_DATA_DIRS=$P/share LC_ALL=C.UTF-8 LANG=C.UTF-8 FONTCONFIG_FILE=$W/fonts.conf
cat >"$FONTCONFIG_FILE" <<XML
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig><dir>$P/share/fonts</dir><cachedir>$W/cache/fontconfig</cachedir></fontconfig>
XML
unset WAYLAND_DISPLAY DBUS_SESSION_BUS_ADDRESS LD_PRELOAD
export GDK_BACKEND=x11
mkdir -p /tmp/vxk /tmp/.X11-unix && chmod 1777 /tmp/.X11-unix
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$P/lib" "$P/bin/xkbcomp" >/tmp/vxk/xkbcomp
chmod 755 /tmp/vxk/xkbcomp
echo "views: libraries not found: $(ldd "$B/tests/test-ui-volume" "$B/tomolive" | grep -c 'not found')"

N=91; while [ -e /tmp/.X11-unix/X$N ] || [ -e /tmp/.X$N-lock ]; do N=$((N + 1)); done
export DISPLAY=:$N
LD_LIBRARY_PATH=$P/lib "$P/bin/Xvfb" ":$N" -screen 0 1280x800x24 -nolisten tcp -ac -xkbdir "$P/share/X11/xkb" \
  >"$OUT/views-Xvfb.log" 2>&1 &
XVFB=$!
trap 'kill $XVFB 2>/dev/null' EXIT
for i in $(seq 1 50); do [ -S /tmp/.X11-unix/X$N ] && break; sleep 0.2; done

SAMPLE=$W/sample.h5
timeout 60 "$B/tomolive" phantom --width 512 --height 64 --projections 360 --center-offset 3.37 \
  --noise --seed 1 -o "$SAMPLE" >"$OUT/phantom.log" 2>&1 || { echo "views: no sample scan"; tail -3 "$OUT/phantom.log"; }

if [ "${UITEST:-1}" = 1 ]; then
  TOMO_SAMPLE_SCAN=$SAMPLE TOMO_SCREENSHOT_DIR=$OUT/shots TOMO_SCREENSHOT_CMD=$P/bin/xshot TOMOLIVE=$B/tomolive \
    G_DEBUG=fatal-criticals GSETTINGS_BACKEND=memory \
    timeout -k 3 120 "$P/bin/vglrun" -d egl "$B/tests/test-ui-volume" -p /tomo/ui/volume/preview-device-fails \
    --verbose >"$OUT/ui-volume-gpu.tap" 2>&1
  echo "ui-volume preview-device-fails: rc=$?"
  grep -E "3D title|3D tooltip|host volume|after two|store too big|status:|^ok|^not ok|SKIP|ERROR|assert" \
    "$OUT/ui-volume-gpu.tap" | head -20
fi

SPY=$P/lib/libtomospy.so
for run in ${RUNS:-interop keep}; do
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
