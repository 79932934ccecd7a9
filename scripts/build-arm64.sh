#!/usr/bin/env bash
# Cross-builds the whole project for 64-bit ARM Linux (Jetson, Grace, DGX Spark, ARM servers) and
# runs its CPU suite under qemu-user; with --cuda, also cross-compiles the CUDA backend for the
# ARM64 GPUs.
#
# CPU build (always): Debian 12's gcc-aarch64-linux-gnu against a sysroot of Debian 12's arm64
# packages (GStreamer 1.22 core, base and good, GLib, FFTW, libc), and qemu-user-static for the
# tests. The packages are unpacked into ARM64_SYSROOT (default
# ${XDG_CACHE_HOME:-~/.cache}/gst-cudafft/arm64-sysroot, outside the clone) with apt-get and
# dpkg-deb rather than installed as multiarch packages: Debian 12's
# libgstreamer-plugins-base1.0-dev cannot be installed for two architectures at once (apt would
# remove the amd64 one every other build here needs). That happens once per machine. The build
# (BUILDDIR, default build-arm64; cross/aarch64-linux-gnu.ini) has no CUDA backend; `meson test`
# runs each test under qemu-aarch64-static (the cross file's exe_wrapper), with timeouts
# multiplied by 10 (meson's and libcheck's) for the emulation. TESTS="name ..." runs only those
# tests; --compile-only runs none.
#
# --cuda (compile only: no ARM64 GPU here): the CUDA backend for Jetson Orin (sm_87, CUDA 12.4:
# JetPack 6 ships CUDA 12.x) in build-arm64-cuda12 and for Jetson Thor and DGX Spark (sm_110 and
# sm_121, CUDA 13: CUDA_ARCH13, default 110) in build-arm64-cuda13. This machine's nvcc (CUDA 13
# in /usr/local/cuda; CUDA 12.4 from scripts/build-cuda12.sh) compiles the device code and passes
# the host code to the aarch64 g++ (cross/aarch64-linux-gnu-cuda.ini); the aarch64 CUDA runtime
# and cuFFT to link come from PyPI's manylinux aarch64 wheels (nvidia-cuda-runtime, nvidia-cufft),
# unpacked into the cache. The libraries are linked by soname, so on the device the system's own
# CUDA runtime and cuFFT are loaded. docs/platforms.md says what this proves and what it does not.
#
#   bash scripts/build-arm64.sh [--cuda] [--compile-only]
set -euo pipefail
cd "$(dirname "$0")/.."
cuda=false
compile_only=false
for arg in "$@"; do
  case "$arg" in
  --cuda) cuda=true ;;
  --compile-only) compile_only=true ;;
  *)
    echo "usage: $0 [--cuda] [--compile-only]" >&2
    exit 2
    ;;
  esac
done

cache=${XDG_CACHE_HOME:-$HOME/.cache}/gst-cudafft
sysroot=${ARM64_SYSROOT:-$cache/arm64-sysroot}
builddir=${BUILDDIR:-build-arm64}
jobs=${JOBS:-2}
debian_mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
debian_security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
host_packages=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static meson ninja-build
  pkg-config unzip python3-pip)
missing=()
for p in "${host_packages[@]}"; do
  dpkg-query -W -f '${Status}' "$p" 2> /dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# What the build and the tests need on the target, with all that it depends on
target_packages=(libc6-dev libstdc++-12-dev libfftw3-dev libgstreamer1.0-dev
  libgstreamer-plugins-base1.0-dev gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  libmysofa-dev)

make_sysroot() {
  local work=$sysroot.download
  rm -rf "$work" "$sysroot" "$sysroot.staged"
  mkdir -p "$work/lists/partial" "$work/archives/partial" "$sysroot.staged"
  {
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $debian_mirror bookworm main"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $debian_mirror bookworm-updates main"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $debian_security bookworm-security main"
  } > "$work/sources.list"
  : > "$work/status"
  # apt with a state of its own and an empty package database: it downloads the packages and all
  # they depend on for arm64 alone, and the machine's apt and dpkg are left alone
  local apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$work/lists" -o "Dir::State::Status=$work/status"
    -o "Dir::Cache=$work" -o APT::Architecture=arm64 -o APT::Architectures::=arm64
    -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" update -q > "$work/apt.log" 2>&1 &&
    apt-get "${apt_opts[@]}" install --download-only -y -q --no-install-recommends \
      "${target_packages[@]}" >> "$work/apt.log" 2>&1 || {
    tail -5 "$work/apt.log" >&2
    exit 1
  }
  local deb
  for deb in "$work"/archives/*.deb; do
    dpkg-deb -x "$deb" "$sysroot.staged"
  done
  # absolute links (libz.so -> /lib/aarch64-linux-gnu/libz.so.1.2.13) would name this machine's
  # files: make them point inside the sysroot
  local link target
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot.staged$target")" "$link"
  done < <(find "$sysroot.staged" -type l -lname '/*' -print0)
  printf '%s\n' "${target_packages[@]}" > "$sysroot.staged/.gst-cudafft-packages"
  mv "$sysroot.staged" "$sysroot"
  rm -rf "$work"
}

if ! printf '%s\n' "${target_packages[@]}" | cmp -s - "$sysroot/.gst-cudafft-packages"; then
  started=$SECONDS
  echo "build-arm64: making the Debian 12 arm64 sysroot in $sysroot"
  make_sysroot
  echo "build-arm64: sysroot made in $((SECONDS - started)) s ($(du -sh "$sysroot" | cut -f1))"
fi
# the sysroot's path for the cross files (meson takes [constants] from an earlier cross file)
constants=$sysroot.ini
printf "[constants]\nsysroot = '%s'\n" "$sysroot" > "$constants"

if [ ! -d "$builddir" ]; then
  meson setup "$builddir" --cross-file "$constants" --cross-file cross/aarch64-linux-gnu.ini \
    --cross-file cross/aarch64-qemu.ini -Dcuda=disabled
fi
ninja -C "$builddir" -j"$jobs"

# The CUDA backend for the ARM64 GPUs, compile only. $1: the build folder; $2: the nvcc; $3: the
# aarch64 CUDA root to make; $4: its CUDA version; $5: the GPU architecture; the rest: the wheels
# with its libraries.
cross_cuda() {
  local dir=$1 nvcc=$2 root=$3 version=$4 arch=$5
  shift 5
  if [ ! -e "$root/lib64/libcudart.so" ]; then
    rm -rf "$root" "$root.staged"
    mkdir -p "$root.staged/wheels" "$root.staged/lib64"
    python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_aarch64 \
      --python-version 3.11 -d "$root.staged/wheels" "$@"
    local whl
    for whl in "$root.staged"/wheels/*.whl; do
      unzip -q -o "$whl" -d "$root.staged/x"
    done
    find "$root.staged/x" \( -name 'libcudart.so.*' -o -name 'libcufft.so.*' -o -name 'libcudadevrt.a' \) \
      -exec cp {} "$root.staged/lib64/" \;
    (cd "$root.staged/lib64" && ln -s libcudart.so.* libcudart.so && ln -s libcufft.so.* libcufft.so)
    # nvcc's link step names the device runtime, which CUDA 12's aarch64 wheels do not hold; the
    # library uses none of it (no kernel launches kernels), so an empty archive stands in
    [ -e "$root.staged/lib64/libcudadevrt.a" ] || aarch64-linux-gnu-ar rc "$root.staged/lib64/libcudadevrt.a"
    # the toolkit's headers are the same for every host; the nvcc's own
    ln -s "$(dirname "$(dirname "$nvcc")")/include" "$root.staged/include"
    # meson's CUDA dependency takes the toolkit whose version matches the nvcc's
    echo "CUDA Version $version" > "$root.staged/version.txt"
    rm -rf "$root.staged/wheels" "$root.staged/x"
    mv "$root.staged" "$root"
  fi
  local cuda_constants=$root.ini
  printf "[constants]\nsysroot = '%s'\nnvcc = '%s'\ncuda_root = '%s'\n" "$sysroot" "$nvcc" "$root" \
    > "$cuda_constants"
  # the nvcc's own tools (nvlink, ptxas) first on PATH; the aarch64 root for meson's dependency
  local env=(env "PATH=$(dirname "$nvcc"):$PATH" "CUDA_PATH=$root" "CUDA_HOME=$root")
  if [ ! -d "$dir" ]; then
    "${env[@]}" meson setup "$dir" --cross-file "$cuda_constants" \
      --cross-file cross/aarch64-linux-gnu.ini --cross-file cross/aarch64-linux-gnu-cuda.ini \
      -Dcuda=enabled -Dcuda-arch="$arch" -Dgst-cuda=disabled
  fi
  "${env[@]}" ninja -C "$dir" -j"$jobs"
  file -L "$dir/lib/libcudafft.so" | grep -q 'ARM aarch64' || {
    echo "build-arm64: $dir/lib/libcudafft.so is not an aarch64 library" >&2
    exit 1
  }
}

if $cuda; then
  cuda12=${CUDA12_ROOT:-$cache/cuda-12.4}
  [ -x "$cuda12/bin/nvcc" ] || CUDA12_ROOT=$cuda12 bash scripts/build-cuda12.sh --install-only
  cross_cuda build-arm64-cuda12 "$cuda12/bin/nvcc" "$cache/cuda-12.4-aarch64" 12.4.127 87 \
    nvidia-cuda-runtime-cu12==12.4.127 nvidia-cufft-cu12==11.2.1.3
  cross_cuda build-arm64-cuda13 /usr/local/cuda/bin/nvcc "$cache/cuda-13.0-aarch64" 13.0.88 \
    "${CUDA_ARCH13:-110}" nvidia-cuda-runtime==13.0.88 nvidia-cufft==12.0.0.61
fi

$compile_only && exit 0
# cudamatrixconvolve reads SOFA files in a program of its own, gst-cudafft-sofa-reader, which an
# emulated test cannot start without binfmt_misc (the kernel does not run an aarch64 program by
# itself; a host program, such as a script's shell, it does): in the build folder a script that
# starts the reader under qemu stands in for it, where the plugin looks first (beside itself).
# meson test --no-rebuild keeps it there; the next build that relinks the reader replaces it, and
# this puts it back.
reader=$builddir/plugin/gst-cudafft-sofa-reader
if [ -f "$reader" ] && [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] &&
  [ "$(head -c 2 "$reader")" != "#!" ]; then
  mv "$reader" "$reader.aarch64"
  printf '#!/bin/sh\nexec qemu-aarch64-static -L "%s" "%s" "$@"\n' "$sysroot" \
    "$(realpath "$reader.aarch64")" > "$reader"
  chmod +x "$reader"
fi
status=0
# ${TESTS} unquoted: a list of test names, or none for the whole suite
# shellcheck disable=SC2086
CK_TIMEOUT_MULTIPLIER=10 meson test -C "$builddir" --no-rebuild --timeout-multiplier 10 \
  --num-processes "$jobs" --print-errorlogs ${TESTS:-} || status=$?
python3 scripts/summarize-tests.py "$builddir/meson-logs/testlog.json"
exit "$status"
