#!/usr/bin/env bash
# The test suite: installs the dependencies, builds, runs `meson test`. GPU tests run where a CUDA
# device is present and are reported as skipped elsewhere. CUDA_ARCH=90 (say) builds one GPU
# architecture only, for speed; BUILDDIR picks the build folder (default build-tests).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/install-deps.sh
builddir=${BUILDDIR:-build-tests}
[ -d "$builddir" ] || meson setup "$builddir" ${CUDA_ARCH:+-Dcuda-arch=$CUDA_ARCH}
ninja -C "$builddir"
status=0
meson test -C "$builddir" --print-errorlogs || status=$?
python3 scripts/summarize-tests.py "$builddir/meson-logs/testlog.json"
exit "$status"
