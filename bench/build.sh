#!/usr/bin/env bash
# `make -j2` of this project, traced vs untraced: the build of max_rss itself
# (its library and binary, Release with debug info, no tests) from clean, as
# a developer runs it. ~2 minutes a build on a 2-CPU machine, so it is a
# bench of its own rather than a row of bench/programs.sh (whose `make -j2`
# row, ~40 one-file C programs, is the harsher stand-in: many short compiler
# processes, few seconds of work).
#
# usage: bench/build.sh [BUILD_DIR] [ROUNDS]      (defaults: build, 3)
#
# One CMake configuration (Unix Makefiles) in a temporary directory; then, per
# round, `make clean` (not timed) and `make -j2` untraced (A) and under
# max_rss with each backend that works here (B), in alternation after one
# unmeasured warm-up build. The ratio is the median of the pairwise B/A
# wall-time ratios; the tree peak each backend reported is printed beside it.
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-3}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [BUILD_DIR] [ROUNDS]" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$BUILD" && pwd)
MAX_RSS=$BUILD/max_rss
[[ -x $MAX_RSS ]] || { echo "build: $MAX_RSS not built" >&2; exit 2; }
command -v make >/dev/null || { echo "build: skipped: no make" >&2; exit 0; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

backends=(ptrace)
if "$MAX_RSS" -q --backend ebpf -o /dev/null -- true 2>/dev/null; then backends+=(ebpf); fi

cmake -S "$SRC" -B "$WORK/tree" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF \
  >/dev/null
make_once() {  # $1: a prefix command (empty: untraced); prints the wall time in ns
  make -s -C "$WORK/tree" clean >/dev/null 2>&1
  local t0 t1
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  $1 make -s -C "$WORK/tree" -j2 >/dev/null 2>&1 || { echo "build: make failed" >&2; exit 1; }
  t1=$(date +%s%N)
  echo $((t1 - t0))
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2}'; }

make_once "" >/dev/null  # warm-up: the compiler and headers in the page cache
declare -A times ratios
for ((i = 0; i < ROUNDS; i++)); do
  ta=$(make_once "")
  times[untraced]+="$ta "
  for backend in "${backends[@]}"; do
    tb=$(make_once "$MAX_RSS -q --backend $backend -o $WORK/$backend.json --")
    times[$backend]+="$tb "
    ratios[$backend]+="$(awk -v x="$tb" -v y="$ta" 'BEGIN {printf "%.4f", x / y}') "
  done
  echo "build: round $((i + 1)) of $ROUNDS done" >&2
done

ms() { awk -v x="$1" 'BEGIN {printf "%.1f", x / 1e6}'; }
mu=$(printf '%s\n' ${times[untraced]} | median)
printf '%-8s %12s %12s %8s %8s %8s %14s\n' backend untraced_ms traced_ms ratio min max tree_peak_MiB
for backend in "${backends[@]}"; do
  mb=$(printf '%s\n' ${times[$backend]} | median)
  sorted=$(printf '%s\n' ${ratios[$backend]} | sort -g)
  peak=$(python3 -c 'import json,sys; print("%.1f" % (json.load(open(sys.argv[1]))["peak"]["tree_bytes"] / 2**20))' \
    "$WORK/$backend.json" 2>/dev/null || echo "?")
  printf '%-8s %12s %12s %7.3fx %7.3fx %7.3fx %14s\n' "$backend" "$(ms "$mu")" "$(ms "$mb")" \
    "$(printf '%s\n' ${ratios[$backend]} | median)" "$(head -1 <<<"$sorted")" "$(tail -1 <<<"$sorted")" "$peak"
done
