#!/usr/bin/env bash
# Builds everything and runs the whole test suite: unit tests, tracer accuracy
# tests on fixture programs, end-to-end tests of the binary; and the same tests
# again against max_rss built with AddressSanitizer, LeakSanitizer and
# UndefinedBehaviorSanitizer (the ctest names that start "sanitized/";
# tests/CMakeLists.txt says how). One ctest run does both, so they share the
# machine's cores to the end. The exit status is non-zero if any test failed.
#   MAX_RSS_SANITIZE_STAGE=0 scripts/test.sh    without the sanitized build
set -uo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
say() { echo "test.sh: $* ($((SECONDS - started)) s)" >&2; }

sanitized=ON
[[ "${MAX_RSS_SANITIZE_STAGE:-1}" == 0 ]] && sanitized=OFF
scripts/setup.sh --test -DMAX_RSS_SANITIZED_TESTS=$sanitized || exit
say "build done"
(cd build && ctest --output-on-failure -j"$(nproc)" --timeout 300)
failed=$?
say "tests done"
exit $failed
