#!/usr/bin/env bash
# Installs what max_rss needs to build (and, with --test, to run its tests) from
# Debian's packages, then configures and builds it in ./build.
#   scripts/setup.sh          build max_rss
#   scripts/setup.sh --test   also the test binaries (plain and sanitized), fixtures and test tools
#   scripts/setup.sh --test -DMAX_RSS_SANITIZED_TESTS=OFF   without the sanitized build
set -euo pipefail
cd "$(dirname "$0")/.."

want_tests=0
[[ "${1:-}" == "--test" ]] && want_tests=1 && shift
# Anything after --test goes to cmake's configure step (scripts/test.sh
# passes -DMAX_RSS_SANITIZED_TESTS).

# dpkg-dev and file: `cpack -G DEB` computes the .deb's dependencies with them.
packages=(g++ cmake make libcli11-dev libspdlog-dev nlohmann-json3-dev dpkg-dev file)
# The eBPF backend (--backend ebpf): clang compiles the kernel side, bpftool
# generates vmlinux.h and the skeleton, libbpf loads it (Debian 12 names;
# pkg-config finds libbpf). Without them max_rss builds without the backend.
packages+=(clang libbpf-dev bpftool pkg-config)
if (( want_tests )); then
  # chromium renders the --plot page in a test; strace is compared against in bench/.
  # python3-jsonschema checks bench exports against docs/bench-schema.json.
  packages+=(catch2 chromium fonts-liberation strace time python3-jsonschema)
  # man renders the man page, and the completions are tried in real shells (tests/install).
  packages+=(man-db groff-base zsh fish)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} )); then
  echo "setup: installing ${missing[*]}" >&2
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

testing=OFF
(( want_tests )) && testing=ON
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=$testing "$@" >/dev/null
cmake --build build -j"$(nproc)"
