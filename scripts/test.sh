#!/usr/bin/env bash
# Builds everything and runs the whole test suite: unit tests, tracer accuracy
# tests on fixture programs, end-to-end tests of the binary. Then, in
# build-asan, the suite again with AddressSanitizer, LeakSanitizer and
# UndefinedBehaviorSanitizer in max_rss and its tests (not in the fixture
# programs: they are what is measured). Both stages always run; the exit
# status is non-zero if either failed.
#   MAX_RSS_SANITIZE_STAGE=0 scripts/test.sh    the first stage only
set -uo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
failed=0
say() { echo "test.sh: $* ($((SECONDS - started)) s)" >&2; }

scripts/setup.sh --test || exit
(cd build && ctest --output-on-failure -j"$(nproc)" --timeout 300) || failed=1
say "plain build and tests done"
[[ "${MAX_RSS_SANITIZE_STAGE:-1}" == 0 ]] && exit $failed

# --- Sanitizers ---------------------------------------------------------------
# Not -DMAX_RSS_SANITIZE=ON: that option instruments every target, the C
# fixture programs too, whose peaks would then include ASan's runtime and
# shadow (+6 MiB on `touch 100`) and which abort at exit because LeakSanitizer
# cannot run in a traced process. CMAKE_CXX_FLAGS reach only C++ (max_rss and
# its tests) and are on their link lines too. -O0: compiles in half the time
# of -O2 and the tests are bound by system calls anyway.
sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g1" \
  "-DCMAKE_CXX_FLAGS=$sanitize" -DMAX_RSS_SANITIZE=OFF -DBUILD_TESTING=ON >/dev/null || exit
cmake --build build-asan -j"$(nproc)" --target max_rss_tests || exit
say "sanitizer build done"

# A ctest regex matching exactly the tests a Catch test spec selects.
tests_matching() {
  build-asan/tests/max_rss_tests --list-test-names-only "$1" |
    sed -e '/^$/d' -e 's/[][\\.*^$+?(){}|]/\\&/g' -e 's/^/^/' -e 's/$/$/' | paste -sd'|' -
}
# [degraded] runs max_rss under strace: LeakSanitizer refuses to run in a
# traced process, so those run without it. [own-rss] asserts max_rss's own
# peak RSS, which ASan's shadow memory inflates: not run here.
degraded=$(tests_matching "[degraded]")
own_rss=$(tests_matching "[own-rss]")
# The install tree and the .deb (tests/install) check packaging, not memory
# safety, and have run in the first stage.
packaging='^install_tree$|^deb_package$'
export UBSAN_OPTIONS=print_stacktrace=1
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 \
  ctest --output-on-failure -j"$(nproc)" --timeout 300 -E "${degraded:-^$}|${own_rss:-^$}|$packaging") || failed=1
if [[ -n "$degraded" ]]; then
  (cd build-asan && ASAN_OPTIONS=detect_leaks=0 \
    ctest --output-on-failure -j"$(nproc)" --timeout 300 -R "$degraded") || failed=1
fi
say "sanitizer tests done"
exit $failed
