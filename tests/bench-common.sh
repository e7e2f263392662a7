# Sourced by the file → volume bench scripts (bench-file-volume.sh,
# bench-volume-write.sh): their arguments, timing steps, the budget, and
# the machine.
TIMEFORMAT='  wall %R s'

# bench_args DEFAULT_WORK_DIR DEFAULT_BUDGET_S BUILD_DIR OUT_DIR [WORK_DIR [BUDGET_S]]
# sets B, OUT, D, BUDGET, T (tomolive), N (side: $SIZE or 2048) and START.
bench_args () {
  local dir=$1 budget=$2
  shift 2
  B=${1:?build dir}
  OUT=${2:?output dir}
  D=${3:-$dir}
  BUDGET=${4:-$budget}
  T=$B/tomolive
  N=${SIZE:-2048}
  START=$(date +%s)
  mkdir -p "$OUT" "$D"
}

left () { echo $((BUDGET - ($(date +%s) - START))); }
step () { echo; echo "== $(date -u +%T) (+$(( $(date +%s) - START )) s) $*"; }
mem () { grep -E '^(Dirty|Writeback|Cached|MemFree):' /proc/meminfo | tr -s ' ' | tr '\n' ' '; echo; }
# Only when at least $1 seconds are left.
room () { [ "$(left)" -ge "$1" ] || { echo "  skipped: $(left) s left"; return 1; }; }

# The GPU and its clocks, cores, memory, the work folder's file system and
# the kernel's dirty-page limits.
machine () {
  step machine
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem --format=csv,noheader
  echo "  kernel $(uname -r); cores $(nproc); $(free -g | awk '/Mem:/ {print $2 " GiB RAM"}')"
  findmnt -no SOURCE,FSTYPE,OPTIONS -T "$D"
  df -hT "$D" | tail -1
  echo "  vm.dirty_ratio $(cat /proc/sys/vm/dirty_ratio) background $(cat /proc/sys/vm/dirty_background_ratio)" \
       "bytes $(cat /proc/sys/vm/dirty_bytes)/$(cat /proc/sys/vm/dirty_background_bytes)" \
       "expire $(cat /proc/sys/vm/dirty_expire_centisecs)"
  mem
}
