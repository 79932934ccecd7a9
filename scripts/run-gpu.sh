#!/usr/bin/env bash
# Everything GPU-side in one command, on a GPU machine without GStreamer (such as the project's
# device machine), with the bundle made by ../shared/gpu/make-gst-bundle .gst-bundle:
#  1. build for one architecture (CUDA_ARCH, default 90) in build-gpu, from scratch;
#  2. the whole suite (nothing may skip there, but multigpu-cuda and device-errors-cuda on a host
#     with one GPU: they skip the parts that need two, saying so; scripts/run-multigpu.sh runs them
#     on two); MESON_TEST_ARGS, when set, goes to meson test: on a two-H200 host the whole suite
#     runs past one device command's 10 minutes, so split it over two calls, e.g. with
#     MESON_TEST_ARGS="--no-suite memory --no-suite load" and then "--suite memory --suite load";
#  3. with SANITIZE=1, compute-sanitizer over the library's CUDA test programs, side by side:
#     memcheck with --leak-check full over fft-accuracy, fft-device, fft-signals, stft, spectrum,
#     convolve, matrix, matrix-device, executor-cuda, scope, features, features-model and
#     features-device (with the cuda argument), scope-backends, the hostile element program (two
#     scenarios per element, in one process), cudamatrixconvolve's element and SOFA programs and
#     cudamelspectrogram's element program; racecheck over fft-device, executor-cuda, features
#     (its frame kernel's shared-memory reductions), stft and scope (the mixed-radix kernels'
#     barriers between their two buffers); each capped at SANITIZE_TIMEOUT seconds (default 300);
#     one summary line per program;
#  4. the installed files checked from a staging folder (scripts/check-install.sh; the demo there
#     runs on the GPU);
#  5. the benchmarks, one after the other on a quiet GPU, each with the arguments of its entry in
#     bench/RESULTS.md (the list below); BENCH="fft-bench launch-bench" picks some (BENCH= none),
#     BENCH_ARGS, when set, replaces every picked benchmark's own arguments. scope-bench's
#     spectrascope rows need gst-plugins-bad in the bundle (its audiovisualizers plugin needs only
#     base libraries): GST_BUNDLE_EXTRA=gstreamer1.0-plugins-bad ../shared/gpu/make-gst-bundle.
# The SOFA tests (cudamatrixconvolve-sofa-*) need libmysofa and a python3 with netCDF4, which
# such a machine lacks: bring libmysofa in the bundle (GST_BUNDLE_EXTRA="libmysofa1 libmysofa-dev"
# ../shared/gpu/make-gst-bundle .gst-bundle) and netCDF4's wheels for the machine's python3 in
# .pywheels (pip download --only-binary=:all: --no-deps --python-version 3.12 --platform
# manylinux_2_28_x86_64 -d .pywheels netCDF4 cftime certifi), carried beside the bundle: they are
# installed under /tmp and put on PYTHONPATH. Without them the build says the tests are not built.
# Logs go to LOGDIR (default $OUT when set, else build-gpu/logs); each step prints how long it
# took. The exit status is 1 when any step failed.
# shellcheck disable=SC2317 # the functions run through step
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source .gst-bundle/activate
source scripts/env.sh
source scripts/gl-standins.sh
if compgen -G ".pywheels/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/cudafft-pysite .pywheels/*.whl &&
    export PYTHONPATH=/tmp/cudafft-pysite${PYTHONPATH:+:$PYTHONPATH}
fi
logdir=${LOGDIR:-${OUT:-build-gpu/logs}}
logdir=$(realpath -m "$logdir")
failed=0

# The benchmarks and their arguments: the commands of bench/RESULTS.md.
benchmarks=(
  "fft-bench --runs 100"
  "fft-bench --runs 100 --size 400,480,1000,3000"
  "launch-bench --runs 100"
  "element-bench --runs 5"
  "element-bench --runs 5 --pinned-input --channels 64 --backend cuda"
  "element-bench --chain --runs 5 --channels 64 --buffer 4096"
  "spectrum-kernel-bench"
  "spectrum-bench --runs 3"
  "convolve-kernel-bench --runs 50"
  "features-kernel-bench --runs 50"
  "convolve-bench --runs 3 --max-wall 4"
  "scope-bench --runs 1 --max-wall 4"
  "streams-bench --streams 1,64,256 --window 2"
  "latency-bench --max-wall 1.5 --seconds 3 --channels 1,256,1024,4096 --instances 1,64,256,1024"
  "latency-bench --format f64 --blocks 2048 --ir-seconds 1 --channels 256,1024 --instances 256 --max-wall 1.5 --seconds 3"
  "matrix-bench --seconds 10 --max-wall 10"
)
default_bench=$(for b in "${benchmarks[@]}"; do echo "${b%% *}"; done | uniq | xargs)

# step NAME COMMAND...: runs it, prints its time (and a failure), counts failures.
step() {
  local name=$1 started=$SECONDS status=0
  shift
  "$@" || status=$?
  [ "$status" = 0 ] || { echo "!! $name failed (exit $status)"; failed=1; }
  echo "== $name: $((SECONDS - started)) s"
  return "$status"
}

build() {
  rm -rf build-gpu
  mkdir -p "$logdir"
  { meson setup build-gpu -Dcuda-arch="${CUDA_ARCH:-90}" && ninja -C build-gpu; } \
    > "$logdir/build.log" 2>&1 || { tail -50 "$logdir/build.log"; return 1; }
  grep -E "tests not built|SOFA files" "$logdir/build.log" || true
}

suite() {
  local status=0
  # shellcheck disable=SC2086 # the arguments are words
  meson test -C build-gpu --print-errorlogs ${MESON_TEST_ARGS:-} > "$logdir/tests.log" 2>&1 ||
    status=$?
  python3 scripts/summarize-tests.py build-gpu/meson-logs/testlog.json | tee -a "$logdir/tests.log"
  grep -E "^ *[0-9]+/[0-9]+ " "$logdir/tests.log" | grep -v " OK " || true
  cp build-gpu/meson-logs/testlog.txt "$logdir/" 2>/dev/null
  return "$status"
}

# sanitize TOOL PROGRAM [ARG]: one compute-sanitizer run in the background, its log in LOGDIR.
sanitize() {
  local tool=$1 program=$2 arg=${3:-}
  local log=$logdir/sanitize-$tool-$program${arg:+-$arg}.log
  local extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  # the executor's failure tests make launches fail on purpose: memory errors still count there,
  # CUDA API errors do not
  [ "$program" = test_executor_cuda ] && extra+=(--report-api-errors no)
  (
    started=$SECONDS
    status=0
    timeout -k 10 "${SANITIZE_TIMEOUT:-300}" "$sanitizer" --tool "$tool" "${extra[@]}" \
      --error-exitcode 3 "build-gpu/tests/$program" ${arg:+"$arg"} > "$log" 2>&1 || status=$?
    summary=$(grep -E "^=+ .*SUMMARY" "$log" | sed 's/^=* //' | paste -sd ';' -)
    case $status in
    0) verdict=clean ;;
    3) verdict="SANITIZER ERRORS" ;;
    77) verdict="SKIPPED: no device" ;;
    124) verdict="TIMED OUT after ${SANITIZE_TIMEOUT:-300} s" ;;
    *) verdict="FAILED (exit $status)" ;;
    esac
    printf '%-9s %-28s %-20s %4d s  %s\n' "$tool" "$program $arg" "$verdict" \
      $((SECONDS - started)) "$summary" > "$log.summary"
    exit "$status"
  ) &
}

sanitizers() {
  local pids=() status=0
  sanitizer=$(command -v compute-sanitizer)
  for candidate in "$(dirname "$(command -v nvcc)")/compute-sanitizer" \
    /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    [ -n "$sanitizer" ] || { [ -x "$candidate" ] && sanitizer=$candidate; }
  done
  [ -n "$sanitizer" ] || { echo "compute-sanitizer: not found beside nvcc nor on PATH"; return 1; }
  for program in test_fft_accuracy test_fft_signals test_fft_device test_stft test_spectrum \
    test_convolve test_matrix test_matrix_device test_executor_cuda test_scope test_features \
    test_features_model test_features_device; do
    sanitize memcheck "$program" cuda
    pids+=($!)
  done
  sanitize memcheck test_scope_backends
  pids+=($!)
  # hostile input on every element, on the GPU: a process of its own (no fork per test, which the
  # sanitizer would have to follow), the plugin of this build, two scenarios per element (and 8
  # damaged SOFA files where there is a set to damage)
  (
    export GST_PLUGIN_PATH=$PWD/build-gpu/plugin GST_REGISTRY_FORK=no CK_FORK=no \
      GST_REGISTRY_1_0=$PWD/build-gpu/gst-registry-sanitize.bin CUDAFFT_TEST_HOSTILE_SCENARIOS=2 \
      CUDAFFT_TEST_SOFA_FUZZ_FILES=8
    sanitize memcheck hostile cuda
    pids=($!)
    # cudamatrixconvolve: every path of its element test, and its HRTF sets where built
    sanitize memcheck cudamatrixconvolve_element cuda
    pids+=($!)
    # cudamelspectrogram: every path of its element test (the features kernels through the element)
    sanitize memcheck cudamelspectrogram_element cuda
    pids+=($!)
    if [ -x build-gpu/tests/cudamatrixconvolve_sofa ]; then
      CUDAFFT_TEST_PYTHON=$(command -v python3) CUDAFFT_TEST_MAKE_SOFA=$PWD/tests/make_sofa.py \
        sanitize memcheck cudamatrixconvolve_sofa cuda
      pids+=($!)
    fi
    status=0
    for pid in "${pids[@]}"; do wait "$pid" || status=1; done
    exit "$status"
  ) &
  pids+=($!)
  for program in test_fft_device test_executor_cuda test_features test_stft test_scope; do
    sanitize racecheck "$program" cuda
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  cat "$logdir"/sanitize-*.log.summary | tee "$logdir/sanitize.txt"
  rm -f "$logdir"/sanitize-*.log.summary
  return "$status"
}

install_check() {
  local status=0
  BUILDDIR=build-gpu STAGING=build-gpu/staging bash scripts/check-install.sh \
    > "$logdir/install-check.log" 2>&1 || status=$?
  tail -1 "$logdir/install-check.log"
  return "$status"
}

benchmark() {
  local entry=$1 name=${1%% *} args=
  [ "$entry" != "$name" ] && args=${entry#* }
  [ -n "${BENCH_ARGS+set}" ] && args=$BENCH_ARGS
  if [ ! -x "build-gpu/bench/$name" ]; then
    echo "$name: not built" | tee -a "$logdir/$name.log"
    return 1
  fi
  local status=0
  echo "== $name $args" | tee -a "$logdir/$name.log"
  # shellcheck disable=SC2086 # the arguments are words
  "build-gpu/bench/$name" $args >> "$logdir/$name.log" 2>&1 || status=$?
  echo "exit $status" >> "$logdir/$name.log"
  return "$status"
}

started=$SECONDS
mkdir -p "$logdir"
step build build || { echo "== total: $((SECONDS - started)) s"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logdir/device.txt"
git log -1 --format=%H 2>/dev/null | tee -a "$logdir/device.txt"
step suite suite
if [ "${SANITIZE:-0}" = 1 ]; then
  step compute-sanitizer sanitizers
fi
step install-check install_check
export GST_PLUGIN_PATH=$PWD/build-gpu/plugin GST_REGISTRY_1_0=$PWD/build-gpu/gst-registry.bin
gst-inspect-1.0 cudafft > /dev/null || { echo "!! the build's plugin does not load"; failed=1; }
rm -f "$logdir"/*-bench.log
for name in ${BENCH-$default_bench}; do
  picked=0
  for entry in "${benchmarks[@]}"; do
    [ "${entry%% *}" = "$name" ] || continue
    picked=1
    step "$entry" benchmark "$entry"
  done
  [ "$picked" = 1 ] || step "$name" benchmark "$name"
done
echo "== total: $((SECONDS - started)) s"
exit "$failed"
