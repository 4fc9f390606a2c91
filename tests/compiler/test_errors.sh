#!/usr/bin/env bash
# Error tests: every tests/compiler/errors/NAME.ut is a bad script.  The
# tool must exit with status 1, print no C, and its stderr must contain the
# lines of NAME.expected in that order (other lines may come between).
# The "error:" lines must be exactly those of NAME.expected: no cascade of
# extra errors, none missing.  An expected line ending in "[...]" matches
# any line that starts with the text before it (for paths that differ
# between machines).  Scripts run from the errors/ directory, so messages
# name them NAME.ut.  Scripts are checked against the kernel stored in
# tests/kernel, so messages naming tracepoints and types do not change with
# the machine.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/kernel/snapshot.sh
. "$(dirname "$0")/../kernel/snapshot.sh"
use_kernel_snapshot || { fail errors "cannot unpack the stored kernel"; exit 1; }
dir=$(cd "$(dirname "$0")/errors" && pwd)
cd "$dir" || exit 1
is_error() { [[ $1 =~ ^[^\ ]+:[0-9]+:[0-9]+:\ error:\  ]]; }
matches() {   # matches LINE PATTERN
  if [[ $2 == *'[...]' ]]; then [[ $1 == "${2%'[...]'}"* ]]; else [[ $1 == "$2" ]]; fi
}
for ut in *.ut; do
  name=errors/${ut%.ut}
  exp=${ut%.ut}.expected
  if [ ! -f "$exp" ]; then fail "$name" "no $exp"; continue; fi
  timeout 60 "$UT" --emit-c "$ut" >"$TMP/out" 2>"$TMP/err"
  rc=$?
  if [ "$rc" -ne 1 ]; then fail "$name" "exit status $rc, want 1"; sed 's/^/  | /' "$TMP/err" | head -20; continue; fi
  if [ -s "$TMP/out" ]; then fail "$name" "printed C despite errors"; continue; fi
  mapfile -t want <"$exp"
  mapfile -t got <"$TMP/err"
  # every expected line, in order
  i=0
  for line in "${got[@]}"; do
    [ "$i" -lt "${#want[@]}" ] && matches "$line" "${want[$i]}" && i=$((i + 1))
  done
  if [ "$i" -lt "${#want[@]}" ]; then
    fail "$name" "missing: ${want[$i]}"; sed 's/^/  | /' "$TMP/err" | head -20; continue
  fi
  # the same number of error lines
  ng=0; nw=0
  for line in "${got[@]}"; do is_error "$line" && ng=$((ng + 1)); done
  for line in "${want[@]}"; do is_error "$line" && nw=$((nw + 1)); done
  if [ "$ng" -ne "$nw" ]; then
    fail "$name" "$ng error lines, want $nw"; sed 's/^/  | /' "$TMP/err" | head -20; continue
  fi
  pass "$name"
done
