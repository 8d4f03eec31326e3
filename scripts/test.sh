#!/usr/bin/env bash
# Builds everything and runs the whole test suite: unit tests, tracer accuracy
# tests on fixture programs, end-to-end tests of the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 300
