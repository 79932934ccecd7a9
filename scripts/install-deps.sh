#!/usr/bin/env bash
# Installs what building and testing need on Debian 12 (the CUDA toolkit itself is expected in
# /usr/local/cuda; without it the build has the CPU backend only).
set -euo pipefail
packages=(
  meson ninja-build pkg-config gcc g++ python3
  libfftw3-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  # spectrascope, which scope-bench compares cudaspectrumscope with; GStreamer's CUDA library
  # (cudaupload, cudadownload, the shared GstCudaContext and CUDA memory)
  gstreamer1.0-plugins-bad libgstreamer-plugins-bad1.0-0
  # the Python examples and their tests (PyGObject with GStreamer's overrides, numpy)
  python3-gi python3-gst-1.0 gir1.2-gst-plugins-base-1.0 python3-numpy
  # cudamatrixconvolve's SOFA files (libmysofa), and netCDF4 for the tests that write them
  libmysofa-dev python3-netcdf4
)
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${packages[@]}"
# the CUDA library's development files alone (its -dev package pulls in about 170 others)
bash "$(dirname "$0")/install-gst-cuda-dev.sh"
