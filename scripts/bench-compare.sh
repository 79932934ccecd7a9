#!/usr/bin/env bash
# bench-compare.sh OLD_TREE: the kernel benchmarks of an older source tree and of this one, on the
# same GPU in one run, alternating (old, new, old, new), so that a change's effect on speed is
# measured against run-to-run noise rather than across machines and days.
#
# OLD_TREE is a source folder of the older revision (e.g. `git archive REV | tar -x -C DIR`); its
# benchmarks are built in OLD_TREE/build-compare, this tree's in build-gpu (made by
# scripts/run-gpu.sh, or here when missing), both for CUDA_ARCH (default 90). BENCHES picks the
# programs (default: the three kernel benchmarks, with the arguments of their bench/RESULTS.md
# entries). Logs go to LOGDIR (default $OUT, else build-gpu/logs): one file per program and side,
# each run appended; the last lines printed are each program's result lines, old above new.
set -uo pipefail
old=$(realpath "${1:?usage: bench-compare.sh OLD_TREE}")
cd "$(dirname "$0")/.." || exit 1
[ -f .gst-bundle/activate ] && source .gst-bundle/activate
source scripts/env.sh
logdir=$(realpath -m "${LOGDIR:-${OUT:-build-gpu/logs}}")
mkdir -p "$logdir"
arch=${CUDA_ARCH:-90}
benches=${BENCHES:-"fft-bench --runs 100;spectrum-kernel-bench;convolve-kernel-bench --runs 50"}

build() { # build SRC DIR
  [ -d "$2" ] || meson setup "$2" "$1" -Dcuda-arch="$arch" -Dplugin=disabled -Dtests=disabled \
    > "$logdir/compare-setup-$(basename "$1").log" 2>&1 || return 1
  ninja -C "$2" > "$logdir/compare-build-$(basename "$1").log" 2>&1
}
build "$old" "$old/build-compare" || { echo "building $old failed"; exit 1; }
[ -d build-gpu ] || build "$PWD" build-gpu || { echo "building this tree failed"; exit 1; }

IFS=';' read -r -a list <<< "$benches"
for entry in "${list[@]}"; do
  program=${entry%% *}
  args=${entry#"$program"}
  for round in 1 2; do
    for side in old new; do
      dir=$([ "$side" = old ] && echo "$old/build-compare" || echo build-gpu)
      log=$logdir/compare-$program-$side.log
      echo "== $program ($side, round $round)$args" >> "$log"
      # shellcheck disable=SC2086 # args are the benchmark's own words
      "$dir/bench/$program" $args >> "$log" 2>&1 || echo "exit $?" >> "$log"
    done
  done
done
for entry in "${list[@]}"; do
  program=${entry%% *}
  for side in old new; do
    echo "== $program $side"
    grep -vE "^(==|#|$)" "$logdir/compare-$program-$side.log" | tail -n 30
  done
done
