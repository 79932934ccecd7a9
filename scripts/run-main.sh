#!/usr/bin/env bash
# The main job: installs the dependencies, builds everything (GPU code for sm_75 to sm_90 plus PTX),
# runs the demo (GPU when usable, CPU otherwise) and, where a CUDA device is present, the
# benchmark against cuFFT.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/install-deps.sh
[ -d build ] || meson setup build
ninja -C build
./build/examples/fft-demo
if [ -x build/bench/fft-bench ]; then
  status=0
  ./build/bench/fft-bench || status=$?
  if [ "$status" = 77 ]; then
    echo "fft-bench: skipped, no CUDA device on this machine"
  elif [ "$status" != 0 ]; then
    exit "$status"
  fi
else
  echo "fft-bench: not built (no CUDA toolkit found)"
fi
