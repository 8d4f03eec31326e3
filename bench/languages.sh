#!/usr/bin/env bash
# Cross-language table: the peak memory of one small task in every language
# installed here, measured with `max_rss bench`, written to docs/languages.md.
#
# usage: bench/languages.sh [BUILD_DIR]        (default: build)
#
# The task (bench/languages/sum.*): build an array or list of 1,000,000
# integers (i*i mod 1000), sum it, print the sum (461500000). Each language
# also runs a baseline program that only prints 0 the same way, so the table
# separates the runtime's start-up cost from the task itself.
# Compiled languages are built into a temporary directory (C and C++ with -O2,
# Rust with -O, Fortran with -O2, Pascal with -O2, Java with javac). Every
# program is checked to print the right sum before it is measured.
# Environment: RUNS (default 5), OUT (default docs/languages.md).
set -euo pipefail

usage() { echo "usage: $0 [BUILD_DIR]" >&2; exit 2; }
[[ $# -le 1 ]] || usage
[[ ${1:-} == -h || ${1:-} == --help ]] && usage

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
SRC=$HERE/languages
BUILD=$(cd "${1:-build}" && pwd)
MAX_RSS=$BUILD/max_rss
RUNS=${RUNS:-5}
OUT=${OUT:-$ROOT/docs/languages.md}
EXPECTED=461500000
[[ -x $MAX_RSS ]] || { echo "languages.sh: $MAX_RSS not found; build max_rss first" >&2; exit 1; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# A word quoted for max_rss bench -N (single quotes, ' as '\'').
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
have() { command -v "$1" >/dev/null 2>&1; }

NAMES=() TASKS=() BASELINES=() VERSIONS=()
# add NAME VERSION TASK_COMMAND BASELINE_COMMAND: keeps the language if its
# task prints the expected sum and its baseline prints 0.
add() {
  local name=$1 version=$2 task=$3 baseline=$4 got
  # The same splitting max_rss -N does is not available in bash; eval the
  # quoted words instead (they come from q() above).
  if ! got=$(eval "$task" 2>"$WORK/err"); then
    echo "languages.sh: skipping $name: the task failed: $(head -c 300 "$WORK/err")" >&2; return
  fi
  if [[ $got != "$EXPECTED" ]]; then
    echo "languages.sh: skipping $name: printed '$got', expected $EXPECTED" >&2; return
  fi
  if ! got=$(eval "$baseline" 2>"$WORK/err") || [[ $got != 0 ]]; then
    echo "languages.sh: skipping $name: the baseline printed '$got': $(head -c 300 "$WORK/err")" >&2; return
  fi
  NAMES+=("$name") VERSIONS+=("$version") TASKS+=("$task") BASELINES+=("$baseline")
}
# compile LABEL COMMAND...: runs a compiler quietly, says why when it fails.
compile() {
  local label=$1; shift
  if ! "$@" >"$WORK/compile.log" 2>&1; then
    echo "languages.sh: skipping $label: compiling failed:" >&2; tail -5 "$WORK/compile.log" >&2; return 1
  fi
}

# The baselines print 0 with the same facility as the task, so that they load
# the same runtime (an empty C++ main() does not even link libstdc++).
printf '#include <stdio.h>\nint main(void) { printf("%%d\\n", 0); return 0; }\n' >"$WORK/empty.c"
if have gcc && compile C gcc -O2 -o "$WORK/sum_c" "$SRC/sum.c" && compile C gcc -O2 -o "$WORK/empty_c" "$WORK/empty.c"; then
  add C "$(gcc --version | head -1)" "$(q "$WORK/sum_c")" "$(q "$WORK/empty_c")"
fi
printf '#include <iostream>\nint main() { std::cout << 0 << %s; }\n' "'\\n'" >"$WORK/empty.cpp"
if have g++ && compile C++ g++ -O2 -o "$WORK/sum_cpp" "$SRC/sum.cpp" && compile C++ g++ -O2 -o "$WORK/empty_cpp" "$WORK/empty.cpp"; then
  add C++ "$(g++ --version | head -1)" "$(q "$WORK/sum_cpp")" "$(q "$WORK/empty_cpp")"
fi
echo 'fn main() { println!("{}", 0); }' >"$WORK/empty.rs"
if have rustc && compile Rust rustc -O -o "$WORK/sum_rs" "$SRC/sum.rs" && compile Rust rustc -O -o "$WORK/empty_rs" "$WORK/empty.rs"; then
  add Rust "$(rustc --version)" "$(q "$WORK/sum_rs")" "$(q "$WORK/empty_rs")"
fi
printf "program empty\n    print '(i0)', 0\nend program empty\n" >"$WORK/empty.f90"
if have gfortran && compile Fortran gfortran -O2 -o "$WORK/sum_f90" "$SRC/sum.f90" \
    && compile Fortran gfortran -O2 -o "$WORK/empty_f90" "$WORK/empty.f90"; then
  add Fortran "$(gfortran --version | head -1)" "$(q "$WORK/sum_f90")" "$(q "$WORK/empty_f90")"
fi
printf 'program Empty;\nbegin\n  WriteLn(0);\nend.\n' >"$WORK/empty.pas"
if have fpc && compile Pascal fpc -O2 -FU"$WORK" -o"$WORK/sum_pas" "$SRC/sum.pas" \
    && compile Pascal fpc -O2 -FU"$WORK" -o"$WORK/empty_pas" "$WORK/empty.pas"; then
  add Pascal "Free Pascal $(fpc -iV)" "$(q "$WORK/sum_pas")" "$(q "$WORK/empty_pas")"
fi
if have java && have javac; then
  mkdir -p "$WORK/java"
  printf 'public class Empty { public static void main(String[] args) { System.out.println(0); } }\n' \
    >"$WORK/java/Empty.java"
  if compile Java javac -d "$WORK/java" "$SRC/Sum.java" "$WORK/java/Empty.java"; then
    version=$(java -version 2>&1 | head -1)
    add Java "$version" "java -cp $(q "$WORK/java") Sum" "java -cp $(q "$WORK/java") Empty"
    # Java 11+ compiles a single source file in memory before running it.
    add "Java (source launcher)" "$version" "java $(q "$SRC/Sum.java")" "java $(q "$WORK/java/Empty.java")"
  fi
fi
if have python3; then
  # pyenv's python3 is a bash script that execs pyenv, which execs Python:
  # measure the interpreter itself, and the shim separately when there is one.
  python=$(command -v python3)
  if have pyenv && real=$(pyenv which python3 2>/dev/null) && [[ $real != "$python" ]]; then
    add "Python" "$("$real" --version 2>&1)" "$(q "$real") $(q "$SRC/sum.py")" "$(q "$real") -c 'print(0)'"
    add "Python (pyenv shim)" "$("$real" --version 2>&1) via pyenv $(pyenv --version | cut -d' ' -f2)" \
      "$(q "$python") $(q "$SRC/sum.py")" "$(q "$python") -c 'print(0)'"
  else
    add Python "$(python3 --version 2>&1)" "$(q "$python") $(q "$SRC/sum.py")" "$(q "$python") -c 'print(0)'"
  fi
fi
if have perl; then
  add Perl "perl $(perl -e 'printf "%vd", $^V')" "perl $(q "$SRC/sum.pl")" "perl -e 'print \"0\\n\"'"
fi
if have node; then
  add Node.js "node $(node --version)" "node $(q "$SRC/sum.js")" "node -e 'console.log(0)'"
fi

[[ ${#NAMES[@]} -gt 0 ]] || { echo "languages.sh: no language available" >&2; exit 1; }

# bench ARRAY_NAME PREFIX: benchmarks the commands of that array, named by language.
bench() {
  local -n commands=$1
  local prefix=$2 args=()
  for i in "${!NAMES[@]}"; do args+=(-n "${NAMES[$i]}" "${commands[$i]}"); done
  echo "== $prefix: ${#NAMES[@]} languages x $RUNS runs" >&2
  "$MAX_RSS" bench --runs "$RUNS" --warmup 1 -N --style basic \
    --export-markdown "$WORK/$prefix.md" --export-json "$WORK/$prefix.json" "${args[@]}"
}
bench TASKS task
bench BASELINES baseline

if have jq; then
  # Language | task | baseline | task - baseline | tree - ru_maxrss (task) | tree - ru_maxrss (baseline)
  difference=$(jq -r --slurpfile baseline "$WORK/baseline.json" '
    def mib: . / 1048576 * 10 | round / 10 | if . == 0 then "0.0" else tostring | if test("\\.") then . else . + ".0" end end;
    def missed: if .ru_maxrss_bytes then (.peak_bytes.median - .ru_maxrss_bytes.median) | mib else "n/a" end;
    .results | to_entries[] | .value as $t | ($baseline[0].results[.key]) as $b |
    "| \($t.name) | \($t.peak_bytes.median | mib) | \($b.peak_bytes.median | mib) | \(($t.peak_bytes.median - $b.peak_bytes.median) | mib) | \($t | missed) | \($b | missed) |"
  ' "$WORK/task.json")
fi

cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
mkdir -p "$(dirname "$OUT")"
{
  cat <<EOF
# Peak memory of one small task across languages

Generated by \`bench/languages.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') with \`max_rss bench --runs $RUNS --warmup 1 -N\`.

Machine: Linux $(uname -r), $(nproc) CPUs ($cpu), $mem RAM.

The task, in \`bench/languages/\`: build an array or list of 1,000,000 integers
(\`i*i mod 1000\`), sum it, print the sum. Every program stores 64-bit integers
where the language lets it choose (8,000,000 bytes of payload); Python, Perl and
Node.js use their ordinary list/array. Each language also ran a baseline
program that only prints 0 the same way, to separate the runtime's own start-up
cost from the task.

Versions:

EOF
  for i in "${!NAMES[@]}"; do echo "- ${NAMES[$i]}: ${VERSIONS[$i]}"; done
  cat <<EOF

## The task

"Peak" is the tree peak: the most memory the program and every process it
started held at once. ru_maxrss is what \`wait4\` reports for the top process
(GNU time, hyperfine). Relative is against the smallest mean peak.

EOF
  cat "$WORK/task.md"
  cat <<EOF

## Start-up baselines (a program that prints 0)

EOF
  cat "$WORK/baseline.md"
  if [[ -n ${difference:-} ]]; then
    cat <<EOF

## The task's own cost

Medians in MiB. "Task − baseline" is what building and summing the list added
to the runtime's start-up cost. "Tree − ru_maxrss" is what ru_maxrss alone
would miss; negative, what it over-reports.

| Language | Task | Baseline | Task − baseline | Tree − ru_maxrss, task | Tree − ru_maxrss, baseline |
|:---|---:|---:|---:|---:|---:|
$difference
EOF
  fi
  cat "$SRC/notes.md"
} >"$OUT"
echo "wrote $OUT" >&2
