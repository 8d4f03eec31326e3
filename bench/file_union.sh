#!/usr/bin/env bash
# File pages that a compiler and its linker or assembler both map: the
# union of their frames at an instant near the peak, against the "largest
# file set" rule the ebpf backend counts by (docs/how-it-works.md,
# "Remaining error"), beside each backend's tree peak (the ptrace backend
# counts the union, by file and page, since 2026-11-28).
#
# usage: bench/file_union.sh [BUILD_DIR] [RUNS]   (defaults: build, 5; root)
#
# Two cases, each RUNS times, on a machine with nothing else compiling:
#   rustc: `rustc -O` of a small program; its linker, rust-lld, maps parts of
#          the same libLLVM.so as rustc. A linker wrapper
#          (bench/file_union_cc.sh) stops rust-lld every ~5 ms of its run,
#          reads it and rustc with bench/file_union.py, and keeps the reading
#          with the largest union.
#   g++:   `g++ -O2 -pipe` of src/engine/recorder.cpp; `as` is stopped ~1 s
#          into its run and read with cc1plus.
# file_union.py prints the union of the two processes' frames against the
# rule. Then the same command runs under max_rss (each backend that loads
# here), whose "exact" tree peak is printed beside.
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
[[ $(id -u) == 0 ]] || { echo "file_union.sh: needs root (frame numbers in pagemap)" >&2; exit 2; }
[[ -x $BUILD/max_rss ]] || { echo "file_union.sh: no $BUILD/max_rss (build it first)" >&2; exit 2; }
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [BUILD_DIR] [RUNS]" >&2; exit 2; }
BACKENDS=(ptrace)
"$BUILD/max_rss" -q --backend ebpf -- true 2>/dev/null && BACKENDS+=(ebpf)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

tree_peak() {  # the report's tree peak and method, in MiB
  python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["peak"]; print("%.1f MiB (%s)" % (p["tree_bytes"]/2**20, p["method"]))' "$1"
}

if command -v rustc >/dev/null; then
  echo 'fn main() { let v = vec![7u8; 100 << 20]; println!("{}", v.iter().map(|&b| b as u64).sum::<u64>()); }' >"$WORK/r.rs"
  echo "== rustc -O beside its linker rust-lld (the largest of its readings, every ~5 ms)"
  for ((i = 1; i <= RUNS; i++)); do
    rm -f "$WORK/union.txt"
    FILE_UNION_OUT=$WORK/union.txt rustc -O "$WORK/r.rs" -o "$WORK/r" -C linker="$HERE/file_union_cc.sh" -C linker-flavor=gcc
    if [[ -s $WORK/union.txt ]]; then tail -n 1 "$WORK/union.txt"; else echo "(rust-lld ended before it was read)"; fi
  done
  for be in "${BACKENDS[@]}"; do
    for ((i = 1; i <= RUNS; i++)); do
      "$BUILD/max_rss" -q --backend "$be" -o "$WORK/report.json" -- rustc -O "$WORK/r.rs" -o "$WORK/r"
      echo "max_rss --backend $be: tree peak $(tree_peak "$WORK/report.json")"
    done
  done
else
  echo "file_union.sh: skipped rustc: not installed"
fi

SRC=$HERE/../src/engine/recorder.cpp
CXX_ARGS=(-std=c++20 -O2 -pipe -I"$HERE/../include" -c "$SRC" -o "$WORK/recorder.o")
echo "== g++ -O2 -pipe, its assembler stopped 1 s into its run"
for ((i = 1; i <= RUNS; i++)); do
  g++ "${CXX_ARGS[@]}" & gxx=$!
  as_pid=
  while kill -0 $gxx 2>/dev/null; do
    as_pid=$(pgrep -x as | head -n 1 || true)
    [[ -n $as_pid ]] && break
  done
  if [[ -n $as_pid ]]; then
    sleep 1
    if kill -STOP "$as_pid" 2>/dev/null; then
      cc1=$(pgrep -x cc1plus | head -n 1) || true
      # A failed read must not end the script before the CONT: as would stay stopped.
      if [[ -n $cc1 ]]; then python3 "$HERE/file_union.py" "$cc1" "$as_pid" | tail -n 1 || true; fi
      kill -CONT "$as_pid"
    fi
  fi
  wait $gxx
done
for be in "${BACKENDS[@]}"; do
  "$BUILD/max_rss" -q --backend "$be" -o "$WORK/report.json" -- g++ "${CXX_ARGS[@]}"
  echo "max_rss --backend $be: tree peak $(tree_peak "$WORK/report.json")"
done
