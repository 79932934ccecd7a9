# Sourced by the scripts: puts the CUDA toolkit's nvcc on PATH where it is installed but not found.
if ! command -v nvcc > /dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
# GStreamer's CUDA library's development files where scripts/install-gst-cuda-dev.sh unpacked them
_env_gst_cuda="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.deps/gst-cuda/root/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/pkgconfig"
case ":${PKG_CONFIG_PATH:-}:" in
*":$_env_gst_cuda:"*) ;;
*) export PKG_CONFIG_PATH="$_env_gst_cuda${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" ;;
esac
unset _env_gst_cuda
