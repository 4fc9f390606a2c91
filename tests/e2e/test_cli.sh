#!/usr/bin/env bash
# The command line end to end: ahead-of-time scripts, the object cache,
# probe alternatives, clear errors, and signals that always leave a
# readable trace.
source "$(dirname "$0")/../lib.sh"
need_root_bpf cli || exit 0
export UT_CACHE_DIR="$TMP/cache"
# A command without shell syntax runs directly: only its own calls count.
printf 'import os, sys\nfor i in range(int(sys.argv[1])): os.getppid()\n' >"$TMP/getppid.py"
getpid_loop() { python3 -c 'import os, time
for i in range(200): os.getpid(); time.sleep(0.005)'; }

# Fallback: the first alternative does not exist, the second attaches.
cat >"$TMP/alt.ut" <<'UT'
tracepoint:nosuch:event | tracepoint:syscalls:sys_enter_getppid { @calls = count(); }
UT
"$UT" -v -q --json "$TMP/alt.json" --summary-only -c "/usr/bin/python3 $TMP/getppid.py 7" \
	"$TMP/alt.ut" >"$TMP/alt.out" 2>"$TMP/alt.err"
if grep -q '"@calls":\[{"key":\[\],"value":7}\]' "$TMP/alt.json"; then pass cli/fallback_alternative
else fail cli/fallback_alternative "$(cat "$TMP/alt.json" "$TMP/alt.err")"; fi
grep -q "attached tracepoint:syscalls/sys_enter_getppid" "$TMP/alt.err" && pass cli/verbose_names_attached \
	|| fail cli/verbose_names_attached "$(cat "$TMP/alt.err")"

# str() of a syscall's pointer argument reads user memory, where the
# pointer points (it read kernel memory there, and gave "" for every file).
"$UT" -q --summary-only --json "$TMP/opened.json" -c "cat /etc/hostname" \
	-e 'tracepoint:syscalls:sys_enter_openat { @opened[str(args.filename)] = count(); }' >/dev/null 2>"$TMP/opened.err"
grep -q '"key":\["/etc/hostname"\]' "$TMP/opened.json" && pass cli/str_of_syscall_pointer \
	|| fail cli/str_of_syscall_pointer "$(head -c 300 "$TMP/opened.json") $(cat "$TMP/opened.err")"

# exit() in a quiet trace acts at once: the reader reads a ring that had
# too little data to wake it when its poll times out (it used to wait for
# -d: 10 s, 200 ticks).
"$UT" -q --summary-only -d 10 -e 'interval:ms:50 { @ticks = count(); exit(); }' >"$TMP/exit.out" 2>&1
ticks=$(sed -n 's/^@ticks: //p' "$TMP/exit.out")
[ -n "$ticks" ] && [ "$ticks" -le 20 ] && pass cli/exit_in_quiet_trace || fail cli/exit_in_quiet_trace "$(cat "$TMP/exit.out")"

# exit() ends tracing at once, as if detached there, wherever it runs: the
# rest of its hit does not run, nor do the probes' later hits (the reader
# reads on for a while; the kernel's probes until they see it), in the
# maps or the trace; END runs after it.  A tick every 2 ms, a switch counted
# on the other CPU.
cat >"$TMP/exit.ut" <<'UT'
interval:ms:2 { @ticks = count(); instant "tick" with n = @n; @n += 1; if (@n == 3) { @last = 1; exit(); @last = 2; } }
tracepoint:sched:sched_switch { @switches = count(); }
END { printf("end %d\n", @n); }
UT
for placement in placed --all-in-kernel; do
	opt=$placement; [ "$opt" = placed ] && opt=
	# shellcheck disable=SC2086
	"$UT" -q $opt -o "$TMP/exit.fxt" --json "$TMP/exit.json" -d 10 "$TMP/exit.ut" >"$TMP/exit.out" 2>"$TMP/exit.err"
	"$UT" stats --json "$TMP/exit.fxt" >"$TMP/exit.stats" 2>&1
	if python3 - "$TMP/exit.json" "$TMP/exit.stats" "$TMP/exit.out" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["maps"]
names = {(n["type"], n["name"]): n["count"] for n in json.load(open(sys.argv[2]))["names"]}
got = {k: m[k][0]["value"] for k in ("@ticks", "@n", "@last")}
assert got == {"@ticks": 3, "@n": 3, "@last": 1}, got
assert names.get(("instant", "tick")) == 3, names
assert open(sys.argv[3]).read().startswith("end 3\n"), open(sys.argv[3]).read()
PY
	then pass "cli/exit_ends_tracing_$placement"; else fail "cli/exit_ends_tracing_$placement" "$(cat "$TMP/exit.out" "$TMP/exit.err")"; fi
done

# Keyless maps (aggregations are one-slot arrays): every kind reads back,
# zeros too; one never assigned or cleared is left out of the summary, as
# an absent hash key would be.  JSON numbers are numbers, whatever made
# them; strings (short ones too), hex and names are strings.
"$UT" -q --summary-only --json "$TMP/keyless.json" -e 'BEGIN { @a = 5; @zero = 0; @n = count(); @s = sum(3);
	@str = "str"; @text = "a longer string"; @hx = hex(255); @err = errname(-11);
	@s0 = sum(0); @mn = min(4); @mx = max(-2); @mx0 = max(0); @av = avg(10); @cleared = 7; @cleared_count = count(); }
	END { clear(@cleared); clear(@cleared_count); } interval:ms:10 { exit(); }
	interval:s:3600 { @never = 1; @never_count = count(); @never_min = min(1); }' >/dev/null 2>"$TMP/keyless.err"
if python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["maps"]
want = {"@a": 5, "@zero": 0, "@n": 1, "@s": 3, "@s0": 0, "@mn": 4, "@mx": -2, "@mx0": 0, "@av": 10,
        "@str": "str", "@text": "a longer string", "@hx": "0xff", "@err": "-EAGAIN"}
got = {k: v[0]["value"] for k, v in m.items() if v}
sys.exit(0 if got == want else "got %s" % m)' "$TMP/keyless.json" 2>"$TMP/keyless.py"
then pass cli/keyless_maps; else fail cli/keyless_maps "$(cat "$TMP/keyless.json" "$TMP/keyless.err" "$TMP/keyless.py")"; fi

# A read right after an add of the same key takes the add's result; reads
# elsewhere look the map up (tests/compiler/golden/added_reads.ut): values.
"$UT" -q --summary-only --json "$TMP/added.json" -e 'fn show(v) { @shown = v; }
	BEGIN { @n[1] += 5; @a = @n[1]; if (@a > 100) { @n[1] += 1; } @b = @n[1]; @n[1] -= 2; @c = @n[2];
	@n[2] += 7; @d = @n[2] + @n[1]; @n[3] += 4; show(@n[3]); @n[3] += 1; @n[1] += 1; @e = @n[3]; exit(); }' \
	>/dev/null 2>"$TMP/added.err"
if python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["maps"]
got = {k: int(m[k][0]["value"]) for k in ("@a", "@b", "@c", "@d", "@shown", "@e")}
sys.exit(0 if got == {"@a": 5, "@b": 5, "@c": 0, "@d": 10, "@shown": 4, "@e": 5} else "got %s" % got)' "$TMP/added.json" 2>"$TMP/added.py"
then pass cli/read_after_add; else fail cli/read_after_add "$(cat "$TMP/added.json" "$TMP/added.err" "$TMP/added.py")"; fi

# for loops, loaded for real: break leaves the loop at 51 of 100.
"$UT" -q --summary-only --json "$TMP/loop.json" -e 'BEGIN { for ($i : 0..100) { if ($i == 51) { break; }
	@sq[$i] = $i * $i; } exit(); }' >/dev/null 2>"$TMP/loop.err"
if python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["maps"]["@sq"]
got = sorted((int(e["key"][0]), int(e["value"])) for e in m)
sys.exit(0 if got == [(i, i * i) for i in range(51)] else "got %s" % got)' "$TMP/loop.json" 2>"$TMP/loop.py"
then pass cli/loop_break; else fail cli/loop_break "$(cat "$TMP/loop.json" "$TMP/loop.err" "$TMP/loop.py")"; fi

# continue skips the rest of an iteration; a local keeps what the last
# iteration left.
"$UT" -q --summary-only --json "$TMP/cont.json" -e 'BEGIN { $n = 0; for ($i : -3..20) { if ($i % 3 == 0) { continue; }
	@kept[$i] = $n; $n += 1; } @n = $n; exit(); }' >/dev/null 2>"$TMP/cont.err"
if python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["maps"]
kept = [i for i in range(-3, 20) if i % 3]
got = sorted((int(e["key"][0]), int(e["value"])) for e in m["@kept"])
want = sorted((i, k) for k, i in enumerate(kept))
sys.exit(0 if got == want and int(m["@n"][0]["value"]) == len(kept) else "got %s" % m)' "$TMP/cont.json" 2>"$TMP/cont.py"
then pass cli/loop_continue; else fail cli/loop_continue "$(cat "$TMP/cont.json" "$TMP/cont.err" "$TMP/cont.py")"; fi

# A loop in a tracepoint that consumes keys 64 at a time: each iteration
# looks a key up, deletes it, ends its flow and writes an instant (64 of
# them do not fit in the stage: it is sent when full).  200 keys made by
# getppid, consumed by 5 getpid calls of this test's own process.
cat >"$TMP/consume.ut" <<'UT'
const BATCH = 64;
tracepoint:syscalls:sys_enter_getppid {
	$k = @made;
	@pending[$k] = nsecs;
	flow item[$k] begin "made";
	@made = $k + 1;
}
tracepoint:syscalls:sys_enter_getpid {
	$pos = @consumed;
	$end = @made;
	for ($i : 0..BATCH) {
		if ($pos >= $end) {
			break;
		}
		$t = @pending[$pos];
		if ($t) {
			flow item[$pos] end "used" with wait = nsecs - $t;
			instant "consumed" with key = $pos, i = $i;
			delete(@pending[$pos]);
			@used = count();
		}
		$pos += 1;
	}
	@consumed = $pos;
}
UT
printf 'import os\nfor i in range(200): os.getppid()\nfor i in range(5): os.getpid()\n' >"$TMP/consume.py"
"$UT" -q -o "$TMP/consume.fxt" --json "$TMP/consume.json" -c "/usr/bin/python3 $TMP/consume.py" "$TMP/consume.ut" \
	>/dev/null 2>"$TMP/consume.err"
"$UT" stats --json "$TMP/consume.fxt" >"$TMP/consume.stats" 2>&1
"$UT" dump "$TMP/consume.fxt" >"$TMP/consume.dump" 2>&1
if python3 -c 'import json, re, sys
m = json.load(open(sys.argv[1]))["maps"]
st = json.load(open(sys.argv[2]))
names = {(n["type"], n["name"]): n["count"] for n in st["names"]}
args = [tuple(map(int, a)) for a in re.findall(r"name=\"consumed\" args=\{key: \w+ (\d+), i: \w+ (\d+)\}", open(sys.argv[3]).read())]
errs = []
if [int(m[k][0]["value"]) for k in ("@made", "@consumed", "@used")] != [200, 200, 200]: errs.append("maps %s" % m)
if m["@pending"]: errs.append("keys left %s" % m["@pending"])
if st["flows"]["complete"] != 200 or st["flows"]["incomplete"]: errs.append("flows %s" % st["flows"])
if names.get(("flow_end", "used")) != 200 or names.get(("instant", "consumed")) != 200: errs.append("names %s" % names)
if sorted(k for k, i in args) != list(range(200)) or sorted(set(i for k, i in args)) != list(range(64)): errs.append("args %s" % args)
if st["errors"] or json.load(open(sys.argv[1]))["lost"]: errs.append("errors or lost records")
sys.exit("; ".join(errs) or None)' "$TMP/consume.json" "$TMP/consume.stats" "$TMP/consume.dump" 2>"$TMP/consume.py.err"
then pass cli/loop_records; else fail cli/loop_records "$(cat "$TMP/consume.py.err" "$TMP/consume.err")"; fi

# Nested loops in the kernel, left by break and by a return from the inner
# one (the iterators of both let go first, where the kernel has them:
# bpf/ut.h, UT_ITER_LOOPS).  Three getpid calls: two whole (36 pairs
# each), the third returns at (5, 2) after 18.  A loop whose bounds are
# beyond the iterator's ints runs plainly: 0 + 1 + 2 a call.
cat >"$TMP/nested.ut" <<'UT'
tracepoint:syscalls:sys_enter_getpid {
	for ($i : 0x100000000..0x100000003) {
		@big += $i - 0x100000000;
	}
}
tracepoint:syscalls:sys_enter_getpid {
	for ($i : 0..8) {
		for ($j : 0..8) {
			if ($j > $i) {
				break;
			}
			@pairs += 1;
			if (@stop && $i == 5 && $j == 2) {
				return;
			}
		}
	}
	@whole += 1;
	if (@whole == 2) {
		@stop = 1;
	}
}
UT
printf 'import os\nfor i in range(3): os.getpid()\n' >"$TMP/nested.py"
"$UT" -v -q --all-in-kernel --json "$TMP/nested.json" -c "/usr/bin/python3 $TMP/nested.py" "$TMP/nested.ut" \
	>/dev/null 2>"$TMP/nested.err"
if python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["maps"]
got = {k: int(m[k][0]["value"]) for k in ("@pairs", "@whole", "@big")}
sys.exit(0 if got == {"@pairs": 90, "@whole": 2, "@big": 9} else "got %s" % got)' "$TMP/nested.json" 2>"$TMP/nested.py.err"
then pass cli/loop_nested_return; else fail cli/loop_nested_return "$(cat "$TMP/nested.py.err" "$TMP/nested.err")"; fi
# this kernel (6.18) has the numbers iterator: -v says the loops use it
grep -q "the verifier checks a loop's body once (bpf_iter_num)" "$TMP/nested.err" && pass cli/loop_iterator \
	|| fail cli/loop_iterator "$(cat "$TMP/nested.err")"

# Cache: the second run of the same script does not compile (its object,
# or the whole program once the script has settled: test_program_cache.sh).
"$UT" -v -q --summary-only -d 0.2 "$TMP/alt.ut" >/dev/null 2>"$TMP/cache.err"
grep -q "BPF object from cache\|compiled program from the cache" "$TMP/cache.err" && pass cli/second_run_cached \
	|| fail cli/second_run_cached "$(cat "$TMP/cache.err")"
# ... unless a header every program includes has changed (a copy of bpf/
# with one line more in records.h)
mkdir -p "$TMP/root/bpf" && cp bpf/ut.h bpf/records.h "$TMP/root/bpf/" && echo '/* changed */' >>"$TMP/root/bpf/records.h"
UT_BPF_ROOT="$TMP/root" "$UT" -v -q --summary-only -d 0.2 "$TMP/alt.ut" >/dev/null 2>"$TMP/cache2.err"
grep -q "BPF object compiled" "$TMP/cache2.err" && pass cli/changed_header_recompiles ||
	fail cli/changed_header_recompiles "$(cat "$TMP/cache2.err")"

# --summary-only: a private map that only a trace construct read (a
# slice's value) has its writes compiled out with it; one read elsewhere
# keeps them.
cat >"$TMP/dead.ut" <<'UT'
private @calls, @kept;
tracepoint:syscalls:sys_enter_getppid { @calls[tid] += 1; @kept[tid] += 1; slice begin "getppid"; }
tracepoint:syscalls:sys_exit_getppid {
	slice end with calls = @calls[tid];
	delete(@calls[tid]);
	if (@kept[tid] > 2) {
		@late = count();
	}
}
UT
if "$UT" --summary-only --dump placement "$TMP/dead.ut" 2>&1 | head -1 |
	grep -q ', 2 writes of maps nothing reads then,'; then pass cli/dead_map_writes_out
else fail cli/dead_map_writes_out "$("$UT" --summary-only --dump placement "$TMP/dead.ut" 2>&1 | head -3)"; fi
"$UT" -q --summary-only --json "$TMP/dead.json" -c "/usr/bin/python3 $TMP/getppid.py 5" "$TMP/dead.ut" \
	>/dev/null 2>"$TMP/dead.err"
grep -q '"@late":\[{"key":\[\],"value":3}\]' "$TMP/dead.json" && pass cli/dead_map_kept_reads \
	|| fail cli/dead_map_kept_reads "$(cat "$TMP/dead.json" "$TMP/dead.err" | head -10)"

# No alternative exists: an error naming the probe, nothing traced.
echo 'tracepoint:nosuch:event | tracepoint:nosuch:other { @x = count(); }' >"$TMP/none.ut"
"$UT" --emit-c "$TMP/none.ut" >/dev/null 2>"$TMP/none.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "none.ut:1:1: error: none of the 2 alternatives of this probe exists on kernel" "$TMP/none.err"; then
	pass cli/no_alternative_error
else fail cli/no_alternative_error "rc=$rc $(cat "$TMP/none.err")"; fi

# Ahead of time: compile, then run without the clang wrapper.
"$UT" -q --compile -o "$TMP/alt.uto" "$TMP/alt.ut" && pass cli/compile_uto || fail cli/compile_uto ""
UT_BPFCC_LIB=/nonexistent "$UT" -q --json "$TMP/uto.json" --summary-only \
	-c "/usr/bin/python3 $TMP/getppid.py 5" "$TMP/alt.uto" >/dev/null 2>"$TMP/uto.err"
grep -q '"value":5' "$TMP/uto.json" && pass cli/uto_runs_without_clang || fail cli/uto_runs_without_clang "$(cat "$TMP/uto.err")"
# the reader's compiled user side travels in the .uto; a damaged one is
# not run (the reader interprets, and finds the same)
echo 'tracepoint:syscalls:sys_enter_getppid { @calls[comm] = count(); printf("call %d\n", pid > 0); }' >"$TMP/reader.ut"
"$UT" -q --compile -o "$TMP/reader.uto" "$TMP/reader.ut"
UT_BPFCC_LIB=/nonexistent "$UT" -v --json "$TMP/uto.json" --summary-only \
	-c "/usr/bin/python3 $TMP/getppid.py 5" "$TMP/reader.uto" >/dev/null 2>"$TMP/uto.err"
grep -q '"value":5' "$TMP/uto.json" && grep -q "user side of 1 probe as compiled code" "$TMP/uto.err" &&
	pass cli/uto_runs_compiled_user_side || fail cli/uto_runs_compiled_user_side "$(grep 'user side' "$TMP/uto.err")"
python3 - "$TMP/reader.uto" "$TMP/bad_code.uto" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[data.index(b"\x7fELF") + 200] ^= 0xff   # the first object is the reader's
open(sys.argv[2], "wb").write(data)
PY
"$UT" -v --json "$TMP/uto.json" --summary-only -c "/usr/bin/python3 $TMP/getppid.py 5" "$TMP/bad_code.uto" \
	>/dev/null 2>"$TMP/uto.err"
grep -q '"value":5' "$TMP/uto.json" && grep -q "interprets the script's user side (no compiled code" "$TMP/uto.err" &&
	pass cli/uto_damaged_code_not_run || fail cli/uto_damaged_code_not_run "$(grep 'user side' "$TMP/uto.err")"
head -c 2000 "$TMP/alt.uto" >"$TMP/cut.uto"
"$UT" "$TMP/cut.uto" >/dev/null 2>"$TMP/cut.err"
rc=$?
[ $rc -eq 1 ] && grep -q "damaged" "$TMP/cut.err" && pass cli/damaged_uto_rejected \
	|| fail cli/damaged_uto_rejected "rc=$rc $(cat "$TMP/cut.err")"

# clang runs in a child process: its diagnostics come back, and a crash in
# it is an error message, not the end of the tracer (a stand-in wrapper
# that fails, then one that crashes; under ASan the crash is an abort).
cat >"$TMP/fakecc.c" <<'C'
#include <signal.h>
#include <stdlib.h>
#include <string.h>
int ut_bpfcc_compile(const void *o, void **obj, unsigned long *len, char **diag)
{
	(void)o; (void)obj; (void)len;
	if (getenv("FAKECC_CRASH"))
		raise(SIGSEGV);
	*diag = strdup("fake.c:1:1: error: stand-in compiler refuses");
	return -1;
}
int ut_bpfcc_make_pch(const char *h, const char *const *i, const char *p, char **diag)
{
	(void)h; (void)i; (void)p; *diag = NULL;
	return -1;
}
const char *ut_bpfcc_version(void) { return "stand-in 1"; }
C
if cc -shared -fPIC -o "$TMP/fakecc.so" "$TMP/fakecc.c" 2>"$TMP/fakecc.err"; then
	UT_BPFCC_LIB="$TMP/fakecc.so" UT_CACHE_DIR="$TMP/fakecache" "$UT" -q -e 'BEGIN { exit(); }' \
		>/dev/null 2>"$TMP/ccfail.err"
	rc=$?
	[ $rc -eq 1 ] && grep -q "stand-in compiler refuses" "$TMP/ccfail.err" && pass cli/compile_errors_come_back \
		|| fail cli/compile_errors_come_back "rc=$rc $(cat "$TMP/ccfail.err")"
	FAKECC_CRASH=1 UT_BPFCC_LIB="$TMP/fakecc.so" UT_CACHE_DIR="$TMP/fakecache" "$UT" -q -e 'BEGIN { exit(); }' \
		>/dev/null 2>"$TMP/cccrash.err"
	rc=$?
	[ $rc -eq 1 ] && grep -q "(clang, in a child process) was killed by signal" "$TMP/cccrash.err" && pass cli/compiler_crash_reported \
		|| fail cli/compiler_crash_reported "rc=$rc $(cat "$TMP/cccrash.err")"
else
	fail cli/compile_errors_come_back "cannot build the stand-in wrapper: $(cat "$TMP/fakecc.err")"
fi

# A cache that cannot store the object: the run goes on, and says why the
# next one will compile again.
mkdir -p "$TMP/badcache" && : >"$TMP/badcache/obj"   # a file where the object folder goes
UT_CACHE_DIR="$TMP/badcache" "$UT" -e 'BEGIN { exit(); }' >/dev/null 2>"$TMP/badcache.err"
rc=$?
[ $rc -eq 0 ] && grep -q "warning: the compiled BPF object is not cached.*cannot store" "$TMP/badcache.err" \
	&& pass cli/uncached_object_warned || fail cli/uncached_object_warned "rc=$rc $(cat "$TMP/badcache.err")"

# An output file that cannot be written is reported before attaching.
"$UT" -q -o /nonexistent/dir/t.fxt "$TMP/alt.ut" 2>"$TMP/out.err"
rc=$?
[ $rc -eq 1 ] && grep -q "cannot write the trace" "$TMP/out.err" && pass cli/unwritable_output \
	|| fail cli/unwritable_output "rc=$rc $(cat "$TMP/out.err")"

# --json -: standard output is the JSON alone (printf output, the maps'
# text and the command's output go to standard error)
"$UT" -q --json - -c "echo from-the-command" -e 'BEGIN { printf("from printf\n"); @x = 1; }
	tracepoint:syscalls:sys_enter_getppid { @calls = count(); }' >"$TMP/json.out" 2>"$TMP/json.err"
if python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/json.out" 2>/dev/null &&
   grep -q "from printf" "$TMP/json.err" && grep -q "from-the-command" "$TMP/json.err"; then pass cli/json_stdout_clean
else fail cli/json_stdout_clean "stdout: $(cat "$TMP/json.out") stderr: $(cat "$TMP/json.err")"; fi
# printf lines reach a pipe as they are printed (they waited for 4 KB or
# the end of the trace): the first tick arrives while it runs
("$UT" -q --summary-only -d 60 -e 'interval:ms:100 { printf("tick\n"); }' & echo $! >"$TMP/tick.pid"; wait) |
	{ read -r -t 30 line; echo "$line" >"$TMP/tick.line"; kill -INT "$(cat "$TMP/tick.pid")"; cat >/dev/null; }
[ "$(cat "$TMP/tick.line")" = tick ] && pass cli/printf_line_flushed || fail cli/printf_line_flushed "no line in 30 s"

# A write error (a full device) cuts the trace: said with how many events
# the file holds, exit status 1, not "trace written".
"$UT" -o /dev/full -e 'BEGIN { instant "x"; exit(); }' >/dev/null 2>"$TMP/full.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "the trace is cut after its first 0 events" "$TMP/full.err" &&
   ! grep -q "trace written" "$TMP/full.err"; then pass cli/write_error_dev_full
else fail cli/write_error_dev_full "rc=$rc $(cat "$TMP/full.err")"; fi
# a full disk: the writer holds room on the file system ahead of what it
# writes, so the trace is cut where it still has room (exit status 1, said
# even with -q), valid, with the cut marked in it
mkdir -p "$TMP/small"
if mount -t tmpfs -o size=1M tmpfs "$TMP/small" 2>"$TMP/mount.err"; then
	printf 'import os\nfor i in range(100000): os.getppid()\n' >"$TMP/many.py"
	"$UT" -q -o "$TMP/small/t.fxt" -c "/usr/bin/python3 $TMP/many.py" \
		-e 'tracepoint:syscalls:sys_enter_getppid { instant "x" with a = pid, b = tid; }' >/dev/null 2>"$TMP/disk.err"
	rc=$?
	"$UT" stats --json "$TMP/small/t.fxt" >"$TMP/disk.stats" 2>&1
	src=$?
	"$UT" dump "$TMP/small/t.fxt" | grep -q 'name="trace cut: disk full"'
	marked=$?
	umount "$TMP/small"
	if [ $rc -eq 1 ] && grep -q 'the trace was cut (disk full)' "$TMP/disk.err" && [ $src -eq 0 ] && [ $marked -eq 0 ] &&
		grep -q '"errors": 0,' "$TMP/disk.stats"; then
		pass cli/write_error_full_disk
	else fail cli/write_error_full_disk "rc=$rc stats rc=$src marked=$marked $(cat "$TMP/disk.err") $(head -c 200 "$TMP/disk.stats")"; fi
else
	skip cli/write_error_full_disk "cannot mount a tmpfs: $(cat "$TMP/mount.err")"
fi

# Signals at random moments (during start-up, attach, under load) always
# leave a trace that reads without error.
cat >"$TMP/sig.ut" <<'UT'
tracepoint:syscalls:sys_enter_getpid { instant "getpid" with n = pid; flow call[tid] begin "enter"; }
tracepoint:syscalls:sys_exit_getpid { flow call[tid] end "exit"; }
UT
"$UT" -q --compile -o "$TMP/sig.uto" "$TMP/sig.ut" >/dev/null 2>&1
for i in $(seq 1 8); do
	sig=INT; [ $((i % 2)) -eq 0 ] && sig=TERM
	getpid_loop &
	load=$!
	# -d: a background job starts with SIGINT ignored; one that comes
	# before main() sets its handler is lost, and the tracer must still end
	"$UT" -q -d 30s -o "$TMP/sig$i.fxt" "$TMP/sig.uto" >/dev/null 2>"$TMP/sig$i.err" &
	tracer=$!
	sleep "0.$((RANDOM % 9))$((RANDOM % 10))"
	kill -$sig $tracer
	wait $tracer
	rc=$?
	kill $load 2>/dev/null; wait $load 2>/dev/null
	# killed by the signal's default action: it came before main() set its
	# handlers (a loaded machine, a sanitized build); then no trace exists
	if [ $rc -eq $((128 + $(kill -l $sig))) ] && [ ! -e "$TMP/sig$i.fxt" ]; then
		pass "cli/signal_${i}_before_start_up_no_trace"; continue
	fi
	if [ $rc -ne 0 ]; then fail "cli/signal_$i" "exit status $rc after SIG$sig: $(cat "$TMP/sig$i.err")"; continue; fi
	if "$UT" stats "$TMP/sig$i.fxt" >"$TMP/sig$i.stats" 2>&1; then pass "cli/signal_${i}_trace_valid"
	else fail "cli/signal_${i}_trace_valid" "$(tail -3 "$TMP/sig$i.stats")"; fi
done

# -l with no match says so (it exited 1 without a word), and why when the
# first word is no kind -l lists and no tracepoint category.
"$UT" -l 'nosuch:*' >"$TMP/l1.out" 2>"$TMP/l1.err"
rc=$?
[ $rc -eq 1 ] && [ ! -s "$TMP/l1.out" ] && grep -q "no probe matches 'nosuch:\*'" "$TMP/l1.err" &&
	grep -q "'nosuch' is neither a probe kind -l lists nor a tracepoint category" "$TMP/l1.err" &&
	pass cli/list_no_match || fail cli/list_no_match "rc=$rc $(cat "$TMP/l1.err")"
"$UT" -l 'tracepoint:syscals:sys_enter_open*' 2>&1 | grep -q "did you mean 'syscalls'" && pass cli/list_category_typo \
	|| fail cli/list_category_typo "$("$UT" -l 'tracepoint:syscals:sys_enter_open*' 2>&1)"
"$UT" -l 'uprobe:*' 2>&1 | grep -q "not uprobe" && pass cli/list_unlisted_kind \
	|| fail cli/list_unlisted_kind "$("$UT" -l 'uprobe:*' 2>&1)"

# A misspelt long option is an unknown option with the one meant, not "the
# script declares no constant"; where no script is compiled (-l, a .uto)
# too, where flags were ignored.
"$UT" --sumary-only -e 'BEGIN { exit(); }' >/dev/null 2>"$TMP/opt.err"
rc=$?
[ $rc -eq 1 ] && grep -q "unknown option '--sumary-only' (did you mean '--summary-only'?)" "$TMP/opt.err" &&
	pass cli/misspelt_option || fail cli/misspelt_option "rc=$rc $(cat "$TMP/opt.err")"
"$UT" --verbos -l 'io_uring:*' >/dev/null 2>"$TMP/opt_l.err"
rc=$?
[ $rc -eq 2 ] && grep -q "unknown option '--verbos' (did you mean '--verbose'?)" "$TMP/opt_l.err" &&
	pass cli/misspelt_option_list || fail cli/misspelt_option_list "rc=$rc $(cat "$TMP/opt_l.err")"
"$UT" --quiett "$TMP/alt.uto" >/dev/null 2>"$TMP/opt_uto.err"
rc=$?
[ $rc -eq 2 ] && grep -q "unknown option '--quiett' (did you mean '--quiet'?)" "$TMP/opt_uto.err" &&
	pass cli/misspelt_option_uto || fail cli/misspelt_option_uto "rc=$rc $(cat "$TMP/opt_uto.err")"

# An option of ours after the script is a mistake, not a positional
# parameter ("-c" as $1 traced the whole machine until Ctrl-C); after --
# it is one.
echo 'BEGIN { printf("%s %d\n", str($1), $#); exit(); }' >"$TMP/positional.ut"
"$UT" "$TMP/positional.ut" -c true >/dev/null 2>"$TMP/after.err"
rc=$?
[ $rc -eq 2 ] && grep -q "options go before the script.*: -c$" "$TMP/after.err" &&
	pass cli/option_after_script || fail cli/option_after_script "rc=$rc $(cat "$TMP/after.err")"
out=$("$UT" -q --summary-only "$TMP/positional.ut" -- -c x 2>"$TMP/verbatim.err")
[ "$out" = "-c 2" ] && pass cli/positional_after_dashes || fail cli/positional_after_dashes "'$out' $(cat "$TMP/verbatim.err")"

# --info: kernel, BTF, probe kinds by trial, and a verdict.
"$UT" --info >"$TMP/info.txt" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "^kernel: *$(uname -r)" "$TMP/info.txt" && grep -q "^  tracepoint  works" "$TMP/info.txt" \
	&& grep -q "^verdict: *tracing works here" "$TMP/info.txt"; then pass cli/info
else fail cli/info "rc=$rc $(cat "$TMP/info.txt")"; fi
