#!/usr/bin/env bash
# Runs everything that needs a CUDA device, directly from a build directory
# (the GPU machine's meson may not read a build dir made elsewhere):
# the gpu suite and the GPU paths of the unit tests, compute-sanitizer
# memcheck, racecheck, initcheck and synccheck, and `tomolive bench`.
# Logs go to OUT.
#   tests/run-on-gpu.sh BUILD_DIR OUT_DIR [--quick | --faults | --tests]
# --faults: only the device-fault tests and the initcheck / synccheck pass
# (a few minutes); --tests: only the test programs, no sanitizer, no bench
# (leaves a call's time for targeted sanitizer runs and a bench).
set -u
B=${1:?build dir}
OUT=${2:?output dir}
QUICK=${3:-}
mkdir -p "$OUT"
export TOMOLIVE=$B/tomolive TOMO_SAMPLE_SCAN=$B/data/sample.h5
export G_DEBUG=gc-friendly,fatal-warnings GSETTINGS_BACKEND=memory
export G_TEST_SRCDIR=$(dirname "$0") G_TEST_BUILDDIR=$B/tests

# The sample scan is made at build time; make it here if the build dir
# travelled without it (same parameters as data/meson.build).
if [ ! -f "$TOMO_SAMPLE_SCAN" ]; then
  mkdir -p "$(dirname "$TOMO_SAMPLE_SCAN")"
  "$TOMOLIVE" phantom --width 512 --height 64 --projections 360 --center-offset 3.37 \
    --noise --seed 1 -o "$TOMO_SAMPLE_SCAN" || exit 1
fi

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.draw,temperature.gpu --format=csv >"$OUT/gpu.csv" 2>&1
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

# initcheck (device memory read before it was written) and synccheck
# (barriers in divergent code, bad __syncwarp masks) on each kernel family
# and every other GPU test; the fault tests under memcheck too, since their
# error paths free what the failed setup had allocated.
# SAN_TIMEOUT: seconds per sanitizer run (default 120; rc 124 when cut).
extra_sanitizers () {
  local T=${SAN_TIMEOUT:-120}
  [ -x "$CS" ] || { echo "compute-sanitizer: not found"; return; }
  for tool in initcheck synccheck; do
    for t in test-gpu test-gpu-plane test-gpu-fault test-gpu-rowchange; do
      timeout "$T" "$CS" --tool $tool --report-api-errors no "$B/tests/$t" >"$OUT/$tool-$t.log" 2>&1
      echo "$tool $t: rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/$tool-$t.log" | tail -1)"
    done
    bp_cases=()
    for k in standard texture alu hybrid; do
      bp_cases+=(-p /tomo/gpu/bp/$k/linear-1slice/w1001-p37-roi -p /tomo/gpu/bp/$k/nearest-2slice/w257-p7
                 -p /tomo/gpu/bp/$k/linear-2slice/phantom-w255-p90)
    done
    timeout "$T" "$CS" --tool $tool --report-api-errors no "$B/tests/test-gpu-bp" "${bp_cases[@]}" \
      >"$OUT/$tool-bp.log" 2>&1
    echo "$tool bp (4 kernels × 3 cases): rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/$tool-bp.log" | tail -1)"
    timeout "$T" "$CS" --tool $tool --report-api-errors no "$B/tests/test-live-accumulate" -p /tomo/live/accumulate/gpu \
      >"$OUT/$tool-live-accumulate.log" 2>&1
    echo "$tool live accumulate: rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/$tool-live-accumulate.log" | tail -1)"
  done
  timeout "$T" "$CS" --tool memcheck --report-api-errors no --leak-check full "$B/tests/test-gpu-fault" \
    >"$OUT/memcheck-gpu-fault.log" 2>&1
  echo "memcheck test-gpu-fault: rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/memcheck-gpu-fault.log" | tail -1)"
}

if [ "$QUICK" = "--faults" ]; then
  "$B/tests/test-gpu-fault" --tap >"$OUT/test-gpu-fault.tap" 2>&1
  echo "test-gpu-fault: rc=$? $(grep -c '^ok' "$OUT/test-gpu-fault.tap") ok, $(grep -c '^not ok' "$OUT/test-gpu-fault.tap") not ok, $(grep -c 'SKIP' "$OUT/test-gpu-fault.tap") skipped"
  extra_sanitizers
  exit 0
fi
passed=0; failed=0; skipped=0
for t in test-gpu test-gpu-bp test-gpu-plane test-gpu-live-volume test-gpu-center test-gpu-rowchange test-gpu-storefill test-raw-rows test-volume-writer test-hdf5-direct test-engine-centers test-gpu-fault test-gpu-preprocess test-plane test-gpu-gl test-backend test-backend-store test-engine test-volume-export test-gpu-rows test-cli test-bench test-fbp test-io test-filter test-preprocess test-phantom test-center test-geometry test-hardening test-hdf5-faults test-live-accumulate test-live test-live-parse; do
  [ -x "$B/tests/$t" ] || continue
  start=$(date +%s%N)
  "$B/tests/$t" --tap >"$OUT/$t.tap" 2>&1
  rc=$?
  p=$(grep -Ec '^ok [0-9]+' "$OUT/$t.tap"); s=$(grep -Ec '^ok [0-9]+.*# SKIP' "$OUT/$t.tap")
  f=$(grep -Ec '^not ok [0-9]+' "$OUT/$t.tap")
  [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
  passed=$((passed + p - s)); skipped=$((skipped + s)); failed=$((failed + f))
  printf '%-16s rc=%d  ok %d  skip %d  fail %d  %d ms\n' "$t" "$rc" "$((p - s))" "$s" "$f" \
    "$(( ($(date +%s%N) - start) / 1000000 ))"
done
echo "$passed passed, $failed failed, $skipped skipped"
grep -h "GPU .* vs CPU\|rel L2" "$OUT"/test-engine.tap "$OUT"/test-engine-centers.tap | head -20
[ "$QUICK" = "--tests" ] && exit 0

if [ -x "$CS" ]; then
  # The out-of-memory test fails cudaMalloc on purpose: API errors are not memory errors.
  "$CS" --tool memcheck --report-api-errors no --leak-check full "$B/tests/test-gpu" >"$OUT/memcheck-gpu.log" 2>&1
  echo "memcheck test-gpu: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck-gpu.log" | tail -1)"
  if [ -x "$B/tests/test-gpu-rowchange" ]; then
    "$CS" --tool memcheck --report-api-errors no --leak-check full "$B/tests/test-gpu-rowchange" >"$OUT/memcheck-rowchange.log" 2>&1
    echo "memcheck test-gpu-rowchange: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck-rowchange.log" | tail -1)"
  fi
  if [ -x "$B/tests/test-gpu-storefill" ]; then
    "$CS" --tool memcheck --report-api-errors no --leak-check full "$B/tests/test-gpu-storefill" >"$OUT/memcheck-storefill.log" 2>&1
    echo "memcheck test-gpu-storefill: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck-storefill.log" | tail -1)"
  fi
  if [ -x "$B/tests/test-gpu-rows" ]; then
    "$CS" --tool memcheck --report-api-errors no --leak-check full "$B/tests/test-gpu-rows" >"$OUT/memcheck-gpu-rows.log" 2>&1
    echo "memcheck test-gpu-rows: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck-gpu-rows.log" | tail -1)"
  fi
  for k in standard texture alu hybrid; do
    "$CS" --tool memcheck --report-api-errors no "$B/tests/test-gpu-bp" \
      -p /tomo/gpu/bp/$k/linear-1slice/w1001-p37-roi -p /tomo/gpu/bp/$k/nearest-2slice/w257-p7 \
      -p /tomo/gpu/bp/$k/linear-1slice/w65-p5000 -p /tomo/gpu/bp/$k/nearest-4slice/w130-p31-center129 \
      >"$OUT/memcheck-bp-$k.log" 2>&1
    echo "memcheck bp $k: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck-bp-$k.log" | tail -1)"
    "$CS" --tool racecheck "$B/tests/test-gpu-bp" \
      -p /tomo/gpu/bp/$k/linear-1slice/w1001-p37-roi -p /tomo/gpu/bp/$k/linear-2slice/phantom-w255-p90 \
      >"$OUT/racecheck-bp-$k.log" 2>&1
    echo "racecheck bp $k: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck-bp-$k.log" | tail -1)"
  done
  if [ -x "$B/tests/test-gpu-plane" ]; then
    "$CS" --tool memcheck --report-api-errors no --leak-check full "$B/tests/test-gpu-plane" >"$OUT/memcheck-plane.log" 2>&1
    echo "memcheck test-gpu-plane: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck-plane.log" | tail -1)"
    "$CS" --tool racecheck "$B/tests/test-gpu-plane" -p /tomo/gpu/store/planes-half >"$OUT/racecheck-plane.log" 2>&1
    echo "racecheck test-gpu-plane: $(grep -E 'RACECHECK SUMMARY' "$OUT/racecheck-plane.log" | tail -1)"
    # The tilt kernel and its texture+ALU hybrid on a small half store.
    timeout "${SAN_TIMEOUT:-120}" "$CS" --tool racecheck "$B/tests/test-gpu-plane" \
      -p /tomo/gpu/store/tilt-small-half >"$OUT/racecheck-plane-tilt.log" 2>&1
    echo "racecheck test-gpu-plane tilt-small-half: rc=$? $(grep -E 'RACECHECK SUMMARY' "$OUT/racecheck-plane-tilt.log" | tail -1)"
    # The tile kernel's wide path (bulk copies, mbarriers) on a small store.
    for tool in racecheck synccheck; do
      timeout "${SAN_TIMEOUT:-120}" "$CS" --tool $tool "$B/tests/test-gpu-plane" \
        -p /tomo/gpu/store/tile-wide-small >"$OUT/$tool-plane-wide.log" 2>&1
      echo "$tool test-gpu-plane tile-wide-small: rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/$tool-plane-wide.log" | tail -1)"
    done
  fi
  "$CS" --tool memcheck --report-api-errors no --leak-check full "$B/tests/test-backend-store" \
    -p /tomo/backend-store/gpu/plane -p /tomo/backend-store/gpu/errors -p /tomo/backend-store/gpu/volume >"$OUT/memcheck-backend-store.log" 2>&1
  echo "memcheck test-backend-store gpu: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck-backend-store.log" | tail -1)"
  "$CS" --tool memcheck --report-api-errors no "$B/tests/test-live-accumulate" -p /tomo/live/accumulate/gpu \
    >"$OUT/memcheck-live-accumulate.log" 2>&1
  echo "memcheck live accumulate: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck-live-accumulate.log" | tail -1)"
  "$CS" --tool memcheck --report-api-errors no "$B/tests/test-engine" >"$OUT/memcheck-engine.log" 2>&1
  echo "memcheck test-engine: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck-engine.log" | tail -1)"
fi
extra_sanitizers

[ "$QUICK" = "--quick" ] && exit 0
"$B/tomolive" bench --sizes 1024,2048,4096 --volume 2048 --tune --runs 20 \
  --sm-clock "$(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)" \
  --mem-clock "$(nvidia-smi --query-gpu=clocks.mem --format=csv,noheader)" >"$OUT/bench.md" 2>&1
echo "bench: rc=$?"
"$B/tomolive" bench --interop >"$OUT/bench-interop.md" 2>&1
echo "bench --interop: rc=$?"
[ "$QUICK" = "--quick" ] || { "$B/tomolive" bench --planes --sizes 2048 --runs 10 >"$OUT/bench-planes.md" 2>&1; echo "bench --planes: rc=$?"; }

# Where the time goes in the 1-slice linear case at 2048² × 2048: pipe
# utilisation of the kernels (texture vs shared memory vs FP units).
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ] && [ -x "$NCU" ] && [ -z "${NO_NCU:-}" ]; then
  for k in bp_standard bp_texture bp_alu bp_hybrid; do
    "$NCU" --kernel-name "$k" --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
      --section Occupancy --section InstructionStats \
      --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,l1tex__texin_sm2tex_req_cycles_active.avg.pct_of_peak_sustained_elapsed,l1tex__f_wavefronts.avg.pct_of_peak_sustained_elapsed,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tex.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active \
      "$B/tomolive" bench --sizes 2048 --kernels texture,alu,hybrid --runs 20 --no-filter \
      >"$OUT/ncu-$k.txt" 2>&1
    echo "ncu $k: rc=$?"
  done
else
  echo "ncu: not found"
fi
