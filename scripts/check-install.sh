#!/usr/bin/env bash
# The install as a user gets it. `meson install --destdir` of a configured build (BUILDDIR,
# default build, the one README's commands make) into a staging folder (STAGING, default
# $BUILDDIR/staging, emptied first), then, from the staged files only:
#  - gst-inspect-1.0 of every element with no other plugin path (GST_PLUGIN_SYSTEM_PATH_1_0 empty),
#    GST_PLUGIN_PATH at the staged plugin folder, a fresh registry, and no folder holding a
#    libcudafft in LD_LIBRARY_PATH: the plugin must find the staged libcudafft through its RUNPATH
#    ($ORIGIN/.., plugin/meson.build);
#  - where the build has cudamatrixconvolve's SOFA reader (built with libmysofa) and Debian's
#    libmysofa1 has installed its HRTF set: the staged plugin reads the set through the staged
#    reader, which it finds from its own file (libexecdir/gst-cudafft relative to it; the
#    system's plugins in the path too, for audiotestsrc);
#  - scripts/check_install_fft.c and examples/fft_demo.c compiled against the staged headers and
#    library through the staged cudafft.pc (PKG_CONFIG_SYSROOT_DIR puts the staging folder in front
#    of its paths) and run with the staged libdir in front of LD_LIBRARY_PATH, as any application
#    needs where the library is not in the system's library path.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
builddir=${BUILDDIR:-build}
staging=$(realpath -m "${STAGING:-$builddir/staging}")
elements=(cudafft cudaifft cudaspectrum cudaconvolve cudamatrixconvolve cudaspectrumscope cudamelspectrogram)

rm -rf "$staging"
log=$builddir/meson-logs/install-check.log
meson install -C "$builddir" --destdir "$staging" > "$log" 2>&1 || { tail -30 "$log"; exit 1; }

# Where the build installs each file (prefix, libdir and includedir as configured).
installed() {
  meson introspect "$builddir" --installed |
    python3 -c 'import json, sys; print(*[v for k, v in json.load(sys.stdin).items() if k.endswith(sys.argv[1])])' "$1"
}
plugin=$staging$(installed /libgstcudafft.so)
pc=$staging$(installed /cudafft.pc)
libdir=$(dirname "$(dirname "$pc")")
if [ ! -f "$plugin" ] || [ ! -f "$pc" ] || [ ! -e "$libdir/libcudafft.so" ]; then
  echo "check-install: the staged install lacks the plugin, cudafft.pc or libcudafft.so" >&2
  exit 1
fi

# The plugin resolves libcudafft to the staged copy on its own.
found=$(env -u LD_LIBRARY_PATH ldd "$plugin" | grep -F "libcudafft.so.0 =>" || true)
if [ "$(realpath -ms "$(awk '{ print $3 }' <<< "$found")")" != "$libdir/libcudafft.so.0" ]; then
  echo "check-install: the staged plugin does not find the staged library:${found:- no libcudafft}" >&2
  exit 1
fi

# LD_LIBRARY_PATH less any folder with a libcudafft in it (it would win over the RUNPATH); the rest
# stays, for GStreamer where it is not installed in the system (scripts/run-gpu.sh's bundle).
no_cudafft_path=()
while IFS= read -r -d: folder; do
  [ -n "$folder" ] && [ ! -e "$folder/libcudafft.so.0" ] && no_cudafft_path+=("$folder")
done <<< "${LD_LIBRARY_PATH:-}:"
if [ ${#no_cudafft_path[@]} = 0 ]; then
  unset LD_LIBRARY_PATH
else
  LD_LIBRARY_PATH=$(IFS=:; echo "${no_cudafft_path[*]}")
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for element in "${elements[@]}"; do
  env -u GST_PLUGIN_PATH_1_0 GST_PLUGIN_SYSTEM_PATH_1_0= GST_PLUGIN_SYSTEM_PATH= \
    GST_PLUGIN_PATH="$(dirname "$plugin")" GST_REGISTRY_1_0="$work/registry.bin" \
    gst-inspect-1.0 "$element" > "$work/$element.txt" 2>&1 ||
    { cat "$work/$element.txt"; echo "check-install: gst-inspect-1.0 $element failed" >&2; exit 1; }
  grep -q "Filename *$plugin\$" "$work/$element.txt" ||
    { cat "$work/$element.txt"; echo "check-install: $element is not from $plugin" >&2; exit 1; }
done
echo "check-install: ${elements[*]} load from the staged plugin"

reader=$(installed /gst-cudafft-sofa-reader)
sofa=/usr/share/libmysofa/default.sofa
if [ -n "$reader" ] && [ -f "$sofa" ]; then
  if [ ! -x "$staging$reader" ]; then
    echo "check-install: the staged install lacks the SOFA reader $staging$reader" >&2
    exit 1
  fi
  # the system's plugins too (audiotestsrc): the reader found from the staged plugin's file (the
  # log line) shows the element came from it
  env -u GST_PLUGIN_PATH_1_0 \
    GST_PLUGIN_PATH="$(dirname "$plugin")" GST_REGISTRY_1_0="$work/registry-sofa.bin" \
    GST_DEBUG=cudamatrixconvolvesofa:4 GST_DEBUG_NO_COLOR=1 \
    timeout 60 gst-launch-1.0 -q audiotestsrc num-buffers=4 \
    ! audio/x-raw,format=F32LE,rate=44100,channels=2 \
    ! cudamatrixconvolve backend=cpu sofa-location="$sofa" ! fakesink > "$work/sofa.txt" 2>&1 ||
    { cat "$work/sofa.txt"; echo "check-install: the staged plugin cannot read $sofa" >&2; exit 1; }
  grep -qF "SOFA reader: $staging$reader" "$work/sofa.txt" ||
    { cat "$work/sofa.txt"; echo "check-install: $sofa was not read by $staging$reader" >&2; exit 1; }
  echo "check-install: the staged plugin reads $sofa through the staged $(basename "$reader")"
fi

PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR=$staging
flags=$(pkg-config --cflags --libs cudafft)
case " $flags " in
*" -I$staging/"*" -L$libdir "*) ;;
*) echo "check-install: pkg-config cudafft gives '$flags', not the staged paths" >&2; exit 1 ;;
esac
for program in scripts/check_install_fft.c examples/fft_demo.c; do
  name=$(basename "$program" .c)
  # shellcheck disable=SC2086 # the flags are words
  cc -std=c11 -Wall -Wextra -Werror -o "$work/$name" "$program" $flags -lm
  LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$work/$name" > "$work/$name.txt" 2>&1 ||
    { cat "$work/$name.txt"; echo "check-install: $name failed" >&2; exit 1; }
  tail -1 "$work/$name.txt"
done
echo "check-install: the staged install in $staging works"
