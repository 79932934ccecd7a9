#!/usr/bin/env bash
# Builds the plugin against GStreamer VERSION (made once per machine by build-gstreamer.sh, in a
# cache outside the clone) and runs the whole default suite against it but the Python examples
# (suite examples: PyGObject is the system's), the upstream comparison tests (spectrum-upstream,
# convolve-upstream) against that version's own spectrum and audiofirfilter. Build folder
# build-gst-VERSION (BUILDDIR picks another).
#
#   scripts/test-gstreamer.sh VERSION [MESON_OPTION...]
#
# Meson options after the version replace the default -Dcuda=disabled: the CPU suite is the same
# either way (the CUDA tests skip on a machine without a GPU), and the CUDA kernels take most of a
# build's time on 2 cores. Give -Dcuda-arch=90 (one GPU architecture) to build the CUDA parts too:
# the plugin's GStreamer-CUDA code (CUDA memory, shared contexts) is compiled only with the CUDA
# backend, so a version whose CUDA library changed is checked that way (CI does it for one version;
# the GPU machine runs such a build, docs/platforms.md). -Dbench=disabled always: the benchmarks
# are no part of the suite.
set -euo pipefail

# NAME=the processor time (user + system, whole seconds) of every program this shell ran so far:
# the build's and the suite's cost, which the wall-clock time on a shared machine does not say
cpu_now() {
  times > "$times_file" # the shell's own, then its children's (in a pipe: a subshell's)
  printf -v "$1" '%s' "$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/);
    printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$times_file")"
}

main() {
  version=${1:?usage: test-gstreamer.sh VERSION [MESON_OPTION...]}
  shift
  options=("$@")
  [ ${#options[@]} -gt 0 ] || options=(-Dcuda=disabled)
  cd "$(dirname "$0")/.."
  if ! command -v nvcc > /dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
  started=$SECONDS
  prefix=$(bash scripts/build-gstreamer.sh "$version" | tail -1)
  built_gst=$((SECONDS - started))
  [ -e "$prefix/.complete" ] || { echo "test-gstreamer: no GStreamer $version" >&2; exit 1; }

  # this version alone: its pkg-config files first (the system's GStreamer may be another version;
  # Debian 12's CUDA-library files unpacked in .deps are not looked at), its libraries and plugins
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export GST_PLUGIN_SYSTEM_PATH_1_0=$prefix/lib/gstreamer-1.0
  export PATH=$prefix/bin:$PATH
  unset GST_PLUGIN_PATH GST_PLUGIN_PATH_1_0 GST_PLUGIN_SCANNER GST_PLUGIN_SCANNER_1_0

  builddir=${BUILDDIR:-build-gst-$version}
  times_file=$(mktemp)
  trap 'rm -f "$times_file"' EXIT
  local cpu0 cpu1 cpu2
  cpu_now cpu0
  at=$SECONDS
  if [ ! -d "$builddir" ]; then
    meson setup "$builddir" -Dbench=disabled "${options[@]}"
  fi
  ninja -C "$builddir" -j 2
  built_plugin=$((SECONDS - at))
  cpu_now cpu1

  # the elements the tests load are this version's: its core in the test programs, its plugins
  found=$(pkg-config --modversion gstreamer-1.0)
  [ "$found" = "$version" ] || { echo "test-gstreamer: pkg-config finds GStreamer $found" >&2; exit 1; }
  for program in "$builddir/tests/spectrum_upstream" "$builddir/tests/convolve_upstream"; do
    lib=$(ldd "$program" | awk '/libgstreamer-1.0.so/ {print $3}')
    case $lib in
    "$prefix"/*) ;;
    *) echo "test-gstreamer: $program loads $lib, not GStreamer $version's" >&2; exit 1 ;;
    esac
  done
  for element in spectrum audiofirfilter; do
    file=$(gst-inspect-1.0 "$element" | awk '/^  Filename/ {print $2}')
    case $file in
    "$prefix"/*) ;;
    *) echo "test-gstreamer: $element comes from '$file', not GStreamer $version's" >&2; exit 1 ;;
    esac
  done
  gst-inspect-1.0 --plugin "$builddir/plugin/libgstcudafft.so" | grep -E '^  (Description|Version)'

  at=$SECONDS
  status=0
  # all but the Python examples: PyGObject's GStreamer overrides are the system's, which load the
  # system's GStreamer typelibs (this build has no introspection) against this version's libraries
  meson test -C "$builddir" --print-errorlogs --no-suite examples || status=$?
  cpu_now cpu2
  python3 scripts/summarize-tests.py "$builddir/meson-logs/testlog.json"
  echo "test-gstreamer: GStreamer $version: its build ${built_gst} s (0: cached), the plugin's" \
    "${built_plugin} s ($((cpu1 - cpu0)) s of processor time), the suite $((SECONDS - at)) s" \
    "($((cpu2 - cpu1)) s of processor time), status $status"
  exit "$status"
}

# the whole script is read before it runs (main, and the exit on the same line)
main "$@"; exit $?
