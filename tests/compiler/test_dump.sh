#!/usr/bin/env bash
# Dump tests: for every tests/compiler/dump/NAME.ut, `--dump PASS` prints
# what each compiler pass leaves (docs/architecture.md), byte for byte as
# NAME.PASS holds it for each PASS file there is (ast, typed, resources,
# placement, reuse, reader-c, program).  Scripts are checked against the kernel
# stored in tests/kernel.  UPDATE=1 rewrites the NAME.PASS files there are (a new one
# starts empty): review the diff before committing.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/kernel/snapshot.sh
. "$(dirname "$0")/../kernel/snapshot.sh"
use_kernel_snapshot || { fail dump "cannot unpack the stored kernel"; exit 1; }
cd "$(dirname "$0")/dump" || exit 1
for ut in *.ut; do
  for pass in ast typed resources placement reuse reader-c program; do
    name=dump/${ut%.ut}.$pass
    want=${ut%.ut}.$pass
    [ -f "$want" ] || continue
    if ! timeout 60 "$UT" --dump "$pass" "$ut" >"$TMP/got" 2>"$TMP/err"; then
      fail "$name" "does not compile"; sed 's/^/  | /' "$TMP/err" | head -20; continue
    fi
    [ "${UPDATE:-}" = 1 ] && cp "$TMP/got" "$want"
    if cmp -s "$TMP/got" "$want"; then
      pass "$name"
    else
      fail "$name" "--dump $pass differs from $want"; diff -u "$want" "$TMP/got" | head -40 | sed 's/^/  | /'
    fi
  done
done
# an unknown pass is a usage error
"$UT" --dump nosuch -e 'BEGIN { exit(); }' >/dev/null 2>"$TMP/usage.err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "ast, typed, resources, placement, reuse, c, reader-c or program" "$TMP/usage.err"; then
  pass dump/unknown_pass
else
  fail dump/unknown_pass "exit status $rc: $(head -c 300 "$TMP/usage.err")"
fi
