#!/usr/bin/env bash
# The ebpf backend with and without loading while the program runs, side by
# side in one run: untraced, ebpf (overlap: the default as root), ebpf with
# MAX_RSS_EBPF_OVERLAP=0 (the load first), ptrace, alternating each round.
#
# usage: bench/ebpf_overlap.sh BUILD_DIR ROUNDS LOAD [ARGS...]
#   e.g. bench/ebpf_overlap.sh build 15 build/bench-loads/compute
# Prints the median wall time of each and the median of the pair ratios
# (each traced run over the untraced run of its round).
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 BUILD_DIR ROUNDS LOAD [ARGS...]" >&2; exit 2; }
BIN=$1/max_rss
ROUNDS=$2
shift 2
[[ -x $BIN ]] || { echo "$0: no $BIN (build it first)" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "$0: the overlap needs root" >&2; exit 2; }

us() {  # wall time of a command in microseconds
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || true
  end=$(date +%s%N)
  echo $(((end - start) / 1000))
}

for ((i = 0; i < ROUNDS; i++)); do
  u=$(us "$@")
  o=$(us "$BIN" -q --backend ebpf -- "$@")
  f=$(MAX_RSS_EBPF_OVERLAP=0 us "$BIN" -q --backend ebpf -- "$@")
  p=$(us "$BIN" -q -- "$@")
  echo "$u $o $f $p"
done | awk '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
  }
  { n++; for (k = 1; k <= 4; k++) { t[k, n] = $k; r[k, n] = $k / $1 } }
  END {
    split("untraced ebpf-overlap ebpf-load-first ptrace", name, " ")
    for (k = 1; k <= 4; k++) {
      for (i = 1; i <= n; i++) { a[i] = t[k, i]; b[i] = r[k, i] }
      printf "%-16s %10.1f ms", name[k], median(a, n) / 1000
      if (k > 1) printf "   %.4fx", median(b, n)
      printf "\n"
    }
  }'
