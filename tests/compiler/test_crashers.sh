#!/usr/bin/env bash
# Fuzzer finds kept as regression tests: the tool must take every file in
# tests/compiler/crashers/ (any bytes) and exit 0 or 1 with no crash, hang
# or sanitizer report.  They run from a scratch directory so that imports
# find nothing.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
dir=$(cd "$(dirname "$0")/crashers" && pwd)
cd "$TMP" || exit 1
for f in "$dir"/*; do
  [ -f "$f" ] || continue
  name=crashers/$(basename "$f")
  timeout 60 "$UT" --emit-c "$f" >/dev/null 2>"$TMP/err"
  rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
    fail "$name" "exit status $rc"; tail -n 20 "$TMP/err" | sed 's/^/  | /'
  elif grep -q 'runtime error:\|AddressSanitizer\|LeakSanitizer' "$TMP/err"; then
    fail "$name" "sanitizer report"; grep -m5 'runtime error:\|Sanitizer' "$TMP/err" | sed 's/^/  | /'
  else
    pass "$name"
  fi
done
