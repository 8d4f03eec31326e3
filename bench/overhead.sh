#!/usr/bin/env bash
# Overhead benchmark: wall time of each load traced vs untraced.
#
# usage: bench/overhead.sh [--set loads|scaling] [BUILD_DIR] [ROUNDS]
#        (defaults: loads, build, 5)
#
# --set loads:   the six load shapes below (the targets in docs/performance.md),
#                after /bin/true: a tool's fixed cost per run (its "added ms"),
#                which is what a short load's ratio mostly shows
# --set scaling: 10,000 processes or threads, from the test fixtures: the
#                cost of very wide and very long trees (what the reliability
#                tests run, timed here against the untraced program instead)
#
# For every load and every available tool, runs the load untraced (A) and traced (B)
# in alternation A B A B ... ROUNDS times (after one unmeasured warm-up of each), and
# reports the median of the pairwise ratios B/A with their min and max, plus the
# median untraced wall time. Tools:
#   max_rss  $BUILD_DIR/max_rss -q -- LOAD ARGS                        (if built; the ptrace backend)
#   ebpf     $BUILD_DIR/max_rss -q --backend ebpf -- LOAD ARGS         (if built with it and it loads here)
#   strace   strace -f --seccomp-bpf -e trace=none -o /dev/null LOAD   (if installed)
#   time     /usr/bin/time -o /dev/null LOAD                           (if installed)
# Loads come from $BUILD_DIR/bench-loads (target max_rss_bench_loads).
# Prints an aligned table, then the same table in Markdown.
set -euo pipefail

usage() { echo "usage: $0 [--set loads|scaling] [BUILD_DIR] [ROUNDS]" >&2; exit 2; }
SET=loads
if [[ ${1:-} == --set ]]; then
  [[ $# -ge 2 ]] || usage
  SET=$2
  shift 2
fi
[[ $# -le 2 ]] || usage
[[ ${1:-} == -h || ${1:-} == --help ]] && usage
BUILD=${1:-build}
ROUNDS=${2:-5}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || usage

# load label | command line (relative to $LOADS_DIR)
case $SET in
  loads)
    LOADS_DIR=$BUILD/bench-loads
    LOADS=(
      "startup (/bin/true)|/bin/true"
      "fork-heavy|fork_loop 2000"
      "exec-heavy|fork_exec_loop 1000"
      "thread-heavy|thread_loop 5000"
      "compute-bound|compute"
      "copy-on-write of a file|cow_file 256"
      "4 GiB resident|touch_big 4096"
    ) ;;
  scaling)
    LOADS_DIR=$BUILD/fixtures
    LOADS=(
      "10,000 alive at once|wide_tree 10000"
      "10,000 one after another|many_children 10000"
      "10,000 fork+exec|many_children 10000 /bin/true"
      "10,000 threads at once|many_threads 10000 64"
    ) ;;
  *) usage ;;
esac

for spec in "${LOADS[@]}"; do
  prog=${spec#*|}; prog=${prog%% *}
  [[ $prog == /* ]] && continue
  if [[ ! -x $LOADS_DIR/$prog ]]; then
    echo "overhead.sh: $LOADS_DIR/$prog not found; build the max_rss_bench_loads (or, for --set scaling, max_rss_fixtures) target first" >&2
    exit 1
  fi
done

TOOLS=()
if [[ -x $BUILD/max_rss ]]; then TOOLS+=(max_rss); else echo "overhead.sh: $BUILD/max_rss not built; skipping it" >&2; fi
if [[ -x $BUILD/max_rss ]]; then
  if why=$("$BUILD/max_rss" -q --backend ebpf -- true 2>&1); then TOOLS+=(ebpf)
  else echo "overhead.sh: skipped: ebpf: ${why#max_rss: }" >&2; fi
fi
if command -v strace >/dev/null 2>&1; then TOOLS+=(strace); else echo "overhead.sh: strace not installed; skipping it" >&2; fi
if [[ -x /usr/bin/time ]]; then TOOLS+=(time); else echo "overhead.sh: /usr/bin/time not installed; skipping it" >&2; fi
[[ ${#TOOLS[@]} -gt 0 ]] || { echo "overhead.sh: no tool to measure" >&2; exit 1; }

ERR=$(mktemp)
trap 'rm -f "$ERR"' EXIT

# now_us: sets NOW_US to the current time in microseconds. bash >= 5 has
# $EPOCHREALTIME (read without forking, so nothing extra lands inside the interval);
# older bash falls back to date(1).
NOW_US=0
now_us() {
  if [[ -n ${EPOCHREALTIME:-} ]]; then
    local t=${EPOCHREALTIME//[!0-9]/}
    NOW_US=$((10#$t))
  else
    NOW_US=$(( $(date +%s%N) / 1000 ))
  fi
}

# run_timed CMD...: runs CMD with stdout discarded, sets ELAPSED_US; aborts on failure.
ELAPSED_US=0
run_timed() {
  local t0 rc=0
  now_us; t0=$NOW_US
  "$@" >/dev/null 2>"$ERR" </dev/null || rc=$?
  now_us
  if [[ $rc -ne 0 ]]; then
    echo "overhead.sh: command failed (exit $rc): $*" >&2
    head -n 20 "$ERR" >&2
    exit 1
  fi
  ELAPSED_US=$((NOW_US - t0))
}

# traced_cmd TOOL LOAD...: prints nothing, fills the array CMD.
traced_cmd() {
  local tool=$1; shift
  case $tool in
    max_rss) CMD=("$BUILD/max_rss" -q -- "$@") ;;
    ebpf)    CMD=("$BUILD/max_rss" -q --backend ebpf -- "$@") ;;
    strace)  CMD=(strace -f --seccomp-bpf -e trace=none -o /dev/null "$@") ;;
    time)    CMD=(/usr/bin/time -o /dev/null "$@") ;;
  esac
}

# stats: reads numbers on stdin, prints "median min max".
stats() {
  sort -g | awk '{ v[NR] = $1 }
    END { if (NR == 0) { print "nan nan nan"; exit }
          m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
          printf "%.6f %.6f %.6f\n", m, v[1], v[NR] }'
}

ROWS=()   # "label|tool|median|min|max|untraced_ms|traced_ms"
for spec in "${LOADS[@]}"; do
  label=${spec%%|*}
  read -r -a load <<<"${spec#*|}"
  [[ ${load[0]} == /* ]] || load[0]=$LOADS_DIR/${load[0]}
  for tool in "${TOOLS[@]}"; do
    traced_cmd "$tool" "${load[@]}"
    echo "overhead.sh: $label: ${load[*]##*/} under $tool, $ROUNDS rounds" >&2
    run_timed "${load[@]}"    # warm-up, not measured
    run_timed "${CMD[@]}"
    ratios=() bases=() traced=()
    for ((r = 0; r < ROUNDS; r++)); do
      run_timed "${load[@]}"; a=$ELAPSED_US
      run_timed "${CMD[@]}"; b=$ELAPSED_US
      ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.6f", (a > 0 ? b / a : 0) }')")
      bases+=("$a")
      traced+=("$b")
    done
    read -r med mn mx < <(printf '%s\n' "${ratios[@]}" | stats)
    read -r bmed _ _ < <(printf '%s\n' "${bases[@]}" | stats)
    read -r tmed _ _ < <(printf '%s\n' "${traced[@]}" | stats)
    ROWS+=("$label|$tool|$med|$mn|$mx|$(awk -v u="$bmed" 'BEGIN { printf "%.1f", u / 1000 }')|$(awk -v u="$tmed" 'BEGIN { printf "%.1f", u / 1000 }')")
  done
done

echo
printf '%-26s %-8s %12s %8s %8s %14s %12s %10s\n' load tool "median ratio" min max "untraced ms" "traced ms" "added ms"
for row in "${ROWS[@]}"; do
  IFS='|' read -r label tool med mn mx ms tms <<<"$row"
  printf '%-26s %-8s %11.3fx %7.3fx %7.3fx %14s %12s %10.1f\n' "$label" "$tool" "$med" "$mn" "$mx" "$ms" "$tms" "$(awk -v a="$ms" -v b="$tms" 'BEGIN { print b - a }')"
done

echo
echo "Overhead ($ROUNDS alternating rounds; ratio = traced / untraced wall time)"
echo
echo "| load | tool | median ratio | min | max | untraced median (ms) | traced median (ms) | added (ms) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for row in "${ROWS[@]}"; do
  IFS='|' read -r label tool med mn mx ms tms <<<"$row"
  printf '| %s | %s | %.3fx | %.3fx | %.3fx | %s | %s | %.1f |\n' "$label" "$tool" "$med" "$mn" "$mx" "$ms" "$tms" "$(awk -v a="$ms" -v b="$tms" 'BEGIN { print b - a }')"
done
