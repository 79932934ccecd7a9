#!/usr/bin/env bash
# On a GPU machine without GStreamer (such as the project's device machine): build for one
# architecture with the bundle made by ../shared/gpu/make-gst-bundle .gst-bundle, run the whole
# suite (nothing may skip there), then the benchmarks named in BENCH (default: all). Logs go to
# LOGDIR (default $OUT when set, else build-gpu/logs). CUDA_ARCH (default 90) picks the build.
set -uo pipefail
cd "$(dirname "$0")/.."
source .gst-bundle/activate
source scripts/env.sh
logdir=${LOGDIR:-${OUT:-build-gpu/logs}}
mkdir -p "$logdir"
rm -rf build-gpu
{ meson setup build-gpu -Dcuda-arch="${CUDA_ARCH:-90}" && ninja -C build-gpu; } \
  > "$logdir/build.log" 2>&1 || { tail -50 "$logdir/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logdir/device.txt"
git log -1 --format=%H 2>/dev/null | tee -a "$logdir/device.txt"
meson test -C build-gpu --print-errorlogs > "$logdir/tests.log" 2>&1
python3 scripts/summarize-tests.py build-gpu/meson-logs/testlog.json | tee -a "$logdir/tests.log"
grep -E "^ *[0-9]+/[0-9]+ " "$logdir/tests.log" | grep -v " OK " || true
cp build-gpu/meson-logs/testlog.txt "$logdir/" 2>/dev/null
export GST_PLUGIN_PATH=$PWD/build-gpu/plugin GST_REGISTRY_1_0=$PWD/build-gpu/gst-registry.bin
gst-inspect-1.0 cudafft > /dev/null
for bench in ${BENCH-fft-bench launch-bench element-bench spectrum-kernel-bench spectrum-bench convolve-kernel-bench convolve-bench}; do
  [ -x "build-gpu/bench/$bench" ] || continue
  echo "== $bench" | tee "$logdir/$bench.log"
  "build-gpu/bench/$bench" ${BENCH_ARGS:-} >> "$logdir/$bench.log" 2>&1
  echo "exit $?" >> "$logdir/$bench.log"
done
