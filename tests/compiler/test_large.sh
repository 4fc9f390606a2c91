#!/usr/bin/env bash
# Large scripts compile in time linear in their size: a probe body of
# 100000 statements and a function body of 50000 (the most its expansion
# budget allows), each within `timeout 60` and a 2 MB stack.  Lists were
# once appended to by walking them (quadratic: the body took over 100 s),
# and a function's body was copied by recursing along its statements (one
# stack frame per statement).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
ulimit -s 2048
statements() {   # statements N TEXT: N lines of TEXT
  local i
  for ((i = 0; i < $1; i++)); do printf '\t%s\n' "$2"; done
}
compiles() {   # compiles NAME N PATTERN: NAME.ut compiles to C with N lines matching PATTERN
  timeout 60 "$UT" --emit-c "$TMP/$1.ut" >"$TMP/$1.c" 2>"$TMP/err"
  local rc=$? got
  got=$(grep -c "$3" "$TMP/$1.c")
  if [ "$rc" -eq 124 ]; then
    fail "large/$1" "not compiled in 60 s"
  elif [ "$rc" -ne 0 ]; then
    fail "large/$1" "exit status $rc"; tail -n 5 "$TMP/err" | sed 's/^/  | /'
  elif [ "$got" -ne "$2" ]; then
    fail "large/$1" "$got statements in the C, want $2"
  else
    pass "large/$1"
  fi
}
{
  echo 'tracepoint:syscalls:sys_enter_getppid {'
  statements 100000 '@n = count();'
  echo '}'
} >"$TMP/body.ut"
compiles body 100000 'ut_agg_add'
# a statement function: its body is copied where it is called
{
  echo 'fn tally() {'
  statements 50000 '@n++;'
  echo '}'
  echo 'tracepoint:syscalls:sys_enter_getppid { tally(); }'
} >"$TMP/fn_body.ut"
compiles fn_body 50000 'ut_shared_add'
