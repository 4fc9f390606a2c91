#!/usr/bin/env bash
# The fuzzers' kept inputs, replayed: each target of tests/fuzz (grammar,
# decode, fxt) runs its corpus (tests/fuzz/corpus/NAME) and its crashers
# (tests/fuzz/crashers/NAME) through the replay binary the build made
# ($UT_BUILD/fuzz-replay/NAME: the target without libFuzzer, sanitized in
# build-san), against the stored kernel.  Every input must run with no
# crash, sanitizer report, failed check or hang; each target in seconds.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/kernel/snapshot.sh
. "$(dirname "$0")/../kernel/snapshot.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
use_kernel_snapshot || { fail fuzz/replay "cannot unpack the stored kernel"; exit 1; }
export UT_ROOT=$root TMPDIR=$TMP
for name in grammar decode fxt; do
  bin=$root/${UT_BUILD:-build}/fuzz-replay/$name
  if [ ! -x "$bin" ]; then
    fail "fuzz/$name" "no $bin (make test-build makes it)"; continue
  fi
  dirs=()
  for d in "$root/tests/fuzz/corpus/$name" "$root/tests/fuzz/crashers/$name"; do
    [ -d "$d" ] && dirs+=("$d")
  done
  start=$SECONDS
  timeout 300 "$bin" "${dirs[@]}" >/dev/null 2>"$TMP/$name.err"
  rc=$?
  ran=$(grep -c '^input ' "$TMP/$name.err")
  if [ "$ran" -eq 0 ]; then
    fail "fuzz/$name" "no input replayed: tests/fuzz/corpus/$name is empty or missing"
  elif [ "$rc" -ne 0 ] || grep -q 'runtime error:\|Sanitizer\|^fuzz_' "$TMP/$name.err"; then
    fail "fuzz/$name" "exit status $rc at $(grep '^input ' "$TMP/$name.err" | tail -1)"
    grep -v '^input ' "$TMP/$name.err" | head -30 | sed 's/^/  | /'
  else
    pass "fuzz/$name ($ran inputs in $((SECONDS - start)) s)"
  fi
done
