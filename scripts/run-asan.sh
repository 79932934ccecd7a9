#!/usr/bin/env bash
# The CPU suites under AddressSanitizer (with LeakSanitizer) and UndefinedBehaviorSanitizer: any
# invalid access, leak or undefined behaviour fails the run. The hostile suite (seeded random
# hostile input on every element) runs here too; the memory suite does not (resident memory means
# nothing under ASan; it skips itself). CPU backend only (the CUDA tests skip here;
# compute-sanitizer covers them on a GPU machine, see docs/testing.md). BUILDDIR picks the build
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
# So the scan loads in-process only the plugins the suites use (GStreamer's core, base and good
# sets): others a machine may have (plugins-bad's OpenNI2 driver, say) leak at load time, which
# would fail LeakSanitizer for code that is not ours. An absolute path: the tests run in folders
# of their own.
plugins=$(realpath -m "$builddir/asan-system-plugins")
rm -rf "$plugins" && mkdir -p "$plugins"
dpkg -L libgstreamer1.0-0 gstreamer1.0-plugins-base gstreamer1.0-plugins-good 2>/dev/null \
  | grep '/gstreamer-1.0/[^/]*\.so$' | xargs -r ln -sf -t "$plugins"
for needed in libgstcoreelements.so libgstapp.so libgstaudiotestsrc.so libgstaudiofx.so; do
  [ -e "$plugins/$needed" ] || { echo "run-asan.sh: $needed not found (dpkg -L)" >&2; exit 1; }
done
export GST_PLUGIN_SYSTEM_PATH_1_0=$plugins
# intercept_tls_get_addr=0: GCC 12's LeakSanitizer misreads glibc 2.36's dynamic TLS (a range such
# as 0xa60-0x800001b62 for a dlopen'ed library's TLS), and its tracer dies on it ("Tracer caught
# signal 11", exit 1) in forked check children whose threads hold such TLS when the leak check
# runs; without the interception the dynamic TLS is not scanned (no pointer the suites keep lives
# only there) and the check runs to its end.
export ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:intercept_tls_get_addr=0
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
meson test -C "$builddir" --print-errorlogs --suite fft --suite stft --suite spectrum --suite convolve --suite matrix --suite executor --suite scope --suite features --suite elements \
  --suite hostile --timeout-multiplier 3 || status=$?
python3 scripts/summarize-tests.py "$builddir/meson-logs/testlog.json"
exit "$status"
