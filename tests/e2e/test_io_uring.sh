#!/usr/bin/env bash
# The default script traces the uring_paths workload: every request is a
# complete flow, each path is counted as the workload did it, workers and
# rings are named, counters and syscall slices are present.
source "$(dirname "$0")/../lib.sh"
need_root_bpf io_uring || exit 0

"$UT" -v -q --json "$TMP/summary.json" -o "$TMP/trace.fxt" \
	-c "$UT_WORKLOADS/uring_paths --dir $TMP > $TMP/workload.json" >"$TMP/out.txt" 2>"$TMP/err.txt"
rc=$?
if [ $rc -ne 0 ]; then
	fail io_uring/runs "exit status $rc: $(head -5 "$TMP/err.txt")"
	exit 0
fi
pass io_uring/runs
# On this kernel every io_uring tracepoint has its BTF form, and each probe
# (18: io_uring_submit has two, one counting the requests of rings not
# followed) must load as tp_btf (a rejected alternative falls back silently but for a
# warning: a script or compiler bug, and a slower probe)
# The reader keeps the per-request and per-ring state: kept in the kernel,
# every request would cost hundreds of ns more of BPF (a script change that
# reads the request under a condition the reader decides moves them there).
reader_keeps=$(grep 'placement: the reader keeps' "$TMP/err.txt")
missing=
for m in @req @ring_counts @cq_seen @cqe_posted @req_of_cqe @op_of_cqe; do
	echo "$reader_keeps" | grep -q "[ ,]$m\(,\|\$\)" || missing="$missing $m"
done
[ -z "$missing" ] && pass io_uring/reader_keeps_request_state \
	|| fail io_uring/reader_keeps_request_state "in the kernel:$missing ($(grep 'placement: the kernel keeps' "$TMP/err.txt"))"
attached=$(grep -c 'attached tp_btf:io_uring_' "$TMP/err.txt")
if [ "$attached" -eq 19 ] && ! grep -q 'warning' "$TMP/err.txt"; then
	pass io_uring/all_probes_tp_btf
else
	fail io_uring/all_probes_tp_btf "$attached of 19 io_uring probes attached as tp_btf: $(grep -v 'attached tp_btf' "$TMP/err.txt" | head -5)"
fi
"$UT" stats --json "$TMP/trace.fxt" >"$TMP/stats.json" || fail io_uring/stats "uring-trace stats failed"
"$UT" dump "$TMP/trace.fxt" >"$TMP/dump.txt" || fail io_uring/dump "uring-trace dump failed"

python3 - "$TMP" <<'PY'
import json, sys, re
d = sys.argv[1]
w = json.load(open(f"{d}/workload.json"))
s = json.load(open(f"{d}/stats.json"))
m = json.load(open(f"{d}/summary.json"))
pid = w["pid"]
def check(name, cond, why=""):
    print(("PASS " if cond else "FAIL ") + "io_uring/" + name + ("" if cond else ": " + why))

check("workload_ok", w["ok"], "the workload saw unexpected results")
rings = w["rings"]
def total(path):
    return sum(r["paths"][path]["submitted"] for r in rings)
requests = sum(total(p) for p in rings[0]["paths"])
check("no_errors_in_trace", s["errors"] == 0, str(s["error_messages"]))
check("no_lost_events", m["lost"] == 0, f'{m["lost"]} lost')
# one flow per request, plus one chain arrow per link (2 per 3-nop chain, 1
# per failed chain), plus one per CQE from its posting to its reaping (the
# workload enters each ring once more at the end, after reaping everything)
links = 2 * total("link") // 3 + total("faillink") // 2
cqes = sum(p["completions"] for r in rings for p in r["paths"].values())
check("every_request_is_a_complete_flow", s["flows"]["complete"] == requests + links + cqes and s["flows"]["incomplete"] == 0,
      f'flows {s["flows"]}, requests {requests}, links {links}, CQEs {cqes}')
check("every_flow_point_bound_to_a_slice", s["flows"]["points_outside_slices"] == 0, str(s["flows"]))

req = {tuple(e["key"]): e["value"] for e in m["maps"]["@requests"]}
def count(op, path):
    return req.get((op, path), 0)
check("inline_nops", count("NOP", "inline") == total("nop") + total("link") + total("faillink") // 2,
      f'{count("NOP", "inline")}')
check("poll_reads", count("READ", "poll") == total("poll"), f'{count("READ", "poll")} vs {total("poll")}')
check("async_writes", count("WRITE", "async (io-wq)") == total("async"), f'{count("WRITE", "async (io-wq)")}')
check("failed_at_submit", sum(v for k, v in req.items() if k[1] == "failed at submit") == total("invalid"), str(req))
errors = {tuple(e["key"]): e["value"] for e in m["maps"]["@errors"]}
check("cancelled_links", errors.get(("NOP", "-ECANCELED"), 0) == total("faillink") // 2, str(errors))
check("bad_fd_heads", errors.get(("READ", "-EBADF"), 0) == total("faillink") // 2, str(errors))

procs = {p["pid"]: p["name"] for p in s["processes"]}
ring_groups = [n for n in procs.values() if re.match(rf"ring 0x[0-9a-f]+ fd \d+ of uring_paths\[{pid}\]", n)]
check("two_named_ring_groups", len(ring_groups) == len(rings), str(list(procs.values())))
check("process_named", procs.get(pid) == "uring_paths", str(procs.get(pid)))
workers = [t for t in s["threads"] if t["pid"] == pid and t["name"] == f"iou-wrk-{pid}"]
check("worker_thread_named", len(workers) >= 1, str([t for t in s["threads"] if t["pid"] == pid]))
names = {(e["type"], e["name"]): e["count"] for e in s["names"]}
check("ring_counter", names.get(("counter", "ring"), 0) > 0, "no ring counter")
dump = open(f"{d}/dump.txt").read()
for series in ("in_flight", "sq_pending", "cq_ready"):
    check("counter_series_" + series, re.search(r'name="ring" args=\{[^}]*' + series + ": ", dump) is not None,
          "no " + series + " value in any ring counter")
check("enter_slices", names.get(("duration_begin", "io_uring_enter"), 0) > 0, "no io_uring_enter slices")
check("async_points", names.get(("instant", "queue_async_work"), 0) == total("async"), "")
check("every_cqe_posted", names.get(("instant", "CQE"), 0) == cqes, f'{names.get(("instant", "CQE"))} vs {cqes}')
check("every_cqe_reaped", names.get(("instant", "reaped"), 0) == cqes, f'{names.get(("instant", "reaped"))} vs {cqes}')
waits = sum(e["count"] for e in m["maps"]["@reap_wait_us"])
check("reap_wait_histogram", waits == cqes, f'{waits} in @reap_wait_us vs {cqes} CQEs')
reaped_in = re.findall(r'name="reaped" args=\{wait_us: \w+ (\d+)', dump)
check("reaped_with_wait", len(reaped_in) == cqes, f'{len(reaped_in)} reaped points with wait_us')
check("link_points", names.get(("instant", "link"), 0) == 2 * total("link") // 3 + total("faillink") // 2, "")
PY

# --sample keeps whole flows: every kept request is still a complete flow.
"$UT" -q --sample 50 -o "$TMP/sampled.fxt" -c "$UT_WORKLOADS/uring_paths --dir $TMP" >/dev/null 2>"$TMP/sampled.err" \
	|| fail io_uring/sample_runs "$(head -3 "$TMP/sampled.err")"
"$UT" stats --json "$TMP/sampled.fxt" >"$TMP/sampled.json"
python3 - "$TMP" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/sampled.json"))
f = s["flows"]
full = json.load(open(sys.argv[1] + "/stats.json"))["flows"]["complete"]
ok = f["incomplete"] == 0 and 0 < f["complete"] < full
print(("PASS " if ok else "FAIL ") + "io_uring/sample_keeps_whole_flows" + ("" if ok else f": {f}"))
PY

# The least overhead (--syscalls=0 --file-get=0 --work-runs=0 --sched=0):
# the probes that run at every request or system call are not attached,
# and every request is still a complete flow, counted by path as with
# everything on (the first run's summary).
"$UT" -v -q --json "$TMP/lean.json" --syscalls=0 --file-get=0 --work-runs=0 --sched=0 -o "$TMP/lean.fxt" \
	-c "$UT_WORKLOADS/uring_paths --dir $TMP > $TMP/lean-workload.json" >/dev/null 2>"$TMP/lean.err" \
	|| fail io_uring/lean_runs "$(grep -v ': attached ' "$TMP/lean.err" | head -3)"
"$UT" stats --json "$TMP/lean.fxt" >"$TMP/lean-stats.json" || fail io_uring/lean_stats "stats failed"
"$UT" dump "$TMP/lean.fxt" >"$TMP/lean-dump.txt" || fail io_uring/lean_dump "dump failed"
python3 - "$TMP" <<'PY'
import json, re, sys
d = sys.argv[1]
err = open(f"{d}/lean.err").read()
attached = set(re.findall(r": attached \w+:(\w+)", err))
left_out = {"sys_enter", "sys_exit", "io_uring_file_get", "io_uring_local_work_run", "io_uring_task_work_run",
            "sched_switch", "sched_waking", "sched_process_exit"}
ok = "io_uring_submit_req" in attached and not attached & left_out
print(("PASS " if ok else "FAIL ") + "io_uring/lean_probes_left_out" + ("" if ok else f": attached {sorted(attached)}"))
w = json.load(open(f"{d}/lean-workload.json"))
s = json.load(open(f"{d}/lean-stats.json"))
rings = w["rings"]
def total(path):
    return sum(r["paths"][path]["submitted"] for r in rings)
requests = sum(total(p) for p in rings[0]["paths"])
links = 2 * total("link") // 3 + total("faillink") // 2
ok = w["ok"] and s["errors"] == 0 and s["flows"]["complete"] == requests + links and s["flows"]["incomplete"] == 0
print(("PASS " if ok else "FAIL ") + "io_uring/lean_complete_flows" +
      ("" if ok else f": flows {s['flows']}, errors {s['error_messages'][:3]}, requests {requests}, links {links}"))
def by_path(f):
    return {tuple(e["key"]): e["value"] for e in json.load(open(f))["maps"]["@requests"]}
lean, full = by_path(f"{d}/lean.json"), by_path(f"{d}/summary.json")
print(("PASS " if lean == full else "FAIL ") + "io_uring/lean_same_requests" + ("" if lean == full else f": {lean} vs {full}"))
dump = open(f"{d}/lean-dump.txt").read()
gone = [n for n in ("io_uring_enter", "file_get", "local_work_run", "task_work_run", "CQE", "reaped")
        if f'name="{n}"' in dump]
print(("PASS " if not gone else "FAIL ") + "io_uring/lean_content_left_out" + ("" if not gone else f": {gone} in the trace"))
PY

# A reader that falls behind: its queue of records stops at its bound (set
# low here, UT_READER_QUEUE) and is handed on at once, again and again; the
# trace stays valid and every request's flow whole (100000 nops on one CPU
# fit the ring buffer, so none is lost).
UT_READER_QUEUE=256 "$UT" -v -o "$TMP/behind.fxt" -e '
import "io_uring";
io_uring_submit { flow request[args.req] begin "submit"; }
io_uring_complete { flow request[args.req] end "complete"; }' \
	-c "$UT_WORKLOADS/nop_firehose --count 100000 --cpu 1 >/dev/null" >/dev/null 2>"$TMP/behind.err" \
	|| fail io_uring/reader_behind_runs "$(head -3 "$TMP/behind.err")"
behind=$(sed -n 's/.*the reader fell behind \([0-9]*\) times.*/\1/p' "$TMP/behind.err")
"$UT" stats --json "$TMP/behind.fxt" >"$TMP/behind.json" || fail io_uring/reader_behind "stats failed"
python3 - "$TMP/behind.json" "${behind:-0}" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
stops = int(sys.argv[2])
ok = stops > 10 and s["errors"] == 0 and s["flows"]["complete"] == 100000 and s["flows"]["incomplete"] == 0
print(("PASS " if ok else "FAIL ") + "io_uring/reader_behind" +
      ("" if ok else f": {stops} reads stopped, errors {s['error_messages'][:3]}, flows {s['flows']}"))
PY
# -v says where the reader's time went, in parts that add up to its
# whole, and the probes' time in the kernel when bpf_stats count it (or how
# to count it).
python3 - "$TMP/behind.err" <<'PY'
import re, sys
err = open(sys.argv[1]).read()
m = re.search(r"the reader used ([0-9.]+) s of CPU, ([0-9]+) ns a record; of its ([0-9.]+) s, ([0-9]+) % went to "
              r"waiting for records, ([0-9]+) % to reading the ring buffer, ([0-9]+) % to handing records on", err)
parts = sum(int(m.group(i)) for i in (4, 5, 6)) if m else 0
kernel = re.search(r"the probes ran [0-9]+ times in the kernel, [0-9]+ ns a run|kernel.bpf_stats_enabled=1 counts it", err)
ok = m and 98 <= parts <= 102 and float(m.group(1)) > 0 and int(m.group(2)) > 0 and kernel
print(("PASS " if ok else "FAIL ") + "io_uring/reader_time_reported" + ("" if ok else ": " + err[-600:]))
PY

# With bpf_stats on, -v gives each probe's runs and time, the costliest
# first, and the built-in programs': they add up to the whole.
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
sysctl -qw kernel.bpf_stats_enabled=1
"$UT" -v -o "$TMP/runs.fxt" -e '
import "io_uring";
io_uring_submit { flow request[args.req] begin "submit"; }
io_uring_complete { flow request[args.req] end "complete"; }' \
	-c "$UT_WORKLOADS/nop_firehose --count 2000 --cpu 1 >/dev/null" >/dev/null 2>"$TMP/runs.err"
sysctl -qw kernel.bpf_stats_enabled="$stats_was"
python3 - "$TMP/runs.err" <<'PY'
import re, sys
err = open(sys.argv[1]).read()
total = re.search(r"the probes ran ([0-9]+) times in the kernel", err)
probes = {m.group(1): int(m.group(2)) for m in re.finditer(r"uring-trace:   \S+:[0-9]+ tp_btf:(\w+): ([0-9]+) runs?, [0-9]+ ns a run", err)}
builtin = re.search(r"built-in programs \([^)]*\): ([0-9]+) runs?", err)
parts = sum(probes.values()) + (int(builtin.group(1)) if builtin else 0)
ok = total and probes.get("io_uring_submit_req", 0) >= 2000 and probes.get("io_uring_complete", 0) >= 2000 \
	and parts == int(total.group(1))
print(("PASS " if ok else "FAIL ") + "io_uring/probe_runs_reported" + ("" if ok else ": " + err[-900:]))
PY

# An SQPOLL ring: its thread spins between submissions, running task work
# that runs nothing; none of that reaches the trace (it was 99 % of a busy
# SQPOLL trace), while the requests it submits do.
"$UT" -q --buffer 128M -o "$TMP/sqpoll.fxt" -c "$UT_WORKLOADS/nop_firehose --sqpoll --count 50000 >/dev/null" \
	>/dev/null 2>"$TMP/sqpoll.err" || fail io_uring/sqpoll_runs "$(head -3 "$TMP/sqpoll.err")"
"$UT" dump "$TMP/sqpoll.fxt" >"$TMP/sqpoll.txt" || fail io_uring/sqpoll_dump "dump failed"
python3 - "$TMP/sqpoll.txt" <<'PY'
import re, sys
dump = open(sys.argv[1]).read()
submits_on_sqp = len(re.findall(r'event instant [^\n]*name="submit"', dump))
empty = len(re.findall(r'name="task_work_run" args=\{count: \w+ 0\}', dump))
ok = submits_on_sqp == 50000 and empty == 0
print(("PASS " if ok else "FAIL ") + "io_uring/sqpoll_no_empty_task_work" +
      ("" if ok else f": {submits_on_sqp} submits, {empty} task_work_run instants with count 0"))
PY

# Rings of one request each, closed right after their completion was
# reaped in user space (no system call tells the kernel), or never
# reaped: every CQE's flow ends at the close, as reaped or marked so (they
# stayed open for good, 70,000 of them in liburing's tests).
for mode in reaped unreaped; do
	flag=; [ $mode = unreaped ] && flag=--unreaped
	"$UT" -q -o "$TMP/short-$mode.fxt" -c "$UT_WORKLOADS/short_rings --rings 500 $flag >/dev/null" \
		>/dev/null 2>"$TMP/short-$mode.err" || fail "io_uring/short_rings_${mode}_runs" "$(head -3 "$TMP/short-$mode.err")"
	"$UT" dump "$TMP/short-$mode.fxt" >"$TMP/short-$mode.dump"
	"$UT" stats "$TMP/short-$mode.fxt" >"$TMP/short-$mode.stats"
	want=reaped; [ $mode = unreaped ] && want="ring closed"
	cqes=$(grep -c 'event instant .*name="CQE"' "$TMP/short-$mode.dump")
	ended=$(grep -c "event flow_end .*name=\"$want\"" "$TMP/short-$mode.dump")
	if [ "$cqes" -eq 500 ] && [ "$ended" -eq 500 ] && grep -q '^flows: 1000 complete, 0 incomplete' "$TMP/short-$mode.stats" &&
		grep -q '^errors: 0' "$TMP/short-$mode.stats"; then
		pass "io_uring/short_rings_${mode}_cqes_end_at_close"
	else
		fail "io_uring/short_rings_${mode}_cqes_end_at_close" "$cqes CQEs, $ended ended '$want'; $(grep -E '^flows|^errors' "$TMP/short-$mode.stats")"
	fi
done

# Processes that exit with their ring open (no close() is seen), one after
# another: a new ring often gets a gone ring's address, and its CQ counts
# must start again.  Each process submits two nops; the first CQE is seen
# reaped at the second's system call: 200 reaped in all (before, a new ring
# at a reused address went on from the gone ring's counts and missed
# them: 60-80 of 200).  The second CQEs' flows end when their ring's
# address is taken again ("ring gone") or stay open at the end.
"$UT" -q -o "$TMP/gone.fxt" -c "sh -c 'for i in \$(seq 200); do $UT_WORKLOADS/short_rings --rings 1 --requests 2 --exit-open >/dev/null; done'" \
	>/dev/null 2>"$TMP/gone.err" || fail io_uring/rings_gone_runs "$(head -3 "$TMP/gone.err")"
"$UT" dump "$TMP/gone.fxt" >"$TMP/gone.dump"
"$UT" stats "$TMP/gone.fxt" >"$TMP/gone.stats"
reaped=$(grep -c 'event flow_end .*name="reaped"' "$TMP/gone.dump")
gone=$(grep -c 'event flow_end .*name="ring gone"' "$TMP/gone.dump")
incomplete=$(sed -n 's/^flows: [0-9]* complete, \([0-9]*\) incomplete.*/\1/p' "$TMP/gone.stats")
if [ "$reaped" -eq 200 ] && [ $((gone + ${incomplete:-999})) -eq 200 ] && grep -q '^errors: 0' "$TMP/gone.stats"; then
	pass io_uring/rings_gone_counts_start_again
else
	fail io_uring/rings_gone_counts_start_again "$reaped reaped, $gone ended 'ring gone', ${incomplete:-?} incomplete; $(grep -E '^errors' "$TMP/gone.stats")"
fi

# What is kept of rings stays bounded however many come and go: the
# rings are remembered in the order they were created or closed, the last
# RINGS_REMEMBERED (4096; 16 here) of them, and one pushed out goes with
# the summary's entries of it when it is closed or its process is gone.
# Before, @ring_completions kept an entry for every ring ever (11,443 in a
# 30-minute soak; @ring, marks of closed rings, as many).  Processes are
# freed an RCU grace period after they exit: a few of those pushed out
# before may stay, not 200.
"$UT" -q -D RINGS_REMEMBERED=16 -c "$UT_WORKLOADS/short_rings --rings 500 >/dev/null" >"$TMP/remembered.out" 2>&1
closed_kept=$(grep -c '^@ring_completions' "$TMP/remembered.out")
"$UT" -q -D RINGS_REMEMBERED=16 -o "$TMP/remembered-gone.fxt" \
	-c "sh -c 'for i in \$(seq 200); do $UT_WORKLOADS/short_rings --rings 1 --requests 2 --exit-open >/dev/null; done'" \
	>"$TMP/remembered-gone.out" 2>&1
gone_kept=$(grep -c '^@ring_completions' "$TMP/remembered-gone.out")
"$UT" stats "$TMP/remembered-gone.fxt" >"$TMP/remembered-gone.stats"
if [ "$closed_kept" -le 16 ] && [ "$gone_kept" -lt 100 ] && grep -q '^errors: 0' "$TMP/remembered-gone.stats"; then
	pass io_uring/rings_remembered_bounded
else
	fail io_uring/rings_remembered_bounded "$closed_kept of 500 closed rings kept, $gone_kept of 200 gone; $(grep -E '^errors' "$TMP/remembered-gone.stats")"
fi

# CQ overflow: 1008 nops into a CQ of 8, none reaped until the end.  On
# 6.18 an overflowed CQE fires io_uring_cqe_overflow, not
# io_uring_complete: the 1000 requests were never completed (@requests
# counted 8, 1000 submit flows never ended).  Each completes at its
# overflow now, once.
"$UT" -q -o "$TMP/overflow.fxt" -c "$UT_WORKLOADS/uring_doctor overflow" >"$TMP/overflow.out" 2>"$TMP/overflow.err"
"$UT" stats "$TMP/overflow.fxt" >"$TMP/overflow.stats"
overflowed=$("$UT" dump "$TMP/overflow.fxt" | grep -c 'event instant .*name="NOP" args={.*overflowed: ')
if grep -q '^@requests\[NOP, inline\]: 1008$' "$TMP/overflow.out" && grep -q '^@overflows\[0x[0-9a-f]*\]: 1000$' "$TMP/overflow.out" &&
	grep -q '^flows: [0-9]* complete, 0 incomplete' "$TMP/overflow.stats" && [ "$overflowed" -eq 1000 ]; then
	pass io_uring/overflowed_requests_complete
else
	fail io_uring/overflowed_requests_complete "$overflowed ended at the overflow; $(grep -E '^@(requests|overflows)' "$TMP/overflow.out"); $(grep -E '^flows' "$TMP/overflow.stats")"
fi

# Requests left in flight when their ring goes, traced with -c: at the
# close of the ring's last fd they are cancelled as task work after the
# close returns; after the process exited, by a kernel worker (not a
# traced process: the ring's probes are unfiltered, its ring decides).
# Each ends its flow and counts as cancelled (the doctor's LEAK evidence);
# before, the 16 flows never ended and @requests was empty.
for mode in leak leak-exit; do
	want=cancelled_at_close; [ $mode = leak-exit ] && want=cancelled_after_exit
	"$UT" -q -o "$TMP/$mode.fxt" -c "$UT_WORKLOADS/uring_doctor $mode" >"$TMP/$mode.out" 2>"$TMP/$mode.err"
	"$UT" stats "$TMP/$mode.fxt" >"$TMP/$mode.stats"
	if grep -q "^@$want\[READ\]: 16$" "$TMP/$mode.out" && grep -q '^@requests\[READ, poll\]: 16$' "$TMP/$mode.out" &&
		grep -q '^flows: [0-9]* complete, 0 incomplete' "$TMP/$mode.stats" && grep -q '^errors: 0$' "$TMP/$mode.stats"; then
		pass "io_uring/in_flight_${mode}_counted"
	else
		fail "io_uring/in_flight_${mode}_counted" "$(grep -E '^@(requests|cancelled)' "$TMP/$mode.out"); $(grep -E '^flows|^errors' "$TMP/$mode.stats")"
	fi
done

# Attaching to a running program (-p): its ring was created before the
# trace, and is adopted as it is first seen (the trace is of that process
# only); system-wide without --all-rings such a ring is not followed, and
# the end says how many requests were left out (IGNORED-RINGS).
# (the workload outlives both traces: --summary-only keeps the doctor in
# the kernel, whose verifier takes seconds on a loaded machine)
"$UT_WORKLOADS/nop_firehose" --seconds 120 --rate 2000 >"$TMP/attach.json" &
workload=$!
sleep 1
"$UT" -q --json "$TMP/attach.sum.json" -o "$TMP/attach.fxt" -p $workload -d 2 >"$TMP/attach.out" 2>"$TMP/attach.err"
"$UT" -q --summary-only --json "$TMP/wide.json" -d 2 >/dev/null 2>&1
kill $workload; wait $workload 2>/dev/null
python3 - "$TMP/attach.sum.json" "$TMP/wide.json" <<'PY'
import json, sys
a, w = (json.load(open(p)) for p in sys.argv[1:3])
nops = sum(e["value"] for e in a["maps"].get("@requests", []) if e["key"][0] == "NOP")
ok = nops >= 1000
print("PASS io_uring/attach_p_adopts_ring" if ok else f"FAIL io_uring/attach_p_adopts_ring: {nops} NOP requests in 2 s of 2000/s")
ignored = [f for f in w.get("findings", []) if f["tag"] == "IGNORED-RINGS"]
ok = ignored and ignored[0]["evidence"]["requests"] >= 1000 and ignored[0]["severity"] == "info"
print("PASS io_uring/ignored_rings_said" if ok else f"FAIL io_uring/ignored_rings_said: {w.get('findings')}")
PY
"$UT" stats "$TMP/attach.fxt" | grep -q '^errors: 0$' && pass io_uring/attach_trace_valid \
	|| fail io_uring/attach_trace_valid "$("$UT" stats "$TMP/attach.fxt" | grep -A3 '^errors')"
