#!/usr/bin/env bash
# Where the host CPU of streams-bench rows goes, on the GPU machine, which has no perf:
#   here, once:  bash scripts/profile-gpu.sh --bundle   (perf and the libraries it loads, from this
#                machine's linux-perf package, into .perf-tools: about 28 MB, ignored by git)
#   on the GPU:  bash scripts/profile-gpu.sh [ELEMENTS] [STREAMS]   with carry [".gst-bundle",
#                ".perf-tools"]; ELEMENTS is streams-bench's --elements (default fft-ifft-mem),
#                STREAMS its --streams (default 64).
# Builds build-gpu (CUDA_ARCH, default 90; no tests), then records each element's row for 3 s
# after its warm-up (perf record --call-graph dwarf at 299 Hz: user space only, which the GPU
# machine's perf_event_paranoid of 2 allows) and writes one report per row to LOGDIR (default
# $OUT): the bench's row, the CPU by thread and by library, and the inclusive share of every
# function on the streaming threads and on the library's threads. perf's own cost makes a row
# dearer than streams-bench alone: compare shares within a profile, figures with streams-bench.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
if [ "${1:-}" = --bundle ]; then
  perf=$(command -v perf) || { echo "no perf here: apt-get install linux-perf" >&2; exit 1; }
  rm -rf .perf-tools && mkdir -p .perf-tools/lib && cp "$(readlink -f "$perf")" .perf-tools/perf
  # every library perf loads but the C runtime's, which the GPU machine has
  ldd .perf-tools/perf | awk '/=> \//{print $3}' | while read -r lib; do
    case $(basename "$lib") in
    libc.so.* | libm.so.* | libstdc++.so.* | libgcc_s.so.*) ;;
    *) cp -L "$lib" .perf-tools/lib/ ;;
    esac
  done
  du -sh .perf-tools
  exit 0
fi
elements=${1:-fft-ifft-mem}
streams=${2:-64}
logdir=$(realpath -m "${LOGDIR:-${OUT:-build-gpu/logs}}")
mkdir -p "$logdir"
source .gst-bundle/activate
source scripts/env.sh
source scripts/gl-standins.sh
rm -rf build-gpu
{ meson setup build-gpu -Dcuda-arch="${CUDA_ARCH:-90}" -Dtests=disabled && ninja -C build-gpu; } \
  > "$logdir/build.log" 2>&1 || { tail -30 "$logdir/build.log"; exit 1; }
export GST_PLUGIN_PATH=$PWD/build-gpu/plugin GST_REGISTRY_1_0=/tmp/profile-registry.bin
perf() { LD_LIBRARY_PATH="$PWD/.perf-tools/lib:${LD_LIBRARY_PATH:-}" .perf-tools/perf "$@"; }
# the registry first, so that its scan is not in the first profile
build-gpu/bench/streams-bench --streams 1 --window 0.5 --elements identity > /dev/null 2>&1
for element in ${elements//,/ }; do
  data=/tmp/profile-$element.data report=$logdir/profile-$element.txt
  # -D: recording starts after the pipelines' start and their 1 s warm-up
  perf record -F 299 --call-graph dwarf,16384 -D 2200 -o "$data" build-gpu/bench/streams-bench \
    --streams "$streams" --window 3 --elements "$element" --backends cuda \
    > /tmp/profile-bench.log 2> /tmp/profile-record.log
  {
    tail -2 /tmp/profile-bench.log
    echo "## by thread"
    perf report -i "$data" --no-children --sort comm -g none 2> /dev/null | grep "%" | head -8
    echo "## by library (self)"
    perf report -i "$data" --no-children --sort dso -g none 2> /dev/null | grep "%" | head -16
    echo "## streaming threads: every function's share, its callees included"
    perf report -i "$data" --children --comm src:src --sort sym -g none --percent-limit 0.7 \
      2> /dev/null | grep "%" | head -110
    echo "## the library's threads"
    perf report -i "$data" --children --comm cudafft-done,cudafft-launch --sort sym -g none \
      --percent-limit 0.5 2> /dev/null | grep "%" | head -40
  } > "$report"
  echo "== $element: $report"
  head -2 "$report"
  rm -f "$data"
done
