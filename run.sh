#!/usr/bin/env bash
# tomolive set-up on a fresh Debian/Ubuntu machine.
#   ./run.sh          install what is missing, build, open the viewer on the sample scan
#   ./run.sh test     same set-up, then the whole test suite
#   ./run.sh build    only install and build
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DIR=${BUILD_DIR:-_build}
PACKAGES=(
  meson ninja-build pkg-config gcc g++
  libglib2.0-dev libgtk-4-dev libepoxy-dev libegl-dev
  libhdf5-dev libtiff-dev libfftw3-dev libzmq3-dev libjson-glib-dev
  xvfb xauth dbus dbus-x11 xdotool
)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

install_missing() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "Installing ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
}

build() {
  # The CUDA toolkit is optional: found on PATH or in its usual place.
  if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH=/usr/local/cuda/bin:$PATH
  fi
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    log "Configuring $BUILD_DIR"
    meson setup "$BUILD_DIR" >/dev/null
  fi
  log "Building"
  meson compile -C "$BUILD_DIR"
}

# Counts the individual TAP results of every test program in a meson log;
# prints "passed failed skipped".
count_results() {
  local log_file=$1 passed failed skipped
  passed=$(grep -Ec '^ok [0-9]+' "$log_file" || true)
  skipped=$(grep -Ec '^ok [0-9]+.*# SKIP' "$log_file" || true)
  failed=$(grep -Ec '^not ok [0-9]+' "$log_file" || true)
  echo "$((passed - skipped)) $failed $skipped"
}

run_tests() {
  local status=0 sanitize_status=0 p f s p2=0 f2=0 s2=0
  log "Running the test suite (the ui suite in a virtual X server)"
  # Headless machines get Xvfb; GTK wants a session bus.
  xvfb-run -a -s "-screen 0 1280x800x24" \
    dbus-run-session -- meson test -C "$BUILD_DIR" --print-errorlogs "$@" || status=$?
  read -r p f s < <(count_results "$BUILD_DIR/meson-logs/testlog.txt")
  if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1   # a test program crashed or timed out before reporting
  fi

  # SANITIZE=1 (CI): the unit and live suites again, built with AddressSanitizer
  # and UndefinedBehaviorSanitizer; any report fails the test that caused it.
  if [ "${SANITIZE:-0}" = 1 ]; then
    local asan_dir=${ASAN_BUILD_DIR:-_build-asan}
    log "Running the unit and live suites under AddressSanitizer + UndefinedBehaviorSanitizer ($asan_dir)"
    if [ ! -f "$asan_dir/build.ninja" ]; then
      meson setup "$asan_dir" -Db_sanitize=address,undefined -Dcuda=disabled -Dui=disabled >/dev/null
    fi
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1 \
      meson test -C "$asan_dir" --suite unit --suite live --print-errorlogs || sanitize_status=$?
    read -r p2 f2 s2 < <(count_results "$asan_dir/meson-logs/testlog.txt")
    if [ "$sanitize_status" -ne 0 ] && [ "$f2" -eq 0 ]; then
      f2=1
    fi
    [ "$status" -ne 0 ] || status=$sanitize_status
  fi
  echo "$((p + p2)) passed, $((f + f2)) failed, $((s + s2)) skipped"
  return "$status"
}

install_missing
build
case "${1:-run}" in
  test)
    shift
    run_tests "$@"
    ;;
  build)
    ;;
  run)
    sample="$BUILD_DIR/data/sample.h5"
    if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
      log "No display: reconstructing the middle row of the sample scan instead"
      "$BUILD_DIR/tomolive" info "$sample"
      "$BUILD_DIR/tomolive" reconstruct "$sample" --center 258.87 -o "$BUILD_DIR/sample-slice.tif"
      exit 0
    fi
    exec "$BUILD_DIR/tomolive" "$sample"
    ;;
  *)
    echo "usage: $0 [test|build]" >&2
    exit 2
    ;;
esac
