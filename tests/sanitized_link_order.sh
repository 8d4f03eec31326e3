#!/usr/bin/env bash
# The sanitized test binary links the test code, compiled without sanitizers,
# after the sanitized library's objects (tests/CMakeLists.txt). Where both
# define the same inline or template function, the linker keeps the first
# copy it meets: it must be the library's, instrumented, or the library's
# calls to it (std::vector::operator[] at -O0) go unchecked. Checks that for
# every such function whose two copies differ in size, the binary's copy has
# the library copy's size.
#   sanitized_link_order.sh BINARY LIBRARY_OBJECTS... --tests TEST_OBJECTS...
set -euo pipefail
binary=$1
shift
library=() tests=() into=library
for arg in "$@"; do
  if [[ $arg == --tests ]]; then into=tests; continue; fi
  [[ $arg == *.o ]] || continue  # a target's objects include its precompiled header
  if [[ $into == library ]]; then library+=("$arg"); else tests+=("$arg"); fi
done
(( ${#library[@]} && ${#tests[@]} )) || { echo "usage: $0 BINARY LIBRARY_OBJECTS... --tests TEST_OBJECTS..." >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Weak (COMDAT) functions as "name size", names with more than one size left out.
weak_functions() {
  nm -S --defined-only "$@" | awk 'NF == 4 && $3 == "W" {print $4, $2}' | sort -u |
    awk '{n[$1]++; s[$1]=$2} END {for (k in n) if (n[k] == 1) print k, s[k]}' | sort
}
weak_functions "${library[@]}" >"$work/library"
weak_functions "${tests[@]}" >"$work/tests"
weak_functions "$binary" >"$work/binary"
# name, library size, test size: the ones whose copies can be told apart.
join "$work/library" "$work/tests" | awk '$2 != $3' >"$work/both"
join "$work/both" "$work/binary" >"$work/linked"
compared=$(wc -l <"$work/linked")
wrong=$(awk '$4 != $2' "$work/linked" | wc -l)
if (( compared < 20 )); then
  echo "sanitized_link_order: only $compared functions defined by both the library and the tests: nothing to check?" >&2
  exit 1
fi
if (( wrong > 0 )); then
  echo "sanitized_link_order: $wrong of $compared functions defined by both are the test code's uninstrumented copies, e.g.:" >&2
  awk '$4 != $2 && n++ < 5 {print "  " $1}' "$work/linked" >&2
  exit 1
fi
echo "sanitized_link_order: all $compared functions defined by both the sanitized library and the test code are the library's"
