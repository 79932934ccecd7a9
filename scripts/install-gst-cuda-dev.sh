#!/usr/bin/env bash
# GStreamer's CUDA library for building the plugin's CUDA-memory code (gstreamer-cuda-1.0: the
# shared GstCudaContext and memory:CUDAMemory), the lean way. Its runtime, libgstcuda-1.0.so.0,
# comes with gst-plugins-bad (libgstreamer-plugins-bad1.0-0); its headers, link and pkg-config file
# are in Debian 12's libgstreamer-plugins-bad1.0-dev, which pulls in about 170 packages (OpenCV,
# Qt, VTK) for the other gst-plugins-bad libraries. So this unpacks that one package (400 KB) into
# DIR (default .deps/gst-cuda in the project; scripts/env.sh puts its pkg-config folder on
# PKG_CONFIG_PATH) and points its link at the installed runtime. Nothing happens where
# gstreamer-cuda-1.0 is already found. Needs apt's package lists (install-deps.sh updates them).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-.deps/gst-cuda}
if pkg-config --exists gstreamer-cuda-1.0; then
  exit 0
fi
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
runtime=/usr/lib/$multiarch/libgstcuda-1.0.so.0
if [ ! -e "$runtime" ]; then
  echo "install-gst-cuda-dev: $runtime is missing (install libgstreamer-plugins-bad1.0-0)" >&2
  exit 1
fi
# the development package of exactly the installed runtime's version
version=$(dpkg-query -W -f '${Version}' libgstreamer-plugins-bad1.0-0)
rm -rf "$dir"
mkdir -p "$dir/debs"
dir=$(realpath "$dir")
( cd "$dir/debs" && apt-get download "libgstreamer-plugins-bad1.0-dev=$version" > download.log 2>&1 ) || {
  echo "install-gst-cuda-dev: apt-get download failed:" >&2
  tail -5 "$dir/debs/download.log" >&2
  exit 1
}
dpkg-deb -x "$dir"/debs/libgstreamer-plugins-bad1.0-dev_*.deb "$dir/root"
libdir=$dir/root/usr/lib/$multiarch
ln -sf "$runtime" "$libdir/libgstcuda-1.0.so"
sed -i -e "s|^prefix=.*|prefix=$dir/root/usr|" "$libdir/pkgconfig/gstreamer-cuda-1.0.pc"
# only the CUDA library's pkg-config file: the package's others name libraries not installed here
find "$libdir/pkgconfig" -name '*.pc' ! -name gstreamer-cuda-1.0.pc -delete
echo "install-gst-cuda-dev: gstreamer-cuda-1.0 $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --modversion gstreamer-cuda-1.0) in $dir"
