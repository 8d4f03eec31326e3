#!/usr/bin/env bash
# Real programs, traced vs untraced: the cost of max_rss on what people run.
#
# usage: bench/programs.sh [BUILD_DIR] [ROUNDS]      (defaults: build, 5)
#
# Each program runs untraced (A) and under max_rss (B, one per backend that
# works here) in alternation A B A B ... ROUNDS times after one unmeasured
# warm-up; the ratio is the median of the pairwise B/A wall-time ratios, with
# the median untraced time beside it. Programs (skipped, with the reason, when
# missing):
#   python3   a short script that imports a few modules and builds 50 MB of objects
#             (through the PATH's python3; when that is a shim, such as pyenv's,
#             the interpreter it runs is measured on a row of its own)
#   node      the same in JavaScript
#   java      a class that fills an ArrayList (compiled once, before timing)
#   make -j2  this project's fixture programs (tests/fixtures/*.c, ~40 C
#             files), compiled from scratch by a generated Makefile
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-5}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [BUILD_DIR] [ROUNDS]" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$BUILD" && pwd)
MAX_RSS=$BUILD/max_rss
[[ -x $MAX_RSS ]] || { echo "programs: $MAX_RSS not built" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

backends=(ptrace)
if "$MAX_RSS" -q --backend ebpf -o /dev/null -- true 2>/dev/null; then backends+=(ebpf); fi

cat >"$WORK/load.py" <<'EOF'
import json, re, collections
data = [{"k": i, "v": str(i) * 5} for i in range(200000)]
print(len(json.dumps(data[:1000])), len(collections.Counter(d["v"][:2] for d in data)))
EOF
cat >"$WORK/load.js" <<'EOF'
const data = [];
for (let i = 0; i < 200000; i++) data.push({k: i, v: String(i).repeat(5)});
console.log(JSON.stringify(data.slice(0, 1000)).length);
EOF
cat >"$WORK/Load.java" <<'EOF'
import java.util.ArrayList;
public class Load {
    public static void main(String[] a) {
        ArrayList<String> l = new ArrayList<>();
        for (int i = 0; i < 500000; i++) l.add(Integer.toString(i).repeat(3));
        System.out.println(l.size());
    }
}
EOF

loads=()
if command -v python3 >/dev/null; then
  loads+=("python3|python3 $WORK/load.py")
  # A version manager's shim (pyenv: a bash script, ~40 processes before
  # Python starts) is what a user's `python3` costs on such a machine; the
  # interpreter it ends in is measured on its own row too.
  interp=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
  shim=$(command -v python3)
  if [[ -n $interp && -x $interp && $(readlink -f "$interp") != $(readlink -f "$shim") ]]; then
    loads+=("python3 (interpreter)|$interp $WORK/load.py")
  fi
else
  echo "programs: skipped python3: not installed" >&2
fi
if command -v node >/dev/null; then loads+=("node|node $WORK/load.js"); else echo "programs: skipped node: not installed" >&2; fi
if command -v javac >/dev/null && (cd "$WORK" && javac Load.java 2>/dev/null); then
  loads+=("java|java -Xshare:auto -cp $WORK Load")
else
  echo "programs: skipped java: no javac" >&2
fi
if command -v make >/dev/null && command -v cc >/dev/null; then
  # One rule per fixture program: make -j2 runs cc (cc1, as, collect2, ld) for each.
  {
    printf 'SRC := %s\nPROGS := $(patsubst $(SRC)/%%.c,%%,$(wildcard $(SRC)/*.c))\n' "$SRC/tests/fixtures"
    printf 'all: $(PROGS)\n%%: $(SRC)/%%.c\n\tcc -O1 -pthread -o $@ $<\nclean:\n\trm -f $(PROGS)\n'
  } >"$WORK/Makefile"
  loads+=("make -j2|sh -c 'make -s -C $WORK clean && make -s -C $WORK -j2'")
else
  echo "programs: skipped make -j2: no make or cc" >&2
fi

now_ns() { date +%s%N; }
time_once() {  # prints the wall time of "$@" in ns
  local t0 t1
  t0=$(now_ns)
  eval "$@" >/dev/null 2>&1 || true
  t1=$(now_ns)
  echo $((t1 - t0))
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2}'; }

printf '%-22s %-8s %12s %12s %8s\n' program backend untraced_ms traced_ms ratio
md="| program | backend | untraced (median) | traced (median) | ratio (median of pairs) |\n|---|---|---:|---:|---:|\n"
for entry in "${loads[@]}"; do
  label=${entry%%|*}
  cmd=${entry#*|}
  for backend in "${backends[@]}"; do
    traced="$MAX_RSS -q --backend $backend -o /dev/null -- $cmd"
    time_once "$cmd" >/dev/null; time_once "$traced" >/dev/null  # warm-up
    a=(); b=(); r=()
    for ((i = 0; i < ROUNDS; i++)); do
      ta=$(time_once "$cmd"); tb=$(time_once "$traced")
      a+=("$ta"); b+=("$tb"); r+=("$(awk -v x="$tb" -v y="$ta" 'BEGIN {printf "%.4f", x / y}')")
    done
    ma=$(printf '%s\n' "${a[@]}" | median); mb=$(printf '%s\n' "${b[@]}" | median)
    mr=$(printf '%s\n' "${r[@]}" | median)
    printf '%-22s %-8s %12.1f %12.1f %7.3fx\n' "$label" "$backend" "$(awk -v x="$ma" 'BEGIN{print x/1e6}')" \
      "$(awk -v x="$mb" 'BEGIN{print x/1e6}')" "$mr"
    md+=$(printf '| %s | %s | %.1f ms | %.1f ms | **%.3fx** |' "$label" "$backend" "$(awk -v x="$ma" 'BEGIN{print x/1e6}')" \
      "$(awk -v x="$mb" 'BEGIN{print x/1e6}')" "$mr")"\n"
  done
done
printf '\n%b' "$md"
