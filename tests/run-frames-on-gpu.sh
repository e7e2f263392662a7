#!/usr/bin/env bash
# The frame-stall UI test (sinogram view open, 60 Hz centre drag, the main
# loop's longest stall) with TOMO_STRICT_FRAMES=1, in a real GTK window on the
# GPU machine: Xvfb + VirtualGL's EGL back end from ../shared/gpu-window's
# bundle, set up as its run.sh does, with the live-input libraries the
# bundle lacks taken from .gl/ (as tests/run-window-on-gpu.sh does).
#   [VOLUME=1] tests/run-frames-on-gpu.sh PACKED_BUILD GPU_WINDOW_DIR     (OUT set)
# PACKED_BUILD is what tests/gpu-pack.sh made (tomolive, tests/, data/).
# Writes $OUT/frames.tap and prints the drag's numbers (the main loop's longest
# stall among them) and the result.
set -u
B=$(readlink -f "${1:?packed build}")
GW=$(readlink -f "${2:?the gpu-window folder}")
OUT=${OUT:?}
W=/tmp/tomolive-frames
rm -rf "$W" && mkdir -p "$W/xdg" "$W/cache" "$W/home" "$W/gio" /tmp/debroot /tmp/tomolive-extra
chmod 700 "$W/xdg"
tar -xJf "$GW/bundle.tar.xz" -C "$W" || { echo "frames: cannot unpack the bundle"; exit 1; }
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
echo "frames: libraries not found: $(ldd "$B/tests/test-ui-interaction" | grep -c 'not found')"
ldd "$B/tests/test-ui-interaction" | grep 'not found' | head -5

N=87; while [ -e /tmp/.X11-unix/X$N ] || [ -e /tmp/.X$N-lock ]; do N=$((N + 1)); done
export DISPLAY=:$N
LD_LIBRARY_PATH=$P/lib "$P/bin/Xvfb" ":$N" -screen 0 1280x800x24 -nolisten tcp -ac -xkbdir "$P/share/X11/xkb" \
  >"$OUT/frames-Xvfb.log" 2>&1 &
XVFB=$!
trap 'kill $XVFB 2>/dev/null' EXIT
for i in $(seq 1 50); do [ -S /tmp/.X11-unix/X$N ] && break; sleep 0.2; done

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
