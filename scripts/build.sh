#!/usr/bin/env bash
# The one build that README's two commands share: configures BUILDDIR (default build) where it is
# not configured yet, then builds it. The GPU code is for this machine's GPUs where nvidia-smi
# names them (their compute capabilities, e.g. -Dcuda-arch=90: the device code compiled once
# instead of once per architecture), else for every architecture (-Dcuda-arch=all: a build that
# runs on whichever GPU it meets later, and CI's check that every architecture compiles).
# CUDA_ARCH overrides the choice (CUDA_ARCH=all, CUDA_ARCH=90). A configured folder keeps its
# options: remove it (or `meson configure BUILDDIR -Dcuda-arch=...`) to choose again.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
builddir=${BUILDDIR:-build}

# This machine's GPUs as -Dcuda-arch's list ("90", "86,90"), or nothing: no GPU, a driver whose
# nvidia-smi cannot say, or a capability that this nvcc cannot compile for (a GPU newer than the
# toolkit: every architecture's build then runs on it through the newest one's PTX).
gpu_arch() {
  local caps cap list=
  command -v nvidia-smi > /dev/null 2>&1 || return 0
  caps=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null) || return 0
  for cap in $(echo "$caps" | tr -d '.' | sort -n -u); do
    [[ "$cap" =~ ^[0-9]+$ ]] || return 0
    if command -v nvcc > /dev/null 2>&1 && ! nvcc --list-gpu-code | grep -qx "sm_$cap"; then
      echo "build: this nvcc cannot compile for the GPU's sm_$cap; building every architecture" >&2
      return 0
    fi
    list=${list:+$list,}$cap
  done
  echo "$list"
}

if [ ! -f "$builddir/build.ninja" ]; then
  if [ -n "${CUDA_ARCH:-}" ]; then
    arch=$CUDA_ARCH why="CUDA_ARCH"
  else
    arch=$(gpu_arch)
    why="no GPU here of a capability nvidia-smi names and nvcc knows"
    [ -z "$arch" ] || why="this machine's GPUs"
  fi
  echo "build: configuring $builddir with -Dcuda-arch=${arch:-all} ($why)"
  meson setup "$builddir" ${arch:+-Dcuda-arch=$arch}
fi
ninja -C "$builddir"
