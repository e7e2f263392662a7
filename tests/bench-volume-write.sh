#!/usr/bin/env bash
# One-file volume outputs (HDF5, multi-page TIFF) against the machine's
# write floors, in one run on the GPU machine:
#   tests/bench-volume-write.sh BUILD_DIR OUT_DIR [WORK_DIR [BUDGET_S]]
# Checks the writer's modes bit for bit (test-volume-writer, and the GPU
# path's volume against slice-by-slice reconstruction in the mode of
# MODE_NEW), makes a 2048³ uint16 scan without noise, measures the floors
# with bench-write-floor (32 GiB buffered into one file and into 8 files,
# the same with the page cache prefaulted and the writeback started early,
# O_DIRECT), then reconstructs the whole scan into vol.h5 and vol.tif with
# TOMO_VOLUME_WRITE=pwrite (the default) and MODE_NEW while the budget
# lasts.  Each output is removed before the next.
set -u
. "$(dirname "$0")/bench-common.sh"
bench_args /tmp/vw 170 "$@"
NEW=${MODE_NEW:-mmap}
machine

step "tests: the writer's modes; the GPU volume in mode $NEW"
timeout 60 "$B/tests/test-volume-writer" --tap 2>&1 | grep -E '^(ok|not ok)'
TOMO_VOLUME_WRITE=$NEW timeout 60 "$B/tests/test-volume-export" --tap -p /tomo/volume/formats/gpu \
  -p /tomo/volume/cancel/gpu 2>&1 | grep -E '^(ok|not ok)'

step "phantom $N × $N × $N uint16, no noise"
time "$T" phantom --width $N --height $N --projections $N --no-noise -o "$D/scan.h5"
step sync
time sync
mem

step "floors (bench-write-floor)"
room 50 && "$B/tests/bench-write-floor" "$D" $(( $(left) - 70 > 50 ? 50 : $(left) - 70 )) \
  buffered:8:8:-:32 buffered:1:8:-:32 prefault+flush:1:8:-:32 direct:1:16:falloc:8 \
  prefault:1:8:-:32
rm -f "$D"/floor-*

recon () {
  local name=$1 mode=$2
  step "reconstruct → $name, TOMO_VOLUME_WRITE=$mode"
  room 18 || return
  mem
  time TOMO_VOLUME_WRITE=$mode "$T" reconstruct "$D/scan.h5" --rows 0:$N --backend ${BACKEND:-gpu} -v \
    -o "$D/$name" 2>&1 | grep -E 'slices of|write \(|delivery thread in|GPUs;|rror'
  mem
  rm -f "$D/$name"
  sync
}
recon vol.h5 pwrite
recon vol.h5 "$NEW"
recon vol.tif pwrite
recon vol.tif "$NEW"
rm -f "$D/scan.h5"
step done
