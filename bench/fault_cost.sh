#!/usr/bin/env bash
# What each backend adds to one page fault, measured inside the faulting
# program (bench/loads/fault_cost.c), side by side in one run: untraced,
# ptrace, ebpf, alternating each round. Start-up, loading and the report
# are left out, so the figure is the per-fault cost alone; the load's
# pre-touch pass keeps the host's own faults out of it (see fault_cost.c).
#
# usage: bench/fault_cost.sh BUILD_DIR ROUNDS [MIB]   (MIB default 512; ebpf needs root)
# Prints the median ns per fault of each, the median added ns and the median
# of the pair ratios (each traced run over the untraced run of its round).
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 BUILD_DIR ROUNDS [MIB]" >&2; exit 2; }
BIN=$1/max_rss
LOAD=$1/bench-loads/fault_cost
ROUNDS=$2
MIB=${3:-512}
[[ -x $BIN && -x $LOAD ]] || { echo "$0: no $BIN or $LOAD (build them first)" >&2; exit 2; }
backends=(ptrace)
if [[ $(id -u) == 0 ]] && "$BIN" -q --backend ebpf -o /dev/null -- true 2>/dev/null; then
  backends+=(ebpf)
else
  echo "$0: --backend ebpf cannot run here; ptrace only" >&2
fi

for ((i = 0; i < ROUNDS; i++)); do
  line=$("$LOAD" "$MIB")
  for b in "${backends[@]}"; do
    line+=" $("$BIN" -q --backend "$b" -o /dev/null -- "$LOAD" "$MIB")"
  done
  echo "$line"
done | awk -v names="untraced ${backends[*]}" '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
  }
  { n++; for (k = 1; k <= NF; k++) { v[k, n] = $k; d[k, n] = $k - $1; r[k, n] = $k / $1 }; nf = NF }
  END {
    split(names, name, " ")
    for (k = 1; k <= nf; k++) {
      for (i = 1; i <= n; i++) { a[i] = v[k, i]; b[i] = d[k, i]; c[i] = r[k, i] }
      printf "%-10s %8.1f ns per fault", name[k], median(a, n)
      if (k > 1) printf "   %+7.1f ns   %.3fx", median(b, n), median(c, n)
      printf "\n"
    }
  }'
