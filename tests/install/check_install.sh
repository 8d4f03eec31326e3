#!/usr/bin/env bash
# Installs a build into a temporary prefix and checks what a user gets there:
#   check_install.sh CMAKE BUILD_DIR
# - bin/max_rss runs (--version, and a real `max_rss -- true`);
# - the man page max_rss(1) renders with `man -l`, without warnings, and each
#   option that `max_rss --help`, `max_rss bench --help` and
#   `max_rss compare --help` list is in its section (OPTIONS, BENCH, COMPARE);
# - bash, zsh and fish, each in a real shell from the installed completion
#   file, offer every one of those options in its mode, the subcommands, and
#   every backend the binary accepts after --backend.
# So an option added to the program but not to the page or a completion fails
# here. Every problem is listed before the exit status says so.
set -uo pipefail
cmake=$1
build=$2
here=$(cd "$(dirname "$0")" && pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
problems=0
problem() {
  echo "check_install: $*" >&2
  problems=$((problems + 1))
}

if ! "$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
  cat "$tmp/install.log" >&2
  echo "check_install: cmake --install failed" >&2
  exit 1
fi

bin=$prefix/bin/max_rss
manpage=$prefix/share/man/man1/max_rss.1.gz
bash_completion=$prefix/share/bash-completion/completions/max_rss
zsh_completion=$prefix/share/zsh/site-functions/_max_rss
fish_completion=$prefix/share/fish/vendor_completions.d/max_rss.fish
for file in "$bin" "$manpage" "$bash_completion" "$zsh_completion" "$fish_completion"; do
  [[ -f $file ]] || problem "not installed: ${file#"$prefix"/}"
done
((problems == 0)) || exit 1
[[ -x $bin ]] || problem "bin/max_rss is not executable"

# --- The binary ---------------------------------------------------------------
version=$("$bin" --version) || problem "max_rss --version failed"
[[ $version =~ ^max_rss\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || problem "max_rss --version said '$version'"
"$bin" -q -- true || problem "installed 'max_rss -q -- true' exited $?"

# The options a --help lists, one a line: "-o" and "--output" for "-o,--output FILE".
options_of() {
  "$bin" "$@" --help | sed -n -E 's/^ {1,4}(-[^ ]+).*/\1/p' | tr ',' '\n' | sed '/^$/d'
}
declare -A options
for mode in run bench compare; do
  args=()
  [[ $mode == run ]] || args=("$mode")
  options[$mode]=$(options_of "${args[@]}")
  # A parser that finds nothing would pass everything below.
  [[ ${options[$mode]} == *--help* ]] || problem "found no options in 'max_rss ${args[*]} --help'"
done
# The backends the binary accepts, from what it says to a wrong one:
# "'?' is not a backend (try ptrace, sample)".
refusal=$("$bin" --backend '?' -- true 2>&1)
backends=$(sed -n -E 's/.*is not a backend \(try ([^)]*)\).*/\1/p' <<<"$refusal" | tr -d ' ' | tr ',' '\n')
[[ -n $backends ]] || problem "could not read the backends from: $refusal"

# Whether $1 is one of the lines of $2 (no subprocess: this runs often).
has_line() { [[ $'\n'$2$'\n' == *$'\n'"$1"$'\n'* ]]; }

# --- The man page -------------------------------------------------------------
# --nh --nj: no hyphenation, so an option is never split over two lines.
rendered=$(MANWIDTH=100 LC_ALL=C.UTF-8 man --nh --nj --warnings -l "$manpage" 2>"$tmp/man.err") ||
  problem "man -l failed: $(cat "$tmp/man.err")"
[[ -s $tmp/man.err ]] && problem "man -l warned: $(cat "$tmp/man.err")"
[[ $rendered == *"$version"* ]] || problem "the man page does not say '$version'"
# The text of section $1: from its heading to the next one.
man_section() { awk -v h="$1" '/^[A-Z]/ { inside = ($0 == h) ; next } inside' <<<"$rendered"; }
declare -A section=([run]=OPTIONS [bench]=BENCH [compare]=COMPARE)
for mode in run bench compare; do
  text=$(man_section "${section[$mode]}")
  [[ -n $text ]] || { problem "the man page has no section ${section[$mode]}"; continue; }
  while read -r option; do
    [[ $text =~ (^|[^-[:alnum:]])${option}([^-[:alnum:]]|$) ]] ||
      problem "man page, ${section[$mode]}: no $option (in 'max_rss ${mode/run/} --help')"
  done <<<"${options[$mode]}"
done
for backend in $backends; do
  [[ $(man_section OPTIONS) =~ (^|[^[:alnum:]])${backend}([^[:alnum:]]|$) ]] ||
    problem "man page, OPTIONS: no backend $backend"
done

# --- Completions, each in its own shell ---------------------------------------
# The command lines tried (the cursor at the end of each), and what each
# should offer.
lines=("max_rss -" "max_rss bench -" "max_rss compare -" "max_rss " "max_rss --backend " "max_rss bench --backend ")
declare -A wanted=(
  [max_rss -]=${options[run]} [max_rss bench -]=${options[bench]} [max_rss compare -]=${options[compare]}
  [max_rss ]=$'bench\ncompare' [max_rss --backend ]=$backends [max_rss bench --backend ]=$backends
)
# What shell $1 offers for each of the lines: "N<TAB>candidate" for the Nth line.
complete_bash() {
  # shellcheck disable=SC2016
  bash --norc --noprofile -c '
    source "$1"
    shift
    index=0
    for typed; do
      index=$((index + 1))
      read -ra COMP_WORDS <<<"$typed"
      [[ $typed == *" " ]] && COMP_WORDS+=("")
      COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
      _max_rss
      for candidate in "${COMPREPLY[@]}"; do printf "%s\t%s\n" "$index" "$candidate"; done
    done' complete_bash "$bash_completion" "${lines[@]}"
}
complete_zsh() {
  zsh -f "$here/complete.zsh" "$prefix/share/zsh/site-functions" "${lines[@]}"
}
complete_fish() {
  # A home of its own: no user configuration; the installed completion found
  # where fish finds vendors' ones, through XDG_DATA_DIRS (and only for a
  # command in PATH).
  # shellcheck disable=SC2016
  HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_DATA_HOME=$tmp/home/.local/share \
    XDG_DATA_DIRS=$prefix/share:/usr/share PATH=$prefix/bin:$PATH \
    fish -c 'for i in (seq (count $argv))
               complete -C $argv[$i] | string replace -r "\t.*" "" | string replace -r "^" "$i\t"
             end' "${lines[@]}"
}

for shell in bash zsh fish; do
  if ! command -v "$shell" >/dev/null; then
    problem "$shell is not installed (scripts/setup.sh --test installs it)"
    continue
  fi
  all=$(complete_$shell) || problem "$shell completion failed"
  for i in "${!lines[@]}"; do
    line=${lines[$i]}
    offered=$(sed -n "s/^$((i + 1))\t//p" <<<"$all")
    while read -r candidate; do
      has_line "$candidate" "$offered" || problem "$shell completion: '$line' does not offer $candidate"
    done <<<"${wanted[$line]}"
  done
done

if ((problems)); then
  echo "check_install: $problems problems" >&2
  exit 1
fi
echo "check_install: binary, man page and completions installed and complete"
