#!/usr/bin/env bash
# Cached maps (docs/language.md; bpf/ut.h, ut_front_read): in the kernel a
# key goes into its slot, or into the hash when the slot is taken.  More
# keys than slots put some in each; every read, add and delete finds its
# key wherever it went, and the summary shows the keys of both.
source "$(dirname "$0")/../lib.sh"
need_root_bpf cached || exit 0

# close() of fds no process has drives the phases: -1001 writes keys 1..N
# (value: the key), -1002 deletes the even keys up to N/2, -1003 adds 10
# to key 3, -1004 reads every key back and counts those that read wrong.
cat >"$TMP/cached.ut" <<'UT'
cached @m;
private @i, @j, @r;
tracepoint:syscalls:sys_enter_close /(s32)args.fd == -1001/ { @i[0] += 1; @m[@i[0]] = @i[0]; }
tracepoint:syscalls:sys_enter_close /(s32)args.fd == -1002/ { @j[0] += 1; delete(@m[@j[0] * 2]); }
tracepoint:syscalls:sys_enter_close /(s32)args.fd == -1003/ { @m[3] += 10; }
tracepoint:syscalls:sys_enter_close /(s32)args.fd == -1004/ {
	@r[0] += 1;
	$k = @r[0];
	$want = $k % 2 == 0 && $k <= 10000 ? 0 : $k + ($k == 3 ? 30 : 0);
	if (@m[$k] == $want) {
		@read_right = count();
	} else {
		@read_wrong = count();
	}
}
UT
grep -q "ut_front_write(&m_" <("$UT" --emit-c "$TMP/cached.ut" 2>&1) && pass cached/slots_in_c \
	|| fail cached/slots_in_c "no ut_front_write in the generated C"

cat >"$TMP/phases.py" <<'PY'
import os
def close(fd, times):
    for _ in range(times):
        try:
            os.close(fd)
        except OSError:
            pass
close(-1001, 20000)
close(-1002, 5000)
close(-1003, 3)
close(-1004, 20000)
PY
# keys 1..20000 less the 5000 even ones up to 10000; values the keys, 3 has 30 more
want_keys=15000
want_sum=$((20000 * 20001 / 2 - 5000 * 5001 + 30))
for mode in placed --all-in-kernel; do
	flag=; [ "$mode" = placed ] || flag=$mode
	"$UT" -q --summary-only --json "$TMP/cached.json" $flag -c "python3 $TMP/phases.py" "$TMP/cached.ut" \
		>"$TMP/cached.out" 2>"$TMP/cached.err"
	got=$(python3 - "$TMP/cached.json" <<'PY' 2>>"$TMP/cached.err"
import json, sys
m = json.load(open(sys.argv[1]))["maps"]
entries = m.get("@m", [])
one = lambda name: m[name][0]["value"] if m.get(name) else 0
print(len(entries), sum(e["value"] for e in entries), one("@read_right"), one("@read_wrong"))
PY
)
	if [ "$got" = "$want_keys $want_sum 20000 0" ]; then pass "cached/keys_values_reads ($mode)"
	else fail "cached/keys_values_reads ($mode)" "keys, sum, right, wrong: $got; want $want_keys $want_sum 20000 0; $(head -5 "$TMP/cached.err")"; fi
done
