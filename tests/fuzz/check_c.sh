#!/usr/bin/env bash
# The BPF C of fuzz_grammar's scripts, compiled with clang -Wall: a script
# the compiler accepts must give C that clang takes without an error or a
# warning of undefined behaviour (a constant division by zero was one).
# The reader's C (compiler/gen_native.c) of each is built and loaded too:
# `uring-trace --compile` warns when it does not compile.
#
#   tests/fuzz/check_c.sh [CORPUS_DIR [N]]   (default build/fuzz/grammar/corpus, 300)
#
# Takes N inputs of the corpus at random, writes each one's script with the
# replay binary (UT_FUZZ_PRINT=1), compiles the scripts that check against
# the stored kernel with --emit-c, and the C with clang-14 as test_golden.sh
# does.  Locals set and not read are only noise here.  Prints each script
# whose C fails, and a count; exit status 1 when one did.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${UT_BUILD:-build}
corpus=${1:-$root/$build/fuzz/grammar/corpus}
count=${2:-300}
TMP=$(mktemp -d /tmp/ut-check-c.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=tests/kernel/snapshot.sh
. "$root/tests/kernel/snapshot.sh"
use_kernel_snapshot || exit 1
export UT_ROOT=$root UT_CACHE_DIR=$TMP/cache
ut=$root/$build/uring-trace
"$ut" --compile -o "$TMP/any.uto" -e 'BEGIN { exit(); }' >/dev/null 2>&1
vmlinux=$(dirname "$(ls "$UT_CACHE_DIR"/btf-*/vmlinux.h)")
checked=0 failed=0
for input in $(ls -d "$corpus"/* | shuf -n "$count"); do
  UT_FUZZ_PRINT=1 "$root/$build/fuzz-replay/grammar" "$input" 2>&1 |
    awk '/^---- script/ { on = 1; next } /^----$/ { exit } on' >"$TMP/s.ut"
  "$ut" --emit-c "$TMP/s.ut" >"$TMP/s.c" 2>/dev/null || continue
  checked=$((checked + 1))
  if ! clang-14 -target bpf -O2 -g -Wall -Wno-unused-but-set-variable -Werror -c -I "$root/bpf" -I /usr/include \
       -I "$vmlinux" -o /dev/null "$TMP/s.c" 2>"$TMP/cc"; then
    failed=$((failed + 1))
    echo "== $input"
    cat "$TMP/s.ut"
    grep -m3 'error' "$TMP/cc"
  fi
  "$ut" --compile -o "$TMP/s.uto" "$TMP/s.ut" >/dev/null 2>"$TMP/uto.err"
  if grep -q "reader's generated C did not compile" "$TMP/uto.err"; then
    failed=$((failed + 1))
    echo "== $input (the reader's C)"
    cat "$TMP/s.ut"
    grep -m3 'error' "$TMP/uto.err"
  fi
done
echo "$checked scripts compiled, $failed of them to C that clang refuses"
[ "$failed" -eq 0 ]
