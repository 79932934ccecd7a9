#!/usr/bin/env bash
# Several GPUs (a host with two or more), in one command, within about 10 minutes, on a GPU
# machine without GStreamer (the bundle made by ../shared/gpu/make-gst-bundle .gst-bundle):
#  1. build for one architecture (CUDA_ARCH, default 90) in build-mgpu, from scratch, only what the
#     steps below run (the plugin, the two tests, the two benchmarks);
#  2. tests/test_multigpu (suite devices): the split of objects made with device id -1, explicit
#     ids, a device filled on purpose, threads, every sample against its reference; it exits 77
#     with one device, saying which part it skipped;
#  3. tests/test_device_errors (suite devices): launches failed on purpose on device 1 while both
#     devices' objects stream, then a sticky error on device 1 and what the library promises after
#     it; it exits 77 with one device, saying why;
#  4. latency-bench with D = 1 and D = 2 (--devices 1,2) on the issue's rows: 10 s responses at
#     2048- and 128-sample blocks (2048 first: the longer rows come last, where a cut costs
#     least), 4096 channels in 4 objects (what one GPU holds in real time at 128) and 8192 in 8,
#     and one stereo instance (16384 channels, 128 GB of state, took a minute to make on 2x H200
#     and do not fit an H100: a run there spends its limit on them);
#  5. streams-bench with D = 1 and D = 2 on the rows whose per-stream work is the device's:
#     cudaconvolve with 10 s responses, 256 and 1024 pipelines;
#  6. tests/test_device_memory (suite devices): every _device entry point refuses memory of the
#     other device and of another context, and leaves the caller's context as it was;
#  7. every other program of bench/, briefly (a few runs each): on a host of two GPUs each must
#     run to its end and say the device it used (none may fault on another device's memory).
# Each benchmark row of the cuda backend is followed by (streams-bench) or ends with (latency-bench)
# each device's load: objects and state. Logs go to LOGDIR (default $OUT when set, else
# build-mgpu/logs); each step prints how long it took and is cut at its own time limit. The exit
# status is 1 when any step failed (77 from a test, one device, counts as a failure here: this
# script is for two).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source .gst-bundle/activate
source scripts/env.sh
source scripts/gl-standins.sh
logdir=${LOGDIR:-${OUT:-build-mgpu/logs}}
logdir=$(realpath -m "$logdir")
mkdir -p "$logdir"
failed=0

# step NAME LIMIT COMMAND...: runs it under `timeout LIMIT`, its output in LOGDIR/NAME.log, prints
# its time and the log's tail, counts failures (a cut step included).
step() {
  local name=$1 limit=$2 started=$SECONDS status=0
  shift 2
  timeout --signal=INT --kill-after=10 "$limit" "$@" > "$logdir/$name.log" 2>&1 || status=$?
  tail -n "${TAIL:-60}" "$logdir/$name.log"
  case $status in
    0) ;;
    124 | 130 | 137) echo "!! $name cut at its limit of $limit s"; failed=1 ;;
    *) echo "!! $name failed (exit $status)"; failed=1 ;;
  esac
  echo "== $name: $((SECONDS - started)) s"
}

nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader 2>&1 | tee "$logdir/gpus.txt"

rm -rf build-mgpu
TAIL=5 step setup 60 meson setup build-mgpu -Dcuda-arch="${CUDA_ARCH:-90}"
TAIL=5 step build 420 ninja -C build-mgpu tests/test_multigpu tests/test_device_errors \
  tests/test_device_memory bench/latency-bench bench/streams-bench bench/fft-bench \
  bench/launch-bench bench/spectrum-kernel-bench bench/convolve-kernel-bench bench/element-bench \
  bench/spectrum-bench bench/convolve-bench bench/scope-bench plugin/libgstcudafft.so
[ "$failed" = 0 ] || { echo "!! the build failed: $logdir/setup.log, $logdir/build.log"; exit 1; }

export GST_PLUGIN_PATH=$PWD/build-mgpu/plugin
export GST_REGISTRY_1_0=$PWD/build-mgpu/gst-registry-multigpu.bin
export CUDA_MODULE_LOADING=EAGER # as meson sets it for the streams tests

TAIL=40 step multigpu-test 120 build-mgpu/tests/test_multigpu cuda
TAIL=40 step device-errors-test 120 build-mgpu/tests/test_device_errors cuda

step latency-bench 300 build-mgpu/bench/latency-bench --devices 1,2 --backends cuda \
  --ir-seconds 10 --blocks 2048,128 --channels 4096,8192 --instances 1 --max-wall 1.5 \
  --seconds 3

step streams-bench 110 build-mgpu/bench/streams-bench --devices 1,2 --backends cuda \
  --elements convolve10 --streams 256,1024 --warmup 3 --window 2

TAIL=40 step device-memory-test 120 build-mgpu/tests/test_device_memory cuda

# Every other benchmark, briefly: each must end well and name the device it used.
TAIL=8 step fft-bench 60 build-mgpu/bench/fft-bench --runs 5 --calls 4
TAIL=8 step launch-bench 60 build-mgpu/bench/launch-bench --runs 20
TAIL=8 step spectrum-kernel-bench 60 build-mgpu/bench/spectrum-kernel-bench --runs 5
TAIL=8 step convolve-kernel-bench 60 build-mgpu/bench/convolve-kernel-bench --runs 5
TAIL=8 step element-bench 60 build-mgpu/bench/element-bench --runs 1 --seconds 2
TAIL=8 step spectrum-bench 90 build-mgpu/bench/spectrum-bench --runs 1 --seconds 2 --max-wall 20
TAIL=8 step convolve-bench 90 build-mgpu/bench/convolve-bench --runs 1 --seconds 2 --max-wall 20
TAIL=8 step scope-bench 90 build-mgpu/bench/scope-bench --runs 1 --seconds 2 --max-wall 20

echo "== total: $SECONDS s; logs in $logdir"
exit "$failed"
