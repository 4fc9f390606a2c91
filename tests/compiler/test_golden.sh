#!/usr/bin/env bash
# Golden tests: every tests/compiler/golden/NAME.ut compiles, and its
# generated C (--emit-c) with everything in the kernel (--all-in-kernel)
# equals NAME.c byte for byte; where placement moves work to the reader
# (compiler/placement.c) the C it generates then equals NAME.placed.c, and
# where it moves none there is no NAME.placed.c.  Each file also compiles
# for the BPF target with clang-14 against bpf/ and the stored kernel's
# vmlinux.h.  UPDATE=1 rewrites the files from the current compiler
# (review the diff before committing).
#
# The generated C depends on the kernel's tracepoint formats and BTF: the
# scripts are checked against the kernel stored in tests/kernel, so the
# output is the same on every machine.  The last check compiles every golden
# against the running kernel, which must take them too.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/kernel/snapshot.sh
. "$(dirname "$0")/../kernel/snapshot.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$root/tests/compiler/golden
cd "$dir" || exit 1
live_btf=${UT_BTF:-} live_tracefs=${UT_TRACEFS:-}
use_kernel_snapshot || { fail golden "cannot unpack the stored kernel"; exit 1; }

# The stored kernel's vmlinux.h: the runtime writes it into its cache when
# it builds a script against UT_BTF.
export UT_CACHE_DIR=$TMP/cache
timeout 120 "$UT" --compile -o "$TMP/any.uto" -e 'BEGIN { exit(); }' >/dev/null 2>"$TMP/vmlinux.err"
vmlinux=$(ls "$UT_CACHE_DIR"/btf-*/vmlinux.h 2>/dev/null | head -1)
clang=$(command -v clang-14 || true)

# golden NAME WANT ARGS...: the C of ARGS equals WANT, which compiles for BPF
golden() {
  local name=$1 want=$2; shift 2
  if ! timeout 60 "$UT" --emit-c "$@" >"$TMP/got.c" 2>"$TMP/err"; then
    fail "$name" "does not compile"; sed 's/^/  | /' "$TMP/err" | head -20; return
  fi
  if [ "${UPDATE:-}" = 1 ]; then
    cp "$TMP/got.c" "$want"
    echo "updated $want"
  fi
  if [ ! -f "$want" ]; then
    fail "$name" "no $want (make it with UPDATE=1)"; return
  fi
  if cmp -s "$TMP/got.c" "$want"; then
    pass "$name"
  else
    fail "$name" "generated C differs from $want"; diff -u "$want" "$TMP/got.c" | head -40 | sed 's/^/  | /'
  fi
  if [ -z "$clang" ]; then
    skip "$name.bpf" "no clang-14"
  elif [ -z "$vmlinux" ]; then
    fail "$name.bpf" "no vmlinux.h of the stored kernel: $(head -c 300 "$TMP/vmlinux.err")"
  elif "$clang" -target bpf -O2 -g -Wall -Werror -c -I "$root/bpf" -I /usr/include -I "$(dirname "$vmlinux")" \
       -o "$TMP/out.o" "$want" 2>"$TMP/cc"; then
    pass "$name.bpf"
  else
    fail "$name.bpf" "$want does not compile for BPF"; head -20 "$TMP/cc" | sed 's/^/  | /'
  fi
}

for ut in *.ut; do
  golden "golden/${ut%.ut}" "${ut%.ut}.c" --all-in-kernel "$ut"
  placed=${ut%.ut}.placed.c
  if ! timeout 60 "$UT" --emit-c "$ut" >"$TMP/placed.c" 2>"$TMP/err"; then
    fail "golden/${ut%.ut}.placed" "does not compile"; sed 's/^/  | /' "$TMP/err" | head -20
  elif cmp -s "$TMP/placed.c" "${ut%.ut}.c"; then
    [ "${UPDATE:-}" = 1 ] && rm -f "$placed"
    if [ -f "$placed" ]; then
      fail "golden/${ut%.ut}.placed" "placement moves nothing to the reader, but $placed exists"
    else
      pass "golden/${ut%.ut}.placed"
    fi
  else
    golden "golden/${ut%.ut}.placed" "$placed" "$ut"
  fi
done

# The running kernel: every golden script compiles against it too.
UT_BTF=$live_btf UT_TRACEFS=$live_tracefs
[ -n "$UT_BTF" ] || unset UT_BTF
[ -n "$UT_TRACEFS" ] || unset UT_TRACEFS
bad=()
for ut in *.ut; do
  timeout 60 "$UT" --emit-c "$ut" >/dev/null 2>"$TMP/err" || bad+=("$ut: $(grep -m1 error: "$TMP/err")")
done
if [ ${#bad[@]} -eq 0 ]; then
  pass golden/running_kernel
else
  fail golden/running_kernel "${#bad[@]} scripts do not compile against kernel $(uname -r)"
  printf '  | %s\n' "${bad[@]}" | head -20
fi
