#!/usr/bin/env bash
# A GStreamer of another version for a GPU machine without GStreamer and without a package
# registry (the project's device machine): the prefix scripts/build-gstreamer.sh VERSION built in
# this machine's cache (debug information stripped), and Debian 12's GLib and FFTW packages
# (runtime and development files) that it and the project build against, gathered into DIR
# (default .gst-VERSION in the project, which .gitignore leaves out) with an `activate` to source
# there. About 25 MB, so that it travels with the working tree (the device tool's `carry`).
#
#   scripts/make-gst-version-bundle.sh VERSION [DIR]
#   on the GPU machine: source DIR/activate; meson setup ...; meson test ...
#
# activate unpacks the packages once under /tmp/gst-VERSION-root, points the GStreamer prefix's
# pkg-config files at where the bundle lies, and sets PATH, LD_LIBRARY_PATH, PKG_CONFIG_PATH and
# GStreamer's plugin path, scanner and registry to this version alone.
set -euo pipefail

main() {
  local version=${1:?usage: make-gst-version-bundle.sh VERSION [DIR]}
  cd "$(dirname "$0")/.."
  local dir=${2:-.gst-$version}
  local prefix
  prefix=$(bash scripts/build-gstreamer.sh "$version" | tail -1)
  rm -rf "$dir"
  mkdir -p "$dir/debs"
  cp -a "$prefix" "$dir/prefix"
  rm -rf "$dir/prefix/.part-"* "$dir/prefix/share/gdb"
  find "$dir/prefix" -type f \( -name '*.so' -o -name '*.so.[0-9]*' \) -exec strip --strip-debug {} +
  find "$dir/prefix/bin" "$dir/prefix/libexec" -type f -perm -u+x -exec strip --strip-debug {} + \
    2> /dev/null || true
  local packages=(libglib2.0-0 libglib2.0-dev libglib2.0-dev-bin libffi8 libffi-dev libpcre2-8-0
    libpcre2-dev zlib1g-dev libmount-dev libblkid-dev libselinux1-dev libsepol-dev
    libfftw3-single3 libfftw3-double3 libfftw3-dev
    libgl-dev) # GStreamer's CUDA headers include cudaGL.h, which includes GL/gl.h
  (cd "$dir/debs" && apt-get download "${packages[@]}" > download.log 2>&1) || {
    echo "make-gst-version-bundle: apt-get download failed (apt-get update first?):" >&2
    tail -5 "$dir/debs/download.log" >&2
    exit 1
  }
  rm -f "$dir/debs/download.log"
  sed "s/@VERSION@/$version/" > "$dir/activate" << 'EOF'
# source this file (bash): GStreamer @VERSION@ of this bundle, with Debian 12's GLib and FFTW
_gv_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_gv_root=/tmp/gst-@VERSION@-root
if [ ! -e "$_gv_root/.ready" ]; then
  rm -rf "$_gv_root" && mkdir -p "$_gv_root"
  for _gv_deb in "$_gv_dir"/debs/*.deb; do dpkg-deb -x "$_gv_deb" "$_gv_root"; done
  for _gv_f in "$_gv_root"/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc "$_gv_root"/usr/share/pkgconfig/*.pc; do
    [ -f "$_gv_f" ] && sed -i -e "s|^prefix=.*|prefix=$_gv_root/usr|" -e "s|=/usr/|=$_gv_root/usr/|" "$_gv_f"
  done
  touch "$_gv_root/.ready"
fi
# the prefix's pkg-config files name the folder it was built in: here, the bundle's
sed -i -e "s|^prefix=.*|prefix=$_gv_dir/prefix|" "$_gv_dir"/prefix/lib/pkgconfig/*.pc
export PATH="$_gv_dir/prefix/bin:$_gv_root/usr/bin:$PATH"
export LD_LIBRARY_PATH="$_gv_dir/prefix/lib:$_gv_root/usr/lib/x86_64-linux-gnu:$_gv_root/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CPATH="$_gv_root/usr/include${CPATH:+:$CPATH}"
export PKG_CONFIG_PATH="$_gv_dir/prefix/lib/pkgconfig:$_gv_root/usr/lib/x86_64-linux-gnu/pkgconfig:$_gv_root/usr/share/pkgconfig"
export GST_PLUGIN_SYSTEM_PATH_1_0="$_gv_dir/prefix/lib/gstreamer-1.0"
export GST_PLUGIN_SCANNER_1_0="$_gv_dir/prefix/libexec/gstreamer-1.0/gst-plugin-scanner"
export GST_REGISTRY_1_0="$_gv_root/registry.bin"
unset _gv_dir _gv_root _gv_f _gv_deb
EOF
  echo "make-gst-version-bundle: $dir ($(du -sh "$dir" | cut -f1)); on the GPU machine:" \
    "source $dir/activate"
}

main "$@"; exit $?
