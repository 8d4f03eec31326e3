#!/usr/bin/env bash
# Builds a max_rss that runs on other x86-64 glibc distributions (libstdc++,
# libgcc and fmt inside it; only glibc shared), in ./build-portable, checks
# that it needs nothing else, and prints where it is and the oldest glibc it
# runs on. Needs the packages scripts/setup.sh installs.
#   scripts/portable.sh    ->  build-portable/max_rss-VERSION-ARCH-linux-gnu
set -euo pipefail
cd "$(dirname "$0")/.."
build="build-portable"

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMAX_RSS_PORTABLE=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target max_rss

# glibc's own libraries are the only ones a glibc system surely has.
glibc_libraries='^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux[-a-z0-9_]*\.so\.[0-9]+)$'
needed=$(readelf -d "$build/max_rss" | sed -n -E 's/.*\(NEEDED\).*\[(.*)\]/\1/p')
others=$(grep -vE "$glibc_libraries" <<<"$needed" || true)
if [[ -n $others ]]; then
  echo "portable: $build/max_rss still needs: $others" >&2
  exit 1
fi

version=$("$build/max_rss" --version | sed 's/^max_rss //')
out=$build/max_rss-$version-$(uname -m)-linux-gnu
strip -o "$out" "$build/max_rss"
"$out" -q -- true

# The newest glibc symbol version it uses is the oldest glibc it runs on.
glibc=$(objdump -T "$out" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)

# As root, prove it: run it where nothing but glibc's libraries exist.
if [[ $(id -u) -eq 0 ]] && command -v chroot >/dev/null; then
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  cp "$out" "$root/max_rss"
  for library in $(ldd "$out" | grep -oE '/[^ ]+'); do
    mkdir -p "$root$(dirname "$library")"
    cp -L "$library" "$root$library"
  done
  chroot "$root" /max_rss --version >/dev/null
  echo "portable: it ran in a root holding only: $(cd "$root" && find . -type f ! -name max_rss | sort | tr '\n' ' ')" >&2
fi
echo "portable: $out ($(du -h "$out" | cut -f1)), needs only $(tr '\n' ' ' <<<"$needed")from glibc $glibc or newer"
