#!/usr/bin/env bash
# Which processes a trace covers and how they are named: a thread's name
# follows exec.
source "$(dirname "$0")/../lib.sh"
need_root_bpf follow || exit 0
export UT_CACHE_DIR="$TMP/cache"

# release FIFO: one line to its reader; gives up after 60 s (a tracer that
# failed runs no command to read it)
release() { timeout 60 sh -c "echo go >'$1'"; }

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
