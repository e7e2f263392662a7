#!/usr/bin/env bash
# The real GTK window on the GPU machine, through Xvfb + VirtualGL's EGL back
# end (../shared/gpu-window).  That bundle lacks the live-input libraries
# (libzmq, json-glib and theirs): they come from .gl/ and are appended to its
# library path.  On this machine, before the run:
#   cp -r ../shared/gpu-window _gpu/gw            (a git-ignored folder)
#   tests/gpu-pack.sh _build _gpu/b && tar -C _gpu -cJf _gpu/b.tar.xz b && rm -r _gpu/b
# then `run` with carry ["_gpu", ".gl"]:
#   tar -xJf _gpu/b.tar.xz -C _gpu && bash tests/run-window-on-gpu.sh _gpu/b/tomolive _gpu/gw
# Screenshots and report.txt land in $OUT; "Display path: …" is in the logs
# (the window shows it under Details, not in the status bar).
set -u
T=${1:?tomolive built with the viewer for sm_90}
GW=${2:?the gpu-window folder}
mkdir -p /tmp/debroot /tmp/tomolive-extra
for f in .gl/*.deb; do dpkg -x "$f" /tmp/debroot; done
for l in libzmq.so.5 libsodium.so.23 libpgm-5.3.so.0 libnorm.so.1 libjson-glib-1.0.so.0 libbsd.so.0 libmd.so.0; do
  cp -L /tmp/debroot/usr/lib/x86_64-linux-gnu/$l /tmp/tomolive-extra/ 2>/dev/null
done
OUT=${OUT:?} TOMOLIVE=$(readlink -f "$T") EXTRA_LIBDIR=/tmp/tomolive-extra timeout 300 bash "$GW/run.sh" >/dev/null 2>&1
tail -30 "$OUT/report.txt"
