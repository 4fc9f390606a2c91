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
TMP=$(mktemp -d /tmp/ut-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
