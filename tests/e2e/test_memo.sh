#!/usr/bin/env bash
# Remembered reads (bpf/ut.h, ut_memo_read): a filter map that changes is
# read as it is at once, whoever changed it: a write in a probe on the
# same CPU, a delete on another CPU, clear() run by the reader.  Counts
# are exact: each phase's marks are counted or not by the filter the
# phase before set.
source "$(dirname "$0")/../lib.sh"
need_root_bpf memo || exit 0

# close() of fds no process has marks the phases: -1001 turns the filter
# on, -1002 deletes it, -1003 clears it (clear() is the reader's: it runs a
# moment later); -7 counts where the filter is on.
cat >"$TMP/filter.ut" <<'UT'
tracepoint:syscalls:sys_enter_close /(s32)args.fd == -1001/ { @on[0] = 1; }
tracepoint:syscalls:sys_enter_close /(s32)args.fd == -1002/ { delete(@on[0]); }
tracepoint:syscalls:sys_enter_close /(s32)args.fd == -1003/ { clear(@on); }
tracepoint:syscalls:sys_enter_close /(s32)args.fd == -7 && @on[0]/ { @counted = count(); }
UT
if ! "$UT" --dump placement "$TMP/filter.ut" 2>&1 | grep -q "map 0 @on: kernel"; then
	fail memo/placement "$("$UT" --dump placement "$TMP/filter.ut" 2>&1)"
fi
grep -q "ut_memo_read(&m_0" <("$UT" --emit-c "$TMP/filter.ut" 2>&1) && pass memo/reads_remembered \
	|| fail memo/reads_remembered "no ut_memo_read in the generated C"

# Each phase: (cpu, action, marks on that cpu); counted when the filter is on.
cat >"$TMP/phases.py" <<'PY'
import os, sys, time
def close(fd):
    try:
        os.close(fd)
    except OSError:
        pass
def on(): close(-1001)
def off(): close(-1002)
def cleared(): close(-1003); time.sleep(1)
cpus = sorted(os.sched_getaffinity(0))
a, b = cpus[0], cpus[-1]
phases = [(a, None, 100), (a, on, 3), (a, None, 5), (b, off, 7), (a, None, 11),
          (b, on, 13), (a, None, 17), (a, cleared, 19), (b, None, 23), (a, on, 29)]
for cpu, action, calls in phases:
    os.sched_setaffinity(0, {cpu})
    if action:
        action()
    for _ in range(calls):
        close(-7)
PY
# on at a: 3 + 5; off at b: not 7 nor 11 (at a); on at b: 13 + 17 (at a);
# cleared: not 19 nor 23 (at b); on: 29
want=$((3 + 5 + 13 + 17 + 29))
for mode in placed --all-in-kernel; do
	flag=; [ "$mode" = placed ] || flag=$mode
	"$UT" -q --summary-only --json "$TMP/memo.json" $flag -c "python3 $TMP/phases.py" "$TMP/filter.ut" \
		>"$TMP/memo.out" 2>"$TMP/memo.err"
	got=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["maps"]; print(m["@counted"][0]["value"] if m.get("@counted") else 0)' \
		"$TMP/memo.json" 2>>"$TMP/memo.err")
	if [ "$got" = "$want" ]; then pass "memo/filter_changes_seen ($mode)"
	else fail "memo/filter_changes_seen ($mode)" "counted $got, want $want; $(cat "$TMP/memo.err")"; fi
done


# A map written at every hit (a start time at getppid's entry, read and
# deleted at its exit) turns its remembering off after a few hundred
# stale reads (bpf/ut.h, UT_MEMO_OFF): every exit still finds its entry.
cat >"$TMP/start.ut" <<'UT'
tracepoint:syscalls:sys_enter_getppid { @s[tid] = nsecs; }
tracepoint:syscalls:sys_exit_getppid { @exits = count(); }
tracepoint:syscalls:sys_exit_getppid /@s[tid]/ { @found = count(); delete(@s[tid]); }
UT
for mode in placed --all-in-kernel; do
	flag=; [ "$mode" = placed ] || flag=$mode
	"$UT" -q --summary-only --json "$TMP/start.json" $flag -c "python3 -c 'import os
for _ in range(3000): os.getppid()'" "$TMP/start.ut" >"$TMP/start.out" 2>"$TMP/start.err"
	if python3 - "$TMP/start.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["maps"]
found = m["@found"][0]["value"] if m.get("@found") else 0
assert found >= 3000 and found == m["@exits"][0]["value"], m
PY
	then pass "memo/written_every_hit ($mode)"; else fail "memo/written_every_hit ($mode)" "$(cat "$TMP/start.json" "$TMP/start.err")"; fi
done
