# Helpers for shell tests: source it, then call pass/fail/skip.
# shellcheck shell=bash
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: ${2:-}"; }
skip() { echo "SKIP $1: ${2:-}"; }
# expect NAME CMD...: the command must succeed
expect() { local n=$1; shift; if "$@"; then pass "$n"; else fail "$n" "command failed: $*"; fi; }
need_root_bpf() {
  if [ "$(id -u)" -ne 0 ]; then skip "$1" "needs root"; return 1; fi
  return 0
}
# wait_for FILE REGEX: until FILE has a line matching REGEX; status 1 after
# 90 s (the process writing it may have died: fail rather than hang; a
# sanitized uring-trace compiling a script on a loaded machine took more
# than 30 s to start).
wait_for() {
  local i
  for i in $(seq 900); do
    grep -Eq "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
TMP=$(mktemp -d /tmp/ut-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
