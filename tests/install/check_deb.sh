#!/usr/bin/env bash
# Builds the Debian package from a build directory, in a temporary directory,
# and checks it without installing it:
#   check_deb.sh CPACK BUILD_DIR
# its control fields (name, version, maintainer, a Depends that names the
# package of every shared library the binary needs), its files (the binary,
# the man page, the three completions where Debian's tools look, owned by
# root), and that the binary it holds runs.
set -uo pipefail
cpack=$1
build=$2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
problems=0
problem() {
  echo "check_deb: $*" >&2
  problems=$((problems + 1))
}

if ! "$cpack" --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1; then
  cat "$tmp/cpack.log" >&2
  echo "check_deb: cpack failed" >&2
  exit 1
fi
debs=("$tmp"/out/*.deb)
if [[ ${#debs[@]} -ne 1 || ! -f ${debs[0]} ]]; then
  echo "check_deb: expected one .deb, cpack made: ${debs[*]}" >&2
  exit 1
fi
deb=${debs[0]}

version=$("$build/max_rss" --version | sed 's/^max_rss //')
arch=$(dpkg --print-architecture)
[[ $(basename "$deb") == "max-rss_${version}_${arch}.deb" ]] || problem "file name $(basename "$deb")"
field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == max-rss ]] || problem "Package: $(field Package)"
[[ $(field Version) == "$version" ]] || problem "Version: $(field Version), the binary says $version"
[[ $(field Architecture) == "$arch" ]] || problem "Architecture: $(field Architecture)"
[[ $(field Maintainer) =~ ^[^\<]+\ \<[^@\>]+@[^\>]+\>$ ]] || problem "Maintainer: $(field Maintainer)"
[[ $(field Description) == *ptrace* ]] || problem "Description: $(field Description)"

# Each shared library the binary needs, by the package that holds it here.
# dpkg knows a file by the path its package gave, which merged /usr hides:
# ask for the link and its target, each under /lib and /usr/lib, all in one
# query (each reads dpkg's whole database).
depends=$(field Depends)
declare -A library_of=()
while read -r library; do
  path=$(ldconfig -p | awk -v l="$library" '$1 == l && /x86-64|x86_64|64bit/ { print $NF; exit }')
  [[ -n $path ]] || path=$(ldconfig -p | awk -v l="$library" '$1 == l { print $NF; exit }')
  [[ -n $path ]] || { problem "ldconfig does not know $library"; continue; }
  for candidate in "$path" "$(readlink -f "$path")"; do
    library_of[${candidate#/usr}]=$library
    library_of[/usr${candidate#/usr}]=$library
  done
done < <(readelf -d "$build/max_rss" | sed -n -E 's/.*\(NEEDED\).*\[(.*)\]/\1/p')
declare -A owner_of=()
while IFS= read -r row; do  # "libc6:amd64: /lib/x86_64-linux-gnu/libc.so.6"
  library=${library_of[${row#*: }]:-}
  [[ -n $library ]] && owner_of[$library]=${row%%:*}
done < <(dpkg -S "${!library_of[@]}" 2>/dev/null)
for library in $(printf '%s\n' "${library_of[@]}" | sort -u); do
  owner=${owner_of[$library]:-}
  [[ -n $owner ]] || { problem "no package owns $library"; continue; }
  [[ ", $depends," == *", $owner "* || ", $depends," == *", $owner,"* ]] ||
    problem "Depends '$depends' lacks $owner, which holds $library"
done

listing=$(dpkg-deb -c "$deb")
for file in ./usr/bin/max_rss ./usr/share/man/man1/max_rss.1.gz \
  ./usr/share/bash-completion/completions/max_rss ./usr/share/zsh/vendor-completions/_max_rss \
  ./usr/share/fish/vendor_completions.d/max_rss.fish; do
  grep -qE -e " ${file//./\\.}\$" <<<"$listing" || problem "the package lacks $file"
done
grep -q ' ./usr/share/zsh/site-functions/' <<<"$listing" && problem "the package still has share/zsh/site-functions"
awk '$2 != "root/root"' <<<"$listing" | grep -q . && problem "files not owned by root: $(awk '$2 != "root/root"' <<<"$listing")"

dpkg-deb -x "$deb" "$tmp/root"
"$tmp/root/usr/bin/max_rss" -q -- true || problem "the packaged max_rss -q -- true exited $?"

if ((problems)); then
  echo "check_deb: $problems problems" >&2
  exit 1
fi
echo "check_deb: $(basename "$deb"): Depends: $depends"
