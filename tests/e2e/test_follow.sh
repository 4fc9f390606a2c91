#!/usr/bin/env bash
# Which processes a trace covers: -c the command and every process it
# starts, at any depth (a fork is followed in BPF); -p the process alone;
# a thread's name follows exec; -c's exit status and its errors.
source "$(dirname "$0")/../lib.sh"
need_root_bpf follow || exit 0
export UT_CACHE_DIR="$TMP/cache"
W=$UT_WORKLOADS
# 8 nops on one ring, nothing else: @requests[NOP, inline] counts them
NOPS="--rings 1 --nops 8 --polls 0 --async 0 --links 0 --invalid 0 --faillinks 0 --multishot 0"

# release FIFO: one line to its reader; gives up after 60 s (a tracer that
# failed runs no command to read it)
release() { timeout 60 sh -c "echo go >'$1'"; }

# nop_requests SUMMARY.json: the NOP requests the default script counted
nop_requests() {
	python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["maps"]["@requests"]
print(sum(e["value"] for e in m if e["key"][0] == "NOP"))' "$1" 2>/dev/null || echo none
}

# -c: a grandchild (sh runs sh, which forks the workload) is traced, and
# its process named; a workload the command did not start, run while the
# command waits (on its fifo, read once the probes are attached), is not.
mkfifo "$TMP/grand.fifo" "$TMP/other.fifo"
sh -c "read x <$TMP/other.fifo; $W/uring_paths --dir $TMP $NOPS >$TMP/other.json" &
other=$!
"$UT" -q --json "$TMP/grand.json" -o "$TMP/grand.fxt" -c "sh -c 'read x <$TMP/grand.fifo; \
sh -c \"$W/uring_paths --dir $TMP $NOPS >$TMP/grand-w.json; true\"; read x <$TMP/grand.fifo'" \
	>/dev/null 2>"$TMP/grand.err" &
tracer=$!
release "$TMP/grand.fifo"
release "$TMP/other.fifo"
wait "$other"
release "$TMP/grand.fifo"
wait "$tracer"
rc=$?
"$UT" stats --json "$TMP/grand.fxt" >"$TMP/grand.stats" 2>&1
"$UT" dump "$TMP/grand.fxt" >"$TMP/grand.dump" 2>&1
# (the other process may be named in the trace: a scheduling record of the
# grandchild's switch from it names the task it ran on; none of its events
# is there)
if [ $rc -eq 0 ] && [ "$(nop_requests "$TMP/grand.json")" = 8 ] && python3 -c 'import json, re, sys
s = json.load(open(sys.argv[1]))
grandchild, other = (json.load(open(f))["pid"] for f in sys.argv[3:])
named = {p["pid"] for p in s["processes"] if p["name"] == "uring_paths"}
traced = {int(p) for p in re.findall(r"^0x[0-9a-f]+ event \S+ ts=\d+ pid=(\d+)", open(sys.argv[2]).read(), re.M)}
sys.exit(0 if grandchild in named and grandchild in traced and other not in traced and s["flows"]["incomplete"] == 0 else
         f"events of {traced & {grandchild, other}}: the grandchild {grandchild}, another {other}")' \
	"$TMP/grand.stats" "$TMP/grand.dump" "$TMP/grand-w.json" "$TMP/other.json"; then
	pass follow/c_traces_grandchild_only
else
	fail follow/c_traces_grandchild_only "rc=$rc, $(nop_requests "$TMP/grand.json") NOP requests of 8: $(head -c 300 "$TMP/grand.err")"
fi

# -c fio: fio runs each job in a process of its own (no --thread); the
# job's reads are traced, every one.
if command -v fio >/dev/null; then
	"$UT" -q --summary-only --json "$TMP/fio.json" -c "fio --name=job --ioengine=io_uring --rw=randread --bs=4k \
--size=1M --filename=$TMP/fio.data --output-format=json --output=$TMP/fio.out" >/dev/null 2>"$TMP/fio.err"
	rc=$?
	if [ $rc -eq 0 ] && python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["maps"]["@requests"]
reads = sum(e["value"] for e in m if e["key"][0] == "READ")
ios = json.load(open(sys.argv[2]))["jobs"][0]["read"]["total_ios"]
sys.exit(0 if reads == ios == 256 else "%d reads traced, fio did %d" % (reads, ios))' "$TMP/fio.json" "$TMP/fio.out"; then
		pass follow/c_traces_fio_jobs
	else
		fail follow/c_traces_fio_jobs "rc=$rc $(head -c 300 "$TMP/fio.err")"
	fi
else
	skip follow/c_traces_fio_jobs "fio is not installed (.ci/install-deps.sh installs it)"
fi

# A thread named before exec is named again after it: -c's child was seen
# as uring-trace (a copy of it until exec), then runs true.
cat >"$TMP/exec.ut" <<'UT'
tracepoint:syscalls:sys_enter_execve { instant "execve"; }
tracepoint:syscalls:sys_exit_execve { instant "execve returned"; }
UT
# thread_named_after_exec TRACE NAME: the thread that called execve is
# called NAME in the trace, and no thread but uring-trace's own is called uring-trace
thread_named_after_exec() {
	"$UT" dump "$1" >"$1.dump" && "$UT" stats --json "$1" >"$1.stats" && python3 -c 'import json, re, sys
dump = open(sys.argv[1] + ".dump").read()
tid = int(re.search(r"event instant ts=\d+ pid=\d+ tid=(\d+) cat=\S+ name=\"execve\"", dump).group(1))
start = int(re.search(r"tid=(\d+) cat=\"uring-trace\" name=\"trace start\"", dump).group(1))
names = {t["tid"]: t["name"] for t in json.load(open(sys.argv[1] + ".stats"))["threads"]}
others = [t for t, n in names.items() if n == "uring-trace" and t != start]
sys.exit(0 if names.get(tid) == sys.argv[2] and not others else "thread %d is %r; %s" % (tid, names.get(tid), names))' "$1" "$2"
}
"$UT" -q -o "$TMP/exec.fxt" -c "/bin/true" "$TMP/exec.ut" >/dev/null 2>"$TMP/exec.err"
if err=$(thread_named_after_exec "$TMP/exec.fxt" true 2>&1); then pass follow/c_child_named_after_exec
else fail follow/c_child_named_after_exec "$err $(head -c 300 "$TMP/exec.err")"; fi

# The same under -p: a shell seen before it execs sleep is named sleep.
mkfifo "$TMP/exec.fifo"
sh -c "read x <$TMP/exec.fifo; exec /bin/sleep 0.1" &
shell=$!
"$UT" -p "$shell" -o "$TMP/exec-p.fxt" "$TMP/exec.ut" >/dev/null 2>"$TMP/exec-p.err" &
tracer=$!
if wait_for "$TMP/exec-p.err" '^uring-trace: tracing'; then
	release "$TMP/exec.fifo"
	wait "$shell"
	kill -INT "$tracer"
	wait "$tracer"
	if err=$(thread_named_after_exec "$TMP/exec-p.fxt" sleep 2>&1); then pass follow/p_process_named_after_exec
	else fail follow/p_process_named_after_exec "$err"; fi
else
	fail follow/p_process_named_after_exec "uring-trace did not start: $(head -c 300 "$TMP/exec-p.err")"
	kill "$shell" "$tracer" 2>/dev/null
fi

# -p is the process alone: not a process it forks, nor one it did not
# start.  The shell forks one workload run, then becomes the other (exec);
# a third runs beside them, unrelated.
mkfifo "$TMP/p.fifo"
sh -c "read x <$TMP/p.fifo; $W/uring_paths --dir $TMP $NOPS >$TMP/p-forked.json; \
exec $W/uring_paths --dir $TMP $NOPS >$TMP/p-self.json" &
shell=$!
"$UT" -p "$shell" --json "$TMP/p.json" -o "$TMP/p.fxt" >/dev/null 2>"$TMP/p.err" &
tracer=$!
if wait_for "$TMP/p.err" '^uring-trace: tracing'; then
	"$W/uring_paths" --dir "$TMP" $NOPS >"$TMP/p-other.json" &
	other=$!
	release "$TMP/p.fifo"
	wait "$shell" "$other"
	kill -INT "$tracer"
	wait "$tracer"
	"$UT" stats --json "$TMP/p.fxt" >"$TMP/p.stats" 2>&1
	if [ "$(nop_requests "$TMP/p.json")" = 8 ] && python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
itself, forked, other = (json.load(open(f))["pid"] for f in sys.argv[2:])
traced = {p["pid"] for p in s["processes"] if p["name"] == "uring_paths"}
sys.exit(0 if traced == {itself} else f"traced {traced}: the process {itself}, its child {forked}, another {other}")' \
		"$TMP/p.stats" "$TMP/p-self.json" "$TMP/p-forked.json" "$TMP/p-other.json"; then
		pass follow/p_leaves_out_other_processes
	else
		fail follow/p_leaves_out_other_processes "$(nop_requests "$TMP/p.json") NOP requests of 8: $(head -c 300 "$TMP/p.err")"
	fi
else
	fail follow/p_leaves_out_other_processes "uring-trace did not start: $(head -c 300 "$TMP/p.err")"
	kill "$shell" "$tracer" 2>/dev/null
fi

# A command that cannot run: the reason, and the shells' status (127: no
# such command, 126: not runnable); nothing else is said.
"$UT" -o "$TMP/none.fxt" -c "nosuch-command-$$ --flag" >/dev/null 2>"$TMP/none.err"
rc=$?
if [ $rc -eq 127 ] && [ "$(cat "$TMP/none.err")" = "uring-trace: cannot run 'nosuch-command-$$': No such file or directory" ]; then
	pass follow/missing_command
else
	fail follow/missing_command "rc=$rc $(cat "$TMP/none.err")"
fi
"$UT" -q -o "$TMP/none.fxt" -c "$TMP" >/dev/null 2>"$TMP/dir.err"
rc=$?
[ $rc -eq 126 ] && grep -q "cannot run '$TMP': Permission denied" "$TMP/dir.err" && pass follow/command_not_runnable \
	|| fail follow/command_not_runnable "rc=$rc $(cat "$TMP/dir.err")"

# A list of commands runs whole (`exec cd ...` failed: "exec: cd: not
# found"), its processes traced, its status the last command's.
"$UT" -q --summary-only -e 'tracepoint:syscalls:sys_enter_getppid { @calls = count(); }' \
	-c "cd $TMP && pwd && python3 -c 'import os; os.getppid(); os.getppid()'; exit 4" >"$TMP/list.out" 2>&1
rc=$?
calls=$(sed -n 's/^@calls: //p' "$TMP/list.out")
[ $rc -eq 4 ] && grep -qx "$TMP" "$TMP/list.out" && [ "${calls:-0}" -ge 2 ] && pass follow/command_list \
	|| fail follow/command_list "rc=$rc $(cat "$TMP/list.out")"

# A command that fails: its status is uring-trace's (the trace is written).
"$UT" -o "$TMP/fails.fxt" -c "sh -c 'exit 3'" >/dev/null 2>"$TMP/fails.err"
rc=$?
if [ $rc -eq 3 ] && grep -q "^uring-trace: 'sh -c 'exit 3'' exited with status 3$" "$TMP/fails.err" && "$UT" stats "$TMP/fails.fxt" >/dev/null; then
	pass follow/command_status
else
	fail follow/command_status "rc=$rc $(cat "$TMP/fails.err")"
fi

# ... unless uring-trace ended the trace first (here exit() at once): it
# stops the command and exits 0.
"$UT" -q -o "$TMP/ended.fxt" -e 'BEGIN { exit(); }' -c "sleep 60" >/dev/null 2>"$TMP/ended.err"
rc=$?
[ $rc -eq 0 ] && pass follow/tracer_ended_first || fail follow/tracer_ended_first "rc=$rc $(cat "$TMP/ended.err")"
"$UT" -q -o "$TMP/blank.fxt" -c " " >/dev/null 2>"$TMP/blank.err"
rc=$?
[ $rc -eq 2 ] && grep -q "^uring-trace: -c takes a command to run$" "$TMP/blank.err" && pass follow/blank_command \
	|| fail follow/blank_command "rc=$rc $(cat "$TMP/blank.err")"

# A script compiled by a uring-trace without the built-in programs (a copy
# of bpf/ without them): a note says what is missing, and the command's
# own process is still traced, its child not.
mkdir -p "$TMP/old/bpf" && cp "$UT_ROOT/bpf/records.h" "$TMP/old/bpf/" &&
	sed '/^SEC(".*sched_process_/,/^}/d' "$UT_ROOT/bpf/ut.h" >"$TMP/old/bpf/ut.h"
UT_BPF_ROOT="$TMP/old" "$UT" --json "$TMP/old.json" -o "$TMP/old.fxt" \
	-c "sh -c '$W/uring_paths --dir $TMP $NOPS >/dev/null; true'" >/dev/null 2>"$TMP/old.err"
rc=$?
if [ $rc -eq 0 ] && [ "$(nop_requests "$TMP/old.json")" = 0 ] &&
	grep -q "^uring-trace: note: the built-in sched_process_fork program (-c traces the processes the command starts) is not attached: tried raw_tp:sched_process_fork (not in this compiled script: compile it again)" "$TMP/old.err"; then
	pass follow/without_builtins_noted
else
	fail follow/without_builtins_noted "rc=$rc, $(nop_requests "$TMP/old.json") NOP requests: $(head -c 600 "$TMP/old.err")"
fi

# filtered: 1 under -p, -c and --comm, 0 without them; set when the
# program is loaded, so the program compiled for one run serves the others
# (the program cache keeps it: not another compile)
printf 'BEGIN { printf("filtered %%d\\n", filtered); exit(); }\n' >"$TMP/filtered.ut"
sleep 1.1   # a script changed in the second before its compile is not kept
sleep 30 & sleeper=$!
"$UT" -q --summary-only "$TMP/filtered.ut" >"$TMP/f0.out" 2>&1
"$UT" -v --summary-only -p $sleeper "$TMP/filtered.ut" >"$TMP/fp.out" 2>"$TMP/fp.err"
"$UT" -q --summary-only --comm nosuch "$TMP/filtered.ut" >"$TMP/fcomm.out" 2>&1
"$UT" -q --summary-only -c true "$TMP/filtered.ut" >"$TMP/fc.out" 2>&1
kill $sleeper 2>/dev/null
wait $sleeper 2>/dev/null
if grep -qx 'filtered 0' "$TMP/f0.out" && grep -qx 'filtered 1' "$TMP/fp.out" && grep -qx 'filtered 1' "$TMP/fcomm.out" &&
	grep -qx 'filtered 1' "$TMP/fc.out" && grep -q 'the compiled program from the cache' "$TMP/fp.err"; then
	pass follow/filtered
else
	fail follow/filtered "$(cat "$TMP/f0.out" "$TMP/fp.out" "$TMP/fcomm.out" "$TMP/fc.out"; grep -i 'cache' "$TMP/fp.err")"
fi
