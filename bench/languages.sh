#!/usr/bin/env bash
# Cross-language table: the peak memory and wall time of one small task in
# every language installed here, measured with `max_rss bench`, written as a
# Markdown page (docs/languages.md is the published one).
#
# The task (bench/languages/sum.*): build an array or list of 1,000,000
# integers (i*i mod 1000), sum it, print the sum (461500000). Each language
# also runs a baseline program that only prints 0 the same way, so the page
# separates the runtime's start-up cost from the task itself.
# Compiled languages are built into a temporary directory (C and C++ with -O2,
# Rust with -O, Fortran with -O2, Pascal with -O2, Go with go build, Zig with
# -O ReleaseFast, Java with javac). Every program is checked to print the right
# sum before it is measured; what is missing, fails to build or prints the
# wrong thing is skipped, said on stderr and listed in the page.
set -euo pipefail

PROG=bench/languages.sh
usage() {
  cat <<EOF
usage: $PROG [-o FILE] [-r RUNS] [--install] [BUILD_DIR]

Measures the tree peak memory and the wall time of one small task (and of a
start-up baseline) in every language installed here with \`max_rss bench\`, and
writes the results as a Markdown page. Progress and the list of skipped
languages go to stderr.

  -o, --output FILE  where to write the page; '-' (the default) is stdout.
                     The published page is regenerated with -o docs/languages.md.
  -r, --runs N       measured runs per program, after one warm-up run
                     (default: \$RUNS, else 5)
  --install          first install the Debian packages (apt-get, as root or
                     through sudo) of the languages that are missing, and jq
  -h, --help         show this help

BUILD_DIR is the build directory holding max_rss (default: build/ at the top of
the repository). Relative paths are relative to the current directory.
EOF
}
die() { echo "languages.sh: $*" >&2; exit 1; }
bad_usage() { echo "languages.sh: $*" >&2; echo "try '$PROG --help'" >&2; exit 2; }

HERE=$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname -- "$HERE")
SRC=$HERE/languages
OUT=-
RUNS=${RUNS:-5}
INSTALL=0
BUILD_ARG=
while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    -o | --output) [[ $# -ge 2 ]] || bad_usage "$1 needs a file name ('-' for stdout)"; OUT=$2; shift 2 ;;
    --output=*) OUT=${1#*=}; shift ;;
    -r | --runs) [[ $# -ge 2 ]] || bad_usage "$1 needs a number"; RUNS=$2; shift 2 ;;
    --runs=*) RUNS=${1#*=}; shift ;;
    --install) INSTALL=1; shift ;;
    --) shift; break ;;
    -?*) bad_usage "unknown option '$1'" ;;
    *) [[ -z $BUILD_ARG ]] || bad_usage "one BUILD_DIR only ('$BUILD_ARG', then '$1')"; BUILD_ARG=$1; shift ;;
  esac
done
if [[ $# -gt 0 ]]; then
  [[ -z $BUILD_ARG && $# -eq 1 ]] || bad_usage "one BUILD_DIR only"
  BUILD_ARG=$1
fi
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || bad_usage "--runs: '$RUNS' is not a positive number"
[[ -n $OUT ]] || bad_usage "--output: empty file name"

have() { command -v "$1" >/dev/null 2>&1; }

# Languages: the command each needs and the Debian package that brings it.
# (lua5.4 and python3 may also be reached as lua or through pyenv; see below.)
PACKAGES=(gcc:gcc g++:g++ rustc:rustc gfortran:gfortran fpc:fp-compiler
  javac:default-jdk-headless python3:python3 perl:perl node:nodejs go:golang-go
  lua5.4:lua5.4 ruby:ruby zig:zig jq:jq)
# apt_has PACKAGE: whether apt knows an installable version of PACKAGE.
apt_has() {
  local candidate
  have apt-cache || return 1
  candidate=$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
  [[ -n $candidate && $candidate != '(none)' ]]
}
package_of() {
  local pair
  for pair in "${PACKAGES[@]}"; do [[ ${pair%%:*} == "$1" ]] && { echo "${pair#*:}"; return; }; done
  echo "$1"
}
install_packages() {
  local pair want=() available=() sudo=()
  have apt-get || die "--install: no apt-get here; install the languages by hand"
  for pair in "${PACKAGES[@]}"; do have "${pair%%:*}" || want+=("${pair#*:}"); done
  [[ ${#want[@]} -gt 0 ]] || { echo "languages.sh: --install: every language is installed already" >&2; return; }
  if [[ $(id -u) -ne 0 ]]; then
    have sudo || die "--install: not root and no sudo; run as root: apt-get install ${want[*]}"
    sudo=(sudo)
  fi
  echo "languages.sh: --install: apt-get update" >&2
  "${sudo[@]}" apt-get update -qq >&2
  for pkg in "${want[@]}"; do
    if apt_has "$pkg"; then available+=("$pkg")
    else echo "languages.sh: --install: apt has no package '$pkg' here; its language will be skipped" >&2; fi
  done
  [[ ${#available[@]} -gt 0 ]] || return 0
  echo "languages.sh: --install: apt-get install ${available[*]}" >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${available[@]}" >&2
}
[[ $INSTALL == 0 ]] || install_packages

BUILD=${BUILD_ARG:-$ROOT/build}
[[ -d $BUILD ]] || die "build directory '$BUILD' not found (give BUILD_DIR, or build max_rss into $ROOT/build)"
BUILD=$(CDPATH='' cd -- "$BUILD" && pwd)
MAX_RSS=$BUILD/max_rss
[[ -x $MAX_RSS ]] || die "$MAX_RSS not found; build max_rss first"
have jq || die "jq is needed to write the tables (apt-get install jq, or --install)"
if [[ $OUT != - ]]; then
  [[ $OUT == /* ]] || OUT=$PWD/$OUT
  [[ -d $(dirname -- "$OUT") ]] || die "--output: directory '$(dirname -- "$OUT")' does not exist"
  if [[ -e $OUT ]]; then
    [[ ! -d $OUT && -w $OUT ]] || die "--output: cannot write '$OUT'"
  else
    [[ -w $(dirname -- "$OUT") ]] || die "--output: cannot create '$OUT'"
  fi
fi
EXPECTED=461500000

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# A word quoted for max_rss bench -N (single quotes, ' as '\'').
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

NAMES=() TASKS=() BASELINES=() VERSIONS=() SKIPPED=()
# skip NAME REASON: leaves NAME out, says why now and in the page.
skip() {
  echo "languages.sh: skipping $1: $2" >&2
  SKIPPED+=("$1|$2")
}
# missing NAME COMMAND: skips NAME because COMMAND is not installed.
missing() {
  local package
  package=$(package_of "$2")
  if apt_has "$package"; then
    skip "$1" "not installed: no \`$2\` in PATH (Debian package \`$package\`; \`--install\` adds it)"
  else
    skip "$1" "not installed: no \`$2\` in PATH, and apt knows no \`$package\` package here"
  fi
}
# failure STATUS: why a program failed, for a skip reason: its exit status and
# the start of its error output.
failure() {
  local said
  said=$(tr -s '\n\t' '  ' <"$WORK/err" | cut -c1-200 | sed 's/ *$//')
  echo "exit status $1${said:+: $said}"
}
# add NAME VERSION TASK_COMMAND BASELINE_COMMAND: keeps the language if its
# task prints the expected sum and its baseline prints 0.
add() {
  local name=$1 version=$2 task=$3 baseline=$4 got status
  # The same splitting max_rss -N does is not available in bash; eval the
  # quoted words instead (they come from q() above).
  got=$(eval "$task" 2>"$WORK/err" </dev/null) && status=0 || status=$?
  if [[ $status != 0 ]]; then
    skip "$name" "the task failed: $(failure "$status")"; return
  fi
  if [[ $got != "$EXPECTED" ]]; then
    skip "$name" "wrong output: the task printed '$(head -c 100 <<<"$got")', expected $EXPECTED"; return
  fi
  got=$(eval "$baseline" 2>"$WORK/err" </dev/null) && status=0 || status=$?
  if [[ $status != 0 ]]; then
    skip "$name" "the baseline failed: $(failure "$status")"; return
  fi
  if [[ $got != 0 ]]; then
    skip "$name" "wrong output: the baseline printed '$(head -c 100 <<<"$got")', expected 0"; return
  fi
  NAMES+=("$name") VERSIONS+=("$version") TASKS+=("$task") BASELINES+=("$baseline")
}
# compile NAME COMMAND...: runs a compiler quietly; skips NAME when it fails.
compile() {
  local name=$1; shift
  if ! "$@" >"$WORK/compile.log" 2>&1 </dev/null; then
    echo "languages.sh: $name: $*:" >&2; tail -5 "$WORK/compile.log" >&2
    skip "$name" "failed to build: $({ grep -m1 -i error "$WORK/compile.log" || head -1 "$WORK/compile.log"; } | cut -c1-200)"
    return 1
  fi
}

# The baselines print 0 with the same facility as the task, so that they load
# the same runtime (an empty C++ main() does not even link libstdc++).
printf '#include <stdio.h>\nint main(void) { printf("%%d\\n", 0); return 0; }\n' >"$WORK/empty.c"
if ! have gcc; then missing C gcc
elif compile C gcc -O2 -o "$WORK/sum_c" "$SRC/sum.c" && compile C gcc -O2 -o "$WORK/empty_c" "$WORK/empty.c"; then
  add C "$(gcc --version | head -1)" "$(q "$WORK/sum_c")" "$(q "$WORK/empty_c")"
fi
printf '#include <iostream>\nint main() { std::cout << 0 << %s; }\n' "'\\n'" >"$WORK/empty.cpp"
if ! have g++; then missing C++ g++
elif compile C++ g++ -O2 -o "$WORK/sum_cpp" "$SRC/sum.cpp" && compile C++ g++ -O2 -o "$WORK/empty_cpp" "$WORK/empty.cpp"; then
  add C++ "$(g++ --version | head -1)" "$(q "$WORK/sum_cpp")" "$(q "$WORK/empty_cpp")"
fi
echo 'fn main() { println!("{}", 0); }' >"$WORK/empty.rs"
if ! have rustc; then missing Rust rustc
elif compile Rust rustc -O -o "$WORK/sum_rs" "$SRC/sum.rs" && compile Rust rustc -O -o "$WORK/empty_rs" "$WORK/empty.rs"; then
  add Rust "$(rustc --version)" "$(q "$WORK/sum_rs")" "$(q "$WORK/empty_rs")"
fi
printf "program empty\n    print '(i0)', 0\nend program empty\n" >"$WORK/empty.f90"
if ! have gfortran; then missing Fortran gfortran
elif compile Fortran gfortran -O2 -o "$WORK/sum_f90" "$SRC/sum.f90" \
    && compile Fortran gfortran -O2 -o "$WORK/empty_f90" "$WORK/empty.f90"; then
  add Fortran "$(gfortran --version | head -1)" "$(q "$WORK/sum_f90")" "$(q "$WORK/empty_f90")"
fi
printf 'program Empty;\nbegin\n  WriteLn(0);\nend.\n' >"$WORK/empty.pas"
if ! have fpc; then missing Pascal fpc
elif compile Pascal fpc -O2 -FU"$WORK" -o"$WORK/sum_pas" "$SRC/sum.pas" \
    && compile Pascal fpc -O2 -FU"$WORK" -o"$WORK/empty_pas" "$WORK/empty.pas"; then
  add Pascal "Free Pascal $(fpc -iV)" "$(q "$WORK/sum_pas")" "$(q "$WORK/empty_pas")"
fi
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println(0) }\n' >"$WORK/empty.go"
if ! have go; then missing Go go
else
  # A cache of its own, so that nothing is read from or left in the user's.
  export GOCACHE=$WORK/gocache GOPATH=$WORK/gopath GOFLAGS='' GOTOOLCHAIN=local
  # Built from $WORK, so that no go.mod around the current directory applies.
  go_build() { (cd "$WORK" && go build -o "$WORK/$2" "$1"); }
  if compile Go go_build "$SRC/sum.go" sum_go && compile Go go_build "$WORK/empty.go" empty_go; then
    add Go "$(go version | cut -d' ' -f3-)" "$(q "$WORK/sum_go")" "$(q "$WORK/empty_go")"
  fi
fi
cat >"$WORK/empty.zig" <<'EOF'
const std = @import("std");

pub fn main() !void {
    if (comptime @hasDecl(std.fs.File, "stdout")) {
        try std.fs.File.stdout().writeAll("0\n");
    } else {
        try std.io.getStdOut().writeAll("0\n");
    }
}
EOF
if ! have zig; then missing Zig zig
else
  zig_build() {
    zig build-exe -O ReleaseFast --cache-dir "$WORK/zig-cache" --global-cache-dir "$WORK/zig-cache" \
      -femit-bin="$WORK/$2" "$1"
  }
  if compile Zig zig_build "$SRC/sum.zig" sum_zig && compile Zig zig_build "$WORK/empty.zig" empty_zig; then
    add Zig "zig $(zig version)" "$(q "$WORK/sum_zig")" "$(q "$WORK/empty_zig")"
  fi
fi
if ! have javac || ! have java; then missing Java javac
else
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
if ! have python3; then missing Python python3
else
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
if ! have perl; then missing Perl perl
else
  add Perl "perl $(perl -e 'printf "%vd", $^V')" "perl $(q "$SRC/sum.pl")" "perl -e 'print \"0\\n\"'"
fi
lua=$(command -v lua5.4 || command -v lua || true)
if [[ -z $lua ]]; then missing Lua lua5.4
else
  add Lua "$("$lua" -v 2>&1 | cut -d' ' -f1-2)" "$(q "$lua") $(q "$SRC/sum.lua")" "$(q "$lua") -e 'print(0)'"
fi
if ! have ruby; then missing Ruby ruby
else
  add Ruby "$(ruby --version | cut -d' ' -f1-2)" "ruby $(q "$SRC/sum.rb")" "ruby -e 'puts 0'"
fi
if ! have node; then missing Node.js node
else
  add Node.js "node $(node --version)" "node $(q "$SRC/sum.js")" "node -e 'console.log(0)'"
fi

[[ ${#NAMES[@]} -gt 0 ]] || die "no language available"

# bench ARRAY_NAME PREFIX: benchmarks the commands of that array, named by language.
bench() {
  local -n commands=$1
  local prefix=$2 args=()
  for i in "${!NAMES[@]}"; do args+=(-n "${NAMES[$i]}" "${commands[$i]}"); done
  echo "== $prefix: ${#NAMES[@]} languages x $RUNS runs" >&2
  "$MAX_RSS" bench --runs "$RUNS" --warmup 1 -N --style basic --export-json "$WORK/$prefix.json" "${args[@]}"
}
# Wall times depend on what else the machine is doing; the page says how busy it was.
load_start=$(cut -d' ' -f1 /proc/loadavg)
bench TASKS task
bench BASELINES baseline
load_end=$(cut -d' ' -f1 /proc/loadavg)

# Relative figures are against C, the baseline of the compiled languages; the
# first language measured stands in when C could not be.
REFERENCE=${NAMES[0]}
for name in "${NAMES[@]}"; do [[ $name == C ]] && REFERENCE=C; done

# The tables, from the two JSON exports (sizes in bytes, times in seconds).
# shellcheck disable=SC2016 # jq's own $variables
JQ_LIB='
  def f1: (. * 10 | round / 10) as $x | if $x == 0 then "0.0" else $x | tostring | if test("\\.") then . else . + ".0" end end;
  def f2: (. * 100 | round) as $c | "\($c / 100 | floor).\($c % 100 | tostring | if length < 2 then "0" + . else . end)";
  def mib: . / 1048576 | f1;
  def ms: . * 1000 | f1;
  def mean: add / length;
  def sd: if length < 2 then 0 else mean as $m | map((. - $m) * (. - $m)) | add / (length - 1) | sqrt end;
  def median: sort | if length % 2 == 1 then .[(length - 1) / 2] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def walls: [.runs[].wall_seconds];
  def missed: if .ru_maxrss_bytes then (.peak_bytes.median - .ru_maxrss_bytes.median) | mib else "n/a" end;
  def relative($ref):
    if .name == $ref.name then "**1.00**"
    else (.peak_bytes.mean / $ref.peak_bytes.mean) as $r
      | ($r * ((.peak_bytes.stddev / .peak_bytes.mean | . * .) + ($ref.peak_bytes.stddev / $ref.peak_bytes.mean | . * .) | sqrt)) as $s
      | "\($r | f2) ± \($s | f2)" end;
  def table($reference):
    (.results | map(select(.name == $reference))[0]) as $ref
    | "| Language | Peak mean ± σ [MiB] | Median [MiB] | Min … max [MiB] | ru_maxrss median [MiB] | × \($reference) | Wall mean ± σ [ms] | Wall median [ms] |",
      "|:---|---:|---:|---:|---:|---:|---:|---:|",
      (.results[] | "| \(.name) | \(.peak_bytes.mean | mib) ± \(.peak_bytes.stddev | mib) | \(.peak_bytes.median | mib) | \(.peak_bytes.min | mib) … \(.peak_bytes.max | mib) | \(if .ru_maxrss_bytes then .ru_maxrss_bytes.median | mib else "n/a" end) | \(relative($ref)) | \(walls | mean | ms) ± \(walls | sd | ms) | \(walls | median | ms) |");
'
jq -r --arg reference "$REFERENCE" "$JQ_LIB table(\$reference)" "$WORK/task.json" >"$WORK/task.md"
jq -r --arg reference "$REFERENCE" "$JQ_LIB table(\$reference)" "$WORK/baseline.json" >"$WORK/baseline.md"
# Language | task | baseline | task - baseline | time: task - baseline | tree - ru_maxrss (task) | (baseline)
jq -r --slurpfile baseline "$WORK/baseline.json" "$JQ_LIB"'
  .results | to_entries[] | .value as $t | ($baseline[0].results[.key]) as $b |
  "| \($t.name) | \($t.peak_bytes.median | mib) | \($b.peak_bytes.median | mib) | \(($t.peak_bytes.median - $b.peak_bytes.median) | mib) | \(($t | walls | median) - ($b | walls | median) | ms) | \($t | missed) | \($b | missed) |"
' "$WORK/task.json" >"$WORK/difference.md"
# Degraded runs and warnings, if any (max_rss could not trace and sampled /proc).
jq -r --arg kind task '.results[] | select(.degraded_runs > 0 or (.warnings | length) > 0)
  | "- \(.name) (\($kind)): \(.degraded_runs) of \(.runs | length) runs degraded\(.warnings | map("; " + .) | join(""))"' \
  "$WORK/task.json" >"$WORK/warnings.md"
jq -r --arg kind baseline '.results[] | select(.degraded_runs > 0 or (.warnings | length) > 0)
  | "- \(.name) (\($kind)): \(.degraded_runs) of \(.runs | length) runs degraded\(.warnings | map("; " + .) | join(""))"' \
  "$WORK/baseline.json" >>"$WORK/warnings.md"

cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
{
  cat <<EOF
# Peak memory of one small task across languages

Generated by \`bench/languages.sh --runs $RUNS\` on $(date -u '+%Y-%m-%d %H:%M UTC'): each program
measured with \`max_rss bench --runs $RUNS --warmup 1 -N\`.

Machine: Linux $(uname -r), $(nproc) CPUs ($cpu), $mem RAM; load average
(1 minute) $load_start when the measurements started, $load_end when they ended.

The task, in \`bench/languages/\`: build an array or list of 1,000,000 integers
(\`i*i mod 1000\`), sum it, print the sum. Every program stores 64-bit integers
where the language lets it choose (8,000,000 bytes of payload); Python, Perl,
Lua, Ruby and Node.js use their ordinary list, table or array (how each stores
them: the notes at the end). Each language also ran a baseline program that
only prints 0 the same way, to separate the runtime's own start-up cost from
the task.

Versions:

EOF
  for i in "${!NAMES[@]}"; do echo "- ${NAMES[$i]}: ${VERSIONS[$i]}"; done
  cat <<EOF

How to read the tables:

- **Peak** is the tree peak: the most memory the program and every process it
  started held at once, shared pages counted once.
- **ru_maxrss** is what \`wait4\` reports for the top process (GNU time,
  hyperfine).
- **× $REFERENCE** is the mean peak relative to $REFERENCE's in the same table: the $REFERENCE
  program for the task, the $REFERENCE baseline for the baselines.
- **Wall** is each run's wall time as max_rss measured it, from the start of
  the program to the exit of its last process, under max_rss's ptrace tracing
  (which costs little for one process and more per fork and exec:
  [performance.md](performance.md)). Other work on the machine moves it far
  more than it moves the peaks: see the load average above.

## The task

EOF
  cat "$WORK/task.md"
  cat <<EOF

## Start-up baselines (a program that prints 0)

EOF
  cat "$WORK/baseline.md"
  cat <<EOF

## The task's own cost

Medians, in MiB and ms. "Task − baseline" is what building and summing the
list added to the runtime's start-up cost. "Tree − ru_maxrss" is what
ru_maxrss alone would miss; negative, what it over-reports.

| Language | Task | Baseline | Task − baseline | Time, task − baseline [ms] | Tree − ru_maxrss, task | Tree − ru_maxrss, baseline |
|:---|---:|---:|---:|---:|---:|---:|
EOF
  cat "$WORK/difference.md"
  if [[ -s $WORK/warnings.md ]]; then
    printf '\n## Warnings from max_rss\n\n'
    cat "$WORK/warnings.md"
  fi
  printf '\n## Skipped\n\n'
  if [[ ${#SKIPPED[@]} -eq 0 ]]; then
    echo "Nothing: every language the script knows was measured."
  else
    for entry in "${SKIPPED[@]}"; do echo "- ${entry%%|*}: ${entry#*|}"; done
  fi
  cat "$SRC/notes.md"
} >"$WORK/page.md"

if [[ ${#SKIPPED[@]} -gt 0 ]]; then
  echo "languages.sh: measured ${#NAMES[@]} languages; skipped ${#SKIPPED[@]}:" >&2
  for entry in "${SKIPPED[@]}"; do echo "  ${entry%%|*}: ${entry#*|}" >&2; done
fi
if [[ $OUT == - ]]; then
  cat "$WORK/page.md"
else
  cat "$WORK/page.md" >"$OUT"
  echo "languages.sh: wrote $OUT" >&2
fi
