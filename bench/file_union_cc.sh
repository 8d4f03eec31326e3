#!/usr/bin/env bash
# A linker for rustc (-C linker=) that runs cc and, while rust-lld runs,
# stops it every ~5 ms to read it beside rustc (this script's parent) with
# file_union.py; the reading with the largest union is left in
# $FILE_UNION_OUT. Used by bench/file_union.sh.
HERE=$(cd "$(dirname "$0")" && pwd)
: "${FILE_UNION_OUT:?set by bench/file_union.sh}"
rustc_pid=$PPID
reading=$FILE_UNION_OUT.reading
cc "$@" &
cc_pid=$!
best=0
while kill -0 "$cc_pid" 2>/dev/null; do
  lld=$(pgrep -x rust-lld | head -n 1 || true)
  [[ -n $lld ]] || continue
  while kill -STOP "$lld" 2>/dev/null; do
    python3 "$HERE/file_union.py" "$rustc_pid" "$lld" >"$reading" 2>/dev/null
    kill -CONT "$lld" 2>/dev/null
    # "all pages:  union X MiB, ...": X in tenths of a MiB
    union=$(awk '/^all pages:/ { print int($4 * 10) }' "$reading")
    if [[ -n $union ]] && ((union > best)); then
      best=$union
      cp "$reading" "$FILE_UNION_OUT"
    fi
    sleep 0.005
  done
  break
done
rm -f "$reading"
wait "$cc_pid"
