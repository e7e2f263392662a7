#!/usr/bin/env bash
# File → volume on disk, end to end, on the GPU machine, with the machine's
# own bandwidths measured in the same run (dd from the page cache, one
# stream and eight files at once into it, sync to the disk), so that the
# floor the disk and the page cache set is shown beside the pipeline:
#   tests/bench-file-volume.sh BUILD_DIR OUT_DIR [WORK_DIR [BUDGET_S]]
# Makes a 2048³ uint16 scan with noise (timed), reconstructs it with -v into
# HDF5 (pwrite and TOMO_VOLUME_WRITE=mmap), a multi-page TIFF and a TIFF
# per slice (each removed before the next: the volume is 34 GB), then times
# the phantom without noise.  Steps that would pass BUDGET_S are skipped.
set -u
. "$(dirname "$0")/bench-common.sh"
bench_args /tmp/fv 230 "$@"   # SIZE: scan and volume side (smaller for a dry run)
G=${DD_GIB:-32}   # GiB each dd write test writes
machine

step "phantom $N × $N × $N uint16, noise (seed 1)"
room 120 && time "$T" phantom --width $N --height $N --projections $N -o "$D/scan.h5"
ls -l "$D/scan.h5"
step "sync (the scan to the disk)"
time sync
mem

step "dd: the scan from the page cache"
dd if="$D/scan.h5" of=/dev/null bs=16M 2>&1 | tail -1
step "dd: $G GiB, one stream, into the page cache"
room 60 && { dd if=/dev/zero of="$D/z" bs=16M count=$((G * 64)) 2>&1 | tail -1; mem; rm -f "$D/z"; }
step "dd: $G GiB as 8 files at once"
if room 50; then
  s=$(date +%s.%N)
  for i in 0 1 2 3 4 5 6 7; do dd if=/dev/zero of="$D/z$i" bs=16M count=$((G * 8)) 2>/dev/null & done
  wait
  awk -v a="$s" -v b="$(date +%s.%N)" -v g="$G" 'BEGIN { printf "  %.2f s = %.2f GB/s\n", b - a, g * 1.073741824 / (b - a) }'
  mem
  rm -f "$D"/z?
fi
step "sync"
time sync

recon () {
  local name=$1; shift
  step "reconstruct → $name $*"
  room 40 || return
  mem
  time "$@" "$T" reconstruct "$D/scan.h5" --rows 0:$N --backend ${BACKEND:-gpu} -v -o "$D/$name" 2>&1 | tail -25
  ls -ld "$D/$name"
  rm -rf "$D/$name"
  time sync
}
recon vol.h5
recon vol.tif
mkdir -p "$D/slices"; recon slices
recon vol.h5 env TOMO_VOLUME_WRITE=mmap
recon vol.tif env TOMO_VOLUME_WRITE=mmap

rm -f "$D/scan.h5"
step "phantom $N × $N × $N uint16, no noise"
room 45 && time "$T" phantom --width $N --height $N --projections $N --no-noise -o "$D/nn.h5"
rm -f "$D/nn.h5"
step done
