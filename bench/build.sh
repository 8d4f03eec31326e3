#!/usr/bin/env bash
# `make -j2` of this project, traced vs untraced: max_rss's own build (the
# default target: its library, binary and bench programs; RelWithDebInfo, no
# tests) from clean, as a developer runs it. ~2 minutes a build on a 2-CPU
# machine, so it is a bench of its own rather than a row of bench/programs.sh
# (whose `make -j2` row, ~40 one-file C programs, is the harsher stand-in:
# many short compiler processes, few seconds of work).
#
# usage: bench/build.sh [BUILD_DIR] [ROUNDS]      (defaults: build, 3)
#   BUILD_DIR holds the max_rss to measure (scripts/setup.sh builds it). With
#   both backends, 1 + 3 x ROUNDS builds: ~20 minutes for 3 rounds here.
#
# One CMake configuration (Unix Makefiles) in a temporary directory; then, per
# round, `make clean` (not timed) and `make -j2` untraced (A) and under
# max_rss with each backend that works here (B), after one unmeasured warm-up
# build; the order of the round's builds rotates from round to round. The
# ratio is the median of the B/A wall-time ratios of each round; the tree
# peak the last round's traced build reported is printed beside it.
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
make_once() {  # "$@": a prefix command (none: untraced); prints the wall time in ns
  make -s -C "$WORK/tree" clean >/dev/null 2>&1 || { echo "build: make clean failed" >&2; return 1; }
  local t0 t1 status=0
  t0=$(date +%s%N)
  "$@" make -s -C "$WORK/tree" -j2 >"$WORK/make.log" 2>&1 || status=$?
  t1=$(date +%s%N)
  if ((status != 0)); then
    echo "build: make -j2 failed (exit $status)${1:+ under $*}; its last lines:" >&2
    tail -n 20 "$WORK/make.log" >&2
    return 1
  fi
  echo $((t1 - t0))
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2}'; }

make_once >/dev/null  # warm-up: the compiler and headers in the page cache
echo "build: configured and warmed up; $ROUNDS rounds of $((1 + ${#backends[@]})) builds follow" >&2
runs=(untraced "${backends[@]}")
declare -A times
ratios_of() {  # $1: backend; the B/A ratio of each round
  local i a b out=()
  read -r -a a <<<"${times[untraced]}"
  read -r -a b <<<"${times[$1]}"
  for ((i = 0; i < ${#a[@]}; i++)); do out+=("$(awk -v x="${b[i]}" -v y="${a[i]}" 'BEGIN {printf "%.4f", x / y}')"); done
  printf '%s\n' "${out[@]}"
}
for ((i = 0; i < ROUNDS; i++)); do
  for ((j = 0; j < ${#runs[@]}; j++)); do
    run=${runs[(i + j) % ${#runs[@]}]}
    if [[ $run == untraced ]]; then
      t=$(make_once)
    else
      t=$(make_once "$MAX_RSS" -q --backend "$run" -o "$WORK/$run.json" --)
    fi
    times[$run]+="$t "
  done
  echo "build: round $((i + 1)) of $ROUNDS done" >&2
done

ms() { awk -v x="$1" 'BEGIN {printf "%.1f", x / 1e6}'; }
mu=$(printf '%s\n' ${times[untraced]} | median)
command -v python3 >/dev/null || echo "build: no python3: the tree peak column reads ?" >&2
printf '%-8s %12s %12s %8s %8s %8s %20s\n' backend untraced_ms traced_ms ratio min max last_tree_peak_MiB
for backend in "${backends[@]}"; do
  mb=$(printf '%s\n' ${times[$backend]} | median)
  sorted=$(ratios_of "$backend" | sort -g)
  peak=$(python3 -c 'import json,sys; print("%.1f" % (json.load(open(sys.argv[1]))["peak"]["tree_bytes"] / 2**20))' \
    "$WORK/$backend.json" 2>/dev/null || echo "?")
  printf '%-8s %12s %12s %7.3fx %7.3fx %7.3fx %20s\n' "$backend" "$(ms "$mu")" "$(ms "$mb")" \
    "$(median <<<"$sorted")" "$(head -1 <<<"$sorted")" "$(tail -1 <<<"$sorted")" "$peak"
done
