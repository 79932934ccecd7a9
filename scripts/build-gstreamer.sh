#!/usr/bin/env bash
# Builds a minimal GStreamer of VERSION from the release tarballs in ../shared/gstreamer-src (or
# SOURCE_DIR) into a cache outside the clone, once per machine:
# ${XDG_CACHE_HOME:-~/.cache}/gst-cudafft/gstreamer-VERSION, a prefix with bin/, lib/, include/.
#
#   scripts/build-gstreamer.sh VERSION [SOURCE_DIR]
#
# A prefix already built is reused as it is (its .complete marker is written last, with the parts'
# options). A build cut short, or made with other options, goes on from the first part not
# installed with today's options (each part's marker, written after its install, holds them). Prints the prefix on its last line; the time it took is in PREFIX/.complete.
#
# What is built, and only that (-Dauto_features=disabled, then each part enabled by name), so that a
# version takes minutes on 2 cores: core with gstreamer-check-1.0 and the tools (gst-inspect-1.0);
# base's libraries and app, audiotestsrc, videotestsrc, audioconvert, audioresample; good's
# spectrum, audiofx (audiofirfilter), wavparse, wavenc (the upstream comparison tests, the
# examples); bad's CUDA library (gstreamer-cuda-1.0, public from 1.22) and nvcodec (cudaupload,
# cudadownload; it loads CUDA at run time through its own stub headers, so no toolkit is needed),
# and bad's analytics library, which it builds whatever the options (gstreamer-analytics-1.0: from
# 1.26 the GstTensorMeta that cudamelspectrogram puts on its tensors and its test checks).
# Nothing of GStreamer enters the project. GStreamer 1.24 and later need a newer Meson than Debian
# 12's 1.0: it comes from PyPI into a virtual environment in the same cache (never pip over
# Debian's). flex and bison (core's parser) come from apt where missing.
set -euo pipefail

# the Meson that GStreamer 1.24 and later ask for (1.24: >= 1.1, 1.26 and 1.28: >= 1.4)
MESON_PYPI=meson==1.6.1
JOBS=2

# The parts, in order, and each one's options. Base: the test sources, app, and what cudaconvolve's
# ir-location decodes files with (decodebin: playback, typefind); good: the elements the upstream
# comparisons and the element tests use (spectrum, audiofx, wav, png, matroska).
PARTS=(gstreamer gst-plugins-base gst-plugins-good gst-plugins-bad)
# the PTP helper (C in 1.20, Rust from 1.24, then disabled with the rest) without setuid
PART_gstreamer=(-Dcheck=enabled -Dtools=enabled -Dintrospection=disabled -Dbenchmarks=disabled
  -Dptp-helper-permissions=none)
PART_gst_plugins_base=(-Dintrospection=disabled -Dapp=enabled -Daudiotestsrc=enabled
  -Dvideotestsrc=enabled -Daudioconvert=enabled -Daudioresample=enabled -Dplayback=enabled
  -Dtypefind=enabled)
PART_gst_plugins_good=(-Dspectrum=enabled -Daudiofx=enabled -Dwavparse=enabled -Dwavenc=enabled
  -Dpng=enabled -Dmatroska=enabled)
PART_gst_plugins_bad=(-Dintrospection=disabled -Dnvcodec=enabled)

# Every part's name and options, one a line: what a complete prefix was built with.
spec() {
  local name
  for name in "${PARTS[@]}"; do
    local -n options=PART_${name//-/_}
    echo "$name ${options[*]}"
  done
}

# Whether the prefix is complete and was built with today's parts (else the parts that differ are
# built again).
complete() {
  [ -e "$prefix/.complete" ] && [ "$(tail -n +2 "$prefix/.complete")" = "$(spec)" ]
}

# Builds and installs one subproject (the work folder's subprojects/NAME) with the options given
# after its name, unless its marker says it is installed already.
part() {
  local name=$1
  shift
  local spec="$name $*"
  if [ "$(cat "$prefix/.part-$name" 2> /dev/null)" = "$spec" ]; then
    echo "build-gstreamer: $version $name installed before"
    return
  fi
  local at=$SECONDS log=$work/$name.log
  echo "build-gstreamer: $version $name"
  rm -rf "$work/build-$name"
  if ! "$meson" setup "$work/build-$name" "$top/$name" "${common[@]}" "$@" > "$log" 2>&1 ||
    ! ninja -C "$work/build-$name" -j "$JOBS" install >> "$log" 2>&1; then
    tail -30 "$log" >&2
    echo "build-gstreamer: $version $name failed (the whole log: $log)" >&2
    exit 1
  fi
  echo "$spec" > "$prefix/.part-$name"
  echo "build-gstreamer: $version $name took $((SECONDS - at)) s"
}

main() {
  version=${1:?usage: build-gstreamer.sh VERSION [SOURCE_DIR]}
  local project src_dir cache
  project=$(cd "$(dirname "$0")/.." && pwd)
  src_dir=${2:-$project/../shared/gstreamer-src}
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/gst-cudafft
  prefix=$cache/gstreamer-$version
  work=$cache/gstreamer-$version.build

  if complete; then
    echo "build-gstreamer: GStreamer $version already built in $prefix"
    echo "$prefix"
    return
  fi
  local tarball=$src_dir/gstreamer-$version.tar.xz
  [ -f "$tarball" ] || { echo "build-gstreamer: no $tarball" >&2; exit 1; }
  (cd "$src_dir" && grep " gstreamer-$version.tar.xz\$" SHA256SUMS | sha256sum -c --quiet -) || {
    echo "build-gstreamer: $tarball does not match $src_dir/SHA256SUMS" >&2
    exit 1
  }

  mkdir -p "$cache"
  # one build of a version at a time on this machine (two CI runs, or two people)
  exec 9> "$cache/gstreamer-$version.lock"
  flock 9
  if complete; then
    echo "$prefix"
    return
  fi

  # what scripts/install-deps.sh does not bring: core's parser generators, good's png plugin's
  # libpng, and venv for the Meson of 1.24 and later (Debian splits it out of python3)
  local sudo= p missing=()
  [ "$(id -u)" = 0 ] || sudo=sudo
  for p in flex bison libpng-dev python3-venv; do
    dpkg-query -W -f '${Status}' "$p" 2> /dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi

  meson=meson
  case $version in
  1.2[0-3].*) ;;
  *)
    local venv=$cache/meson-venv
    if [ ! -x "$venv/bin/meson" ]; then
      rm -rf "$venv"
      python3 -m venv "$venv"
      "$venv/bin/pip" install -q "$MESON_PYPI"
    fi
    meson=$venv/bin/meson
    ;;
  esac

  local started=$SECONDS
  # the time of the parts built before a cut (their markers' number), added to this run's
  local before=0
  [ -f "$prefix/.seconds" ] && before=$(cat "$prefix/.seconds")
  mkdir -p "$prefix" "$work"
  top=$work/gstreamer-$version/subprojects
  [ -d "$top" ] || tar -xJf "$tarball" -C "$work"

  # pkg-config and the tools find this prefix's GStreamer (the system's may be another version)
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  export PATH=$prefix/bin:$PATH
  export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

  common=(--prefix "$prefix" --libdir lib --buildtype debugoptimized -Dauto_features=disabled
    -Dexamples=disabled -Dtests=disabled -Dnls=disabled -Ddoc=disabled)
  local name
  for name in "${PARTS[@]}"; do
    local -n options=PART_${name//-/_}
    part "$name" "${options[@]}"
    echo $((before + SECONDS - started)) > "$prefix/.seconds"
  done

  local seconds=$((before + SECONDS - started))
  # the processor time too (this run's parts): on a machine shared with other builds the wall-clock
  # time says little, user + system time of the compilers says what the build costs
  local cpu
  times > "$work/times" # the shell's own, then its children's (a pipe would count a subshell's)
  cpu=$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/);
    printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$work/times")
  {
    echo "GStreamer $version built in $seconds s (this run's parts: $cpu s of processor time) with" \
      "ninja -j$JOBS on a machine of $(nproc) cores"
    spec
  } > "$prefix/.complete"
  rm -rf "$work" "$prefix/.seconds"
  echo "build-gstreamer: GStreamer $version built in $prefix ($seconds s)"
  echo "$prefix"
}

# the whole script is read before it runs (main, and the exit on the same line): editing it
# meanwhile is safe
main "$@"; exit $?
