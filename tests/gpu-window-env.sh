# Sourced by the GPU machine's window scripts (tests/run-frames-on-gpu.sh,
# tests/run-views-on-gpu.sh): ../shared/gpu-window's bundle unpacked into $W,
# its environment as its run.sh sets it, the live-input libraries it lacks
# from .gl/ (as tests/run-window-on-gpu.sh does), and Xvfb started on a free
# display from $N (DISPLAY, XVFB: its pid, killed on exit; its log
# $OUT/$TAG-Xvfb.log).  Needs B (packed build), GW (the gpu-window folder),
# W, N, TAG and OUT; sets P (the unpacked bundle).
rm -rf "$W" && mkdir -p "$W/xdg" "$W/cache" "$W/home" "$W/gio" /tmp/debroot /tmp/tomolive-extra
chmod 700 "$W/xdg"
tar -xJf "$GW/bundle.tar.xz" -C "$W" || { echo "$TAG: cannot unpack the bundle"; exit 1; }
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

while [ -e /tmp/.X11-unix/X$N ] || [ -e /tmp/.X$N-lock ]; do N=$((N + 1)); done
export DISPLAY=:$N
LD_LIBRARY_PATH=$P/lib "$P/bin/Xvfb" ":$N" -screen 0 1280x800x24 -nolisten tcp -ac -xkbdir "$P/share/X11/xkb" \
  >"$OUT/$TAG-Xvfb.log" 2>&1 &
XVFB=$!
trap 'kill $XVFB 2>/dev/null' EXIT
for i in $(seq 1 50); do [ -S /tmp/.X11-unix/X$N ] && break; sleep 0.2; done
