# Sourced after .gst-bundle/activate on a GPU machine without GStreamer: gstreamer-cuda-1.0's
# pkg-config file requires gstreamer-gl-prototypes-1.0, and that the development files of GL,
# X11 and Wayland, which the bundle does not carry. The plugin takes only the CUDA library's
# headers and links libgstcuda-1.0 alone (plugin/meson.build), so each requirement pkg-config
# cannot find gets an empty stand-in, until gstreamer-cuda-1.0 resolves (a few rounds: each
# stand-in's absence hides the next).
_gl_dir=/tmp/gst-cuda-gl-standins
for _gl_round in 1 2 3 4 5 6; do
  _gl_missing=$(pkg-config --print-errors --exists gstreamer-cuda-1.0 2>&1 |
    sed -n "s/^Package '\([^']*\)', required by .*/\1/p" | sort -u)
  # never gstreamer-cuda-1.0 itself: without its real files (install-gst-cuda-dev.sh's .deps,
  # carried along) the build goes without CUDA memory rather than against a stand-in
  _gl_missing=$(echo "$_gl_missing" | grep -vx gstreamer-cuda-1.0)
  [ -n "$_gl_missing" ] || break
  mkdir -p "$_gl_dir"
  for _gl_m in $_gl_missing; do
    printf 'Name: %s\nDescription: stand-in\nVersion: 999\nCflags:\nLibs:\n' "$_gl_m" > "$_gl_dir/$_gl_m.pc"
  done
  case ":$PKG_CONFIG_PATH:" in
  *":$_gl_dir:"*) ;;
  *) export PKG_CONFIG_PATH="$_gl_dir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" ;;
  esac
done
unset _gl_dir _gl_round _gl_missing _gl_m
