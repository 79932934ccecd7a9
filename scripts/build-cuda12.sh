#!/usr/bin/env bash
# Builds the whole project (library, plugin, tests, benchmarks, examples) with a CUDA 12 toolkit:
# DeepStream 7 and JetPack 6 ship CUDA 12.x, and nothing of ours may need a newer one.
#
# The toolkit is Debian 13's non-free CUDA 12.4 (nvidia-cuda-toolkit 12.4.131; PyPI's CUDA 12 wheels
# hold no nvcc). Debian 12 cannot install trixie's packages, but NVIDIA's binaries inside them only
# need glibc 2.34 and run here, so this script downloads the few packages it needs with apt-get and a
# sources list of its own (the machine's apt setup is left alone) and unpacks them with dpkg-deb
# into a toolkit of NVIDIA's usual layout (bin, nvvm, include, lib64) in CUDA12_ROOT, outside the
# clone. That happens once per machine; later runs reuse it. The host compiler is Debian 12's
# gcc 12, which CUDA 12.4 supports.
#
# Then it configures BUILDDIR (default build-cuda12) with that nvcc for one GPU architecture
# (CUDA_ARCH, default 90: the GPU machine's), builds it with ninja -j${JOBS:-2}, and runs the CPU
# suite there (the GPU tests report themselves skipped without a device; TESTS="name ..." runs
# only those). `--compile-only` stops after the build, `--install-only` after the toolkit. The
# build loads the CUDA 12 runtime and cuFFT of CUDA12_ROOT/lib64 (rpath), and LD_LIBRARY_PATH
# where that folder is elsewhere (docs/platforms.md: running it on another machine).
#
#   bash scripts/build-cuda12.sh [--compile-only | --install-only]
#   CUDA12_ROOT (default ${XDG_CACHE_HOME:-~/.cache}/gst-cudafft/cuda-12.4), BUILDDIR, CUDA_ARCH
set -euo pipefail
cd "$(dirname "$0")/.."
compile_only=false
install_only=false
case "${1:-}" in
--compile-only) compile_only=true ;;
--install-only) install_only=true ;;
esac

cache=${XDG_CACHE_HOME:-$HOME/.cache}/gst-cudafft
root=${CUDA12_ROOT:-$cache/cuda-12.4}
builddir=${BUILDDIR:-build-cuda12}
arch=${CUDA_ARCH:-90}
version='12.4.1-2'
debian_mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

install_toolkit() {
  local work=$root.download
  rm -rf "$work" "$root"
  mkdir -p "$work/lists/partial" "$work/archives/partial" "$work/debs" "$work/x"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $debian_mirror trixie main contrib non-free" \
    > "$work/sources.list"
  : > "$work/status"
  # apt with a state of its own: trixie's lists never reach the machine's apt
  local apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$work/lists" -o "Dir::State::Status=$work/status"
    -o "Dir::Cache=$work" -o APT::Architectures::=amd64 -o Debug::NoLocking=1
    -o APT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" update -q > "$work/update.log" 2>&1 || {
    tail -5 "$work/update.log" >&2
    exit 1
  }
  # the compiler (nvcc, cicc, ptxas, fatbinary, nvlink, libdevice), the headers and link files,
  # and the runtimes we link: cudart and cuFFT
  local packages=("nvidia-cuda-toolkit=12.4.131~$version" "nvidia-cuda-dev=12.4.127~$version"
    "libcudart12=12.4.127~$version" "libcufft11=11.2.1.3~$version")
  (cd "$work/debs" && apt-get "${apt_opts[@]}" download "${packages[@]}") > "$work/download.log" 2>&1 || {
    tail -5 "$work/download.log" >&2
    exit 1
  }
  local deb
  for deb in "$work"/debs/nvidia-cuda-toolkit_*.deb "$work"/debs/libcudart12_*.deb \
    "$work"/debs/libcufft11_*.deb; do
    dpkg-deb -x "$deb" "$work/x"
  done
  # nvidia-cuda-dev is 934 MB, mostly static libraries that we do not link: take the headers and
  # the few link files only
  local multiarch=usr/lib/x86_64-linux-gnu
  dpkg-deb --fsys-tarfile "$work"/debs/nvidia-cuda-dev_*.deb | tar -x -C "$work/x" \
    ./usr/include "./$multiarch/libcudart_static.a" "./$multiarch/libcudadevrt.a" \
    "./$multiarch/libcudart.so" "./$multiarch/libcufft.so" "./$multiarch/stubs/libcuda.so"

  local staged=$root.staged
  rm -rf "$staged"
  mkdir -p "$staged/bin" "$staged/nvvm/bin" "$staged/lib64/stubs"
  local tool
  for tool in bin2c cu++filt cudafe++ cuobjdump fatbinary nvdisasm nvlink nvprune ptxas; do
    cp -a "$work/x/usr/bin/$tool" "$staged/bin/"
  done
  cp -a "$work/x/usr/lib/nvidia-cuda-toolkit/bin/nvcc" "$work/x/usr/lib/nvidia-cuda-toolkit/bin/crt" \
    "$staged/bin/"
  cp -a "$work/x/usr/lib/nvidia-cuda-toolkit/bin/cicc" "$staged/nvvm/bin/"
  cp -a "$work/x/usr/lib/nvidia-cuda-toolkit/libdevice" "$staged/nvvm/"
  cp -a "$work/x/usr/include" "$staged/include"
  cp -a "$work/x/$multiarch"/libcudart* "$work/x/$multiarch"/libcufft* "$work/x/$multiarch/libcudadevrt.a" \
    "$staged/lib64/"
  cp -a "$work/x/$multiarch/stubs/libcuda.so" "$staged/lib64/stubs/"
  # Debian's links point into /usr/lib/x86_64-linux-gnu: make them relative
  ln -sfn libcudart.so.12 "$staged/lib64/libcudart.so"
  ln -sfn libcufft.so.11 "$staged/lib64/libcufft.so"
  # NVIDIA's own nvcc.profile (Debian's names /usr paths)
  cat > "$staged/bin/nvcc.profile" << 'EOF'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF
  echo "12.4.131" > "$staged/version.txt"
  mv "$staged" "$root"
  rm -rf "$work"
}

if [ ! -x "$root/bin/nvcc" ]; then
  started=$SECONDS
  echo "build-cuda12: installing CUDA 12.4 (Debian 13's nvidia-cuda-toolkit) into $root"
  install_toolkit
  echo "build-cuda12: CUDA 12.4 installed in $((SECONDS - started)) s"
fi
"$root/bin/nvcc" --version | tail -2
$install_only && exit 0

# GStreamer and FFTW from Debian 12, as the default build
source scripts/env.sh
bash scripts/install-deps.sh > /dev/null

# meson keeps the nvcc of a native file by its path, so that a later `ninja -C build-cuda12` with
# another nvcc (CUDA 13's) first on PATH still compiles with CUDA 12
export PATH="$root/bin:$PATH" CUDA_PATH=$root CUDA_HOME=$root
printf '[binaries]\ncuda = %s\n' "'$root/bin/nvcc'" > "$root/meson-native.ini"
if [ ! -d "$builddir" ]; then
  meson setup "$builddir" --native-file "$root/meson-native.ini" -Dcuda=enabled -Dcuda-arch="$arch" \
    -Dc_link_args="-L$root/lib64 -Wl,-rpath,$root/lib64" \
    -Dcpp_link_args="-L$root/lib64 -Wl,-rpath,$root/lib64" \
    -Dcuda_link_args="-L$root/lib64 -Xlinker=-rpath=$root/lib64"
fi
ninja -C "$builddir" -j"${JOBS:-2}"
# what was built links CUDA 12's runtime, not the system's CUDA 13 (ldd's output taken whole: with
# pipefail, `ldd | grep -q` fails when grep stops reading at the match and ldd gets SIGPIPE)
linked=$(ldd "$builddir"/lib/libcudafft.so)
if ! grep -q "$root/lib64/libcudart.so.12" <<< "$linked"; then
  echo "build-cuda12: $builddir/lib/libcudafft.so does not link CUDA 12's runtime:" >&2
  ldd "$builddir"/lib/libcudafft.so >&2
  exit 1
fi
$compile_only && exit 0
status=0
# ${TESTS} unquoted: a list of test names, or none for the whole suite
# shellcheck disable=SC2086
meson test -C "$builddir" --print-errorlogs --num-processes "${JOBS:-2}" ${TESTS:-} || status=$?
python3 scripts/summarize-tests.py "$builddir/meson-logs/testlog.json"
exit "$status"
