#!/usr/bin/env bash
# Runs every test and prints one closing line "N passed, N failed".
#
# A test is either a unit binary ($UT_BUILD/tests/test_*) or a shell script
# (tests/*/test_*.sh). Each prints lines "PASS name" or "FAIL name: why";
# a test that exits non-zero without printing FAIL counts as one failure.
# Shell tests find the tool as $UT (the binary under test).
set -u
cd "$(dirname "$0")/.."
export UT_BUILD=${UT_BUILD:-build}
export UT="$PWD/$UT_BUILD/uring-trace"
export UT_WORKLOADS="$PWD/${UT_WORKLOADS:-$UT_BUILD/workloads}"
export UT_ROOT="$PWD"
# intercept_tls_get_addr=0: with it, Debian 12's libasan records a bogus
# dynamic-TLS range once clang (dlopen'd) has read a precompiled header, and
# the leak checker then crashes at exit ("Tracer caught signal 11").
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
filter=${1:-}
out=tests/out
mkdir -p "$out"
passed=0 failed=0 skipped=0
failures=()

run_one() {
  local name=$1; shift
  local log="$out/$name.log"
  mkdir -p "$(dirname "$log")"
  local start=$SECONDS
  "$@" >"$log" 2>&1
  local rc=$?
  local p f s
  p=$(grep -c '^PASS ' "$log")
  f=$(grep -c '^FAIL ' "$log")
  s=$(grep -c '^SKIP ' "$log")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1; echo "FAIL $name: exited with status $rc" >>"$log"
  fi
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  printf '%-40s %4d passed %3d failed %3d skipped  (%ds)\n' "$name" "$p" "$f" "$s" $((SECONDS - start))
  if [ "$f" -gt 0 ]; then
    failures+=("$name")
    grep '^FAIL ' "$log" | head -20 | sed 's/^/    /'
    tail -n 15 "$log" | grep -v '^PASS \|^FAIL ' | sed 's/^/    | /'
  fi
}

for t in "$UT_BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  [ -n "$filter" ] && [[ $name != *$filter* ]] && continue
  run_one "$name" "$t"
done
for t in tests/*/test_*.sh; do
  [ -f "$t" ] || continue
  name=$(basename "$(dirname "$t")")/$(basename "$t" .sh)
  [ -n "$filter" ] && [[ $name != *$filter* ]] && continue
  run_one "$name" bash "$t"
done

[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]} (logs in $out/)"
if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
