#!/usr/bin/env bash
# The test suite: installs the dependencies, builds, runs `meson test`. GPU tests run where a CUDA
# device is present and are reported as skipped elsewhere, with the reason they print. The build is
# scripts/build.sh's, the main job's too (BUILDDIR, default build; GPU code for this machine's
# GPUs, or every architecture without one; CUDA_ARCH=90, say, chooses when it is first configured).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/install-deps.sh
builddir=${BUILDDIR:-build}
BUILDDIR=$builddir bash scripts/build.sh
status=0
meson test -C "$builddir" --print-errorlogs || status=$?
python3 scripts/summarize-tests.py "$builddir/meson-logs/testlog.json"
exit "$status"
