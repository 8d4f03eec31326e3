#!/usr/bin/env bash
# What one run costs inside `max_rss bench`, where the ebpf backend's kernel
# side is loaded before the first run and kept for all of them (docs/bench.md),
# against the same command untraced, side by side in one run.
#
# usage: bench/bench_mode.sh [BUILD_DIR] [ROUNDS]   (defaults: build, 9)
#
# For each load, after one unmeasured warm-up of each, ROUNDS rounds of: one
# untraced run timed here (fork, exec and wait, as bench times a run), then
# `max_rss bench -w 1 -r 1` with --backend ptrace and with --backend ebpf,
# whose measured run's time is read from its JSON export (with ebpf, that run
# is one the kernel side was handed to, after the warm-up). bench's own start,
# and with ebpf its load, come before its first run and are in no run's time: this is the cost
# a bench user sees in each run, where bench/overhead.sh gives that of one
# `max_rss -- COMMAND`, start and load included. Prints, per load and
# backend, the median of the rounds' ratios (bench's run over the untraced
# run of its round) with their min and max, and the medians in ms.
set -euo pipefail

usage() { echo "usage: $0 [BUILD_DIR] [ROUNDS]" >&2; exit 2; }
[[ ${1:-} == -h || ${1:-} == --help ]] && usage
[[ $# -le 2 ]] || usage
BUILD=${1:-build}
ROUNDS=${2:-9}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || usage
MAX_RSS=$BUILD/max_rss
[[ -x $MAX_RSS ]] || { echo "bench_mode.sh: $MAX_RSS not built" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench_mode.sh: python3 is needed to read bench's JSON export" >&2; exit 1; }
LOADS_DIR=$BUILD/bench-loads
[[ -x $LOADS_DIR/fork_loop ]] || { echo "bench_mode.sh: $LOADS_DIR not built (target max_rss_bench_loads)" >&2; exit 1; }

# label | command line
LOADS=(
  "startup (/bin/true)|/bin/true"
  "fork-heavy|$LOADS_DIR/fork_loop 2000"
  "exec-heavy|$LOADS_DIR/fork_exec_loop 1000"
  "thread-heavy|$LOADS_DIR/thread_loop 5000"
  "compute-bound|$LOADS_DIR/compute"
)
BACKENDS=(ptrace)
if why=$("$MAX_RSS" -q --backend ebpf -- true 2>&1); then BACKENDS+=(ebpf)
else echo "bench_mode.sh: skipped: ebpf: ${why#max_rss: }" >&2; fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# untraced_ms CMD...: the wall time of one run, in ms
untraced_ms() {
  local t0 t1
  t0=${EPOCHREALTIME//[!0-9]/}
  "$@" >/dev/null 2>&1 </dev/null
  t1=${EPOCHREALTIME//[!0-9]/}
  awk -v us=$((10#$t1 - 10#$t0)) 'BEGIN { printf "%.3f", us / 1000 }'
}

# bench_ms BACKEND COMMAND: the time bench gives its one run, in ms
bench_ms() {
  "$MAX_RSS" bench --backend "$1" -w 1 -r 1 -N --style none --export-json "$WORK/b.json" "$2" \
    >/dev/null 2>"$WORK/err" </dev/null || { cat "$WORK/err" >&2; exit 1; }
  python3 -c 'import json, sys; print("%.3f" % (json.load(open(sys.argv[1]))["results"][0]["median"] * 1000))' \
    "$WORK/b.json"
}

declare -A RATIOS BASE TRACED
for spec in "${LOADS[@]}"; do
  label=${spec%%|*}
  read -r -a load <<<"${spec#*|}"
  echo "bench_mode.sh: $label, $ROUNDS rounds" >&2
  untraced_ms "${load[@]}" >/dev/null
  for backend in "${BACKENDS[@]}"; do bench_ms "$backend" "${spec#*|}" >/dev/null; done
  for ((r = 0; r < ROUNDS; r++)); do
    base=$(untraced_ms "${load[@]}")
    for backend in "${BACKENDS[@]}"; do
      traced=$(bench_ms "$backend" "${spec#*|}")
      RATIOS[$label|$backend]+="$(awk -v a="$base" -v b="$traced" 'BEGIN { printf "%.4f", b / a }') "
      BASE[$label|$backend]+="$base "
      TRACED[$label|$backend]+="$traced "
    done
  done
done

echo
echo "Per-run cost inside max_rss bench ($ROUNDS alternating rounds; ratio = bench's run / the untraced run)"
echo
echo "| load | backend | median ratio | min | max | untraced median (ms) | in bench, median (ms) |"
echo "|---|---|---:|---:|---:|---:|---:|"
for spec in "${LOADS[@]}"; do
  label=${spec%%|*}
  for backend in "${BACKENDS[@]}"; do
    key="$label|$backend"
    read -r -a r <<<"${RATIOS[$key]}"
    med=$(printf '%s\n' "${r[@]}" | median)
    mn=$(printf '%s\n' "${r[@]}" | sort -g | head -1)
    mx=$(printf '%s\n' "${r[@]}" | sort -g | tail -1)
    b=$(printf '%s\n' ${BASE[$key]} | median)
    t=$(printf '%s\n' ${TRACED[$key]} | median)
    printf '| %s | %s | %.3fx | %.3fx | %.3fx | %.1f | %.1f |\n' "$label" "$backend" "$med" "$mn" "$mx" "$b" "$t"
  done
done
