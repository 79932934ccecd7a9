#!/usr/bin/env bash
# The CPU suites under AddressSanitizer (with LeakSanitizer) and UndefinedBehaviorSanitizer: any
# invalid access, leak or undefined behaviour fails the run. The hostile suite (seeded random
# hostile input on every element) runs here too; the memory suite does not (resident memory means
# nothing under ASan; it skips itself). CPU backend only (the CUDA tests
# skip here; compute-sanitizer covers them on a GPU machine, see README). BUILDDIR picks the build
# folder (default build-asan).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
builddir=${BUILDDIR:-build-asan}
[ -d "$builddir" ] || meson setup "$builddir" -Dcuda=disabled -Db_sanitize=address,undefined \
  -Db_lundef=false
ninja -C "$builddir"
# The plugin is loaded in the test process (not GStreamer's scanner, which has no ASan runtime);
# a registry scanned without ASan would have refused it.
rm -f "$builddir"/tests/gst-registry-*.bin
export GST_REGISTRY_FORK=no
export ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
meson test -C "$builddir" --print-errorlogs --suite fft --suite stft --suite spectrum --suite convolve --suite elements \
  --suite hostile --timeout-multiplier 3 || status=$?
python3 scripts/summarize-tests.py "$builddir/meson-logs/testlog.json"
exit "$status"
