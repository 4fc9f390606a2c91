#!/usr/bin/env bash
# The doctor (stdlib/io_uring_doctor.ut, docs/doctor.md): each pathology
# injected by tests/workloads/uring_doctor.c is named by the default script
# as its finding, with its evidence; the clean workloads raise nothing at
# warn or above; --fail-on=warn exits 3 on a punt storm; a finding's
# instant is in the trace at the thread and time the JSON gives.
source "$(dirname "$0")/../lib.sh"
need_root_bpf doctor || exit 0
export UT_CACHE_DIR="$TMP/cache"
W=$UT_WORKLOADS/uring_doctor

# MODE: the default script's JSON summary of it in $TMP/MODE.json, the
# workload's GROUND-TRUTH line in $TMP/MODE.truth; status 77: the mode
# cannot run here (the workload says why).  $CHECK: more options
# (--check for the buffer hazards).
CHECK=
run_mode() {   # NAME [MODE ARGS...]: the mode NAME, or MODE ARGS under NAME
	local name=$1; shift
	"$UT" -q $CHECK --summary-only --json "$TMP/$name.json" -c "$W ${*:-$name} --dir $TMP >$TMP/$name.truth 2>$TMP/$name.why" \
		>/dev/null 2>"$TMP/$name.err"
}

# NAME: the findings of $TMP/NAME.json whose tag starts with HAZARD
hazards() {
	python3 -c 'import json, sys
print(", ".join(f["tag"] + str(f["key"]) + ": " + f["message"] for f in json.load(open(sys.argv[1])).get("findings", [])
                if f["tag"].startswith("HAZARD")))' "$TMP/$1.json" 2>&1
}

# MODE TAG SEVERITY CHECK [COMMAND...]: the finding TAG at SEVERITY, and
# CHECK (python, over f: the finding, t: the ground truth's key=value)
# holds; COMMAND is the workload's mode and arguments when not MODE
expect() {
	local mode=$1 tag=$2 severity=$3 check=$4
	shift 4
	run_mode "$mode" "$@"
	local rc=$?
	if [ $rc -eq 77 ]; then skip "doctor/$mode" "$(cat "$TMP/$mode.why")"; return; fi
	python3 - "$TMP/$mode.json" "$TMP/$mode.truth" "$mode" "$tag" "$severity" "$check" "$rc" <<'PY'
import json, sys
path, truth_path, mode, tag, severity, check, rc = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception as e:
    print(f"FAIL doctor/{mode}: no summary ({e}, exit status {rc})")
    sys.exit()
line = next((l for l in open(truth_path) if l.startswith("GROUND-TRUTH")), "")
t = dict(w.split("=", 1) for w in line.split()[2:] if "=" in w)
found = [f for f in d.get("findings", []) if f["tag"] == tag]
ok = any(f["severity"] == severity and eval(check, {}, {"f": f, "t": t, "ev": f["evidence"]}) for f in found)
named = ", ".join(f'{f["severity"]} {f["tag"]}{f["key"]}: {f["message"]} {f["evidence"]}' for f in d.get("findings", []))
print(f"PASS doctor/{mode}" if ok else f"FAIL doctor/{mode}: want {severity} {tag} ({check}); made: {named or 'none'}")
PY
}

expect punt-async PUNT warn 'f["key"] == ["READ", "forced async"] and ev["punted"] == int(t["punted"])'
expect punt-eagain PUNT warn 'f["key"] == ["WRITE", "non-blocking attempt returned -EAGAIN"] and ev["punted"] >= 100'
expect punt-nowait PUNT warn 'f["key"] == ["READ", "file without non-blocking IO"] and ev["punted"] >= 100'
expect nobatch BATCH warn 'ev["enters"] == ev["sqes"] and ev["enters"] >= 1000'
expect overflow OVERFLOW warn 'f["count"] == int(t["overflowed"]) and ev["cq_entries"] == int(t["cq_entries"])'
expect errors ERRORS warn 'f["key"] == ["READ", "-EBADF"] and ev["failed"] >= 10'
expect leak LEAK warn 'f["key"] == ["READ", "ring closed"] and f["count"] == int(t["leaked"])'
expect leak-exit LEAK warn 'f["key"] == ["READ", "process exited"] and f["count"] == int(t["leaked"])'
expect sqpoll-idle SQPOLL warn 'ev["wakeups"] * 2 >= ev["submissions"]'
# (a sparse SQPOLL ring: 10 submissions, each waking the thread)
expect sqpoll-idle-few SQPOLL warn 'ev["wakeups"] * 2 >= ev["submissions"] and ev["submissions"] <= 10' sqpoll-idle 10
expect sqpoll-spin SQPOLL-SPIN info 'ev["submissions"] == int(t["submits"]) and ev["wall_ms"] >= int(t["idle_ms"])'
expect workers WORKERS warn 'ev["busy"] > 16'
expect iowq-wait IOWQ-WAIT warn 'ev["waited"] >= 10'
expect config-tw CONFIG info 'f["key"][0] == "task-work"'
expect defer-tw DEFER-TW warn 'ev["late"] >= 10'
expect unregistered-files CONFIG info 'f["key"][0] == "unregistered-files"'
expect small-cq CONFIG info 'f["key"][0] == "cq-size" and ev["cq_entries"] == 16'
expect short-write SHORT-WRITE warn 'ev["got"] < ev["wanted"]'
expect reap-lag REAP-LAG warn 'ev["late"] >= 10'
# (four CQEs, each left 600 ms: too few to warn, each long enough to say)
expect reap-lag-few REAP-LAG info 'ev["late"] < 10 and ev["wait_us"] >= 500000' reap-lag 1 --hold-ms 600
expect slow SLOW info 'f["key"] == ["READ"] and ev["latency_us"] >= 10 * ev["usual_us"]'

# --check: the buffer hazards, named with what the workload injected
# (user_data, addresses, overlap), and none without --check or on clean
# workloads
CHECK=--check
expect hazard HAZARD crit 'f["key"] == ["READ", "READ"] and ev["user_data_a"] == t["a"] and ev["user_data_b"] == t["b"]
	and int(ev["addr_a"], 16) == int(t["a_addr"], 16) and int(ev["addr_b"], 16) == int(t["b_addr"], 16)
	and int(ev["overlap_addr"], 16) == int(t["overlap_addr"], 16) and ev["overlap_len"] == int(t["overlap_len"])'
expect hazard HAZARD crit 'f["key"] == ["READ_FIXED", "READ_FIXED"] and ev["user_data_a"] == t["fixed_a"]
	and ev["user_data_b"] == t["fixed_b"] and ev["buf_index_a"] == ev["buf_index_b"] == int(t["buf_index"])
	and int(ev["overlap_addr"], 16) == int(t["fixed_overlap_addr"], 16) and ev["overlap_len"] == int(t["fixed_overlap_len"])'
expect hazard-uaf HAZARD-UAF crit 'f["key"] == ["munmap", "READ"] and int(ev["user_data"], 16) == int(t["user_data"], 16)
	and int(ev["unmapped_addr"], 16) == int(t["munmap_addr"], 16) == int(ev["overlap_addr"], 16)
	and ev["overlap_len"] == int(t["munmap_len"]) and ev["len"] == int(t["read_len"])'
expect hazard-bufreg HAZARD-BUFREG warn 'f["key"] == ["IORING_REGISTER_BUFFERS_UPDATE"] and f["count"] == 1
	and ev["user_data"] == "0xb0" and ev["buf_index"] == int(t["updated_index"]) and ev["opcode"] == t["opcode"]'
expect hazard-bufreg HAZARD-BUFREG warn 'f["key"] == ["IORING_UNREGISTER_BUFFERS"] and f["count"] == int(t["unregistered"])'
for mode in clean-read clean-nop; do
	run_mode "$mode"
	made=$(hazards "$mode")
	[ -z "$made" ] && pass "doctor/check_$mode" || fail "doctor/check_$mode" "made $made"
done
CHECK=
for mode in hazard hazard-uaf hazard-bufreg; do
	run_mode "$mode"
	made=$(hazards "$mode")
	[ -z "$made" ] && pass "doctor/no_check_$mode" || fail "doctor/no_check_$mode" "made $made"
done

# Clean workloads: nothing at warn or above (info is advice)
for mode in clean-nop clean-read punt-poll; do
	run_mode "$mode"
	loud=$(python3 -c 'import json, sys
print(", ".join(f["severity"] + " " + f["tag"] + str(f["key"]) for f in json.load(open(sys.argv[1])).get("findings", [])
                if f["severity"] != "info"))' "$TMP/$mode.json" 2>&1)
	[ -z "$loud" ] && pass "doctor/$mode" || fail "doctor/$mode" "made $loud"
done

# fio's O_DIRECT random reads with registered files and buffers, batched,
# and the nop firehose in batches of 32: nothing at warn or above either
clean_run() {   # NAME COMMAND
	"$UT" -q --summary-only --json "$TMP/$1.json" -c "$2" >/dev/null 2>"$TMP/$1.err"
	loud=$(python3 -c 'import json, sys
print(", ".join(f["severity"] + " " + f["tag"] + str(f["key"]) + ": " + f["message"]
                for f in json.load(open(sys.argv[1])).get("findings", []) if f["severity"] != "info"))' "$TMP/$1.json" 2>&1)
	[ -z "$loud" ] && pass "doctor/$1" || fail "doctor/$1" "made $loud"
}
if command -v fio >/dev/null; then
	clean_run fio_direct_registered "fio --name=clean --filename=$TMP/fio.data --size=64M --ioengine=io_uring --direct=1 \
		--rw=randread --bs=4k --iodepth=32 --iodepth_batch_submit=16 --iodepth_batch_complete_min=8 \
		--registerfiles=1 --fixedbufs=1 --time_based --runtime=2 --output=/dev/null"
	# --check on fio: its buffers never overlap (no HAZARD), threads or
	# processes, with an SQPOLL ring too
	for run in "proc:" "thread:--thread" "sqpoll:--sqthread_poll=1"; do
		"$UT" -q --check --summary-only --json "$TMP/fio_check_${run%%:*}.json" -c "fio --name=check \
			--filename=$TMP/fio.data --size=64M --ioengine=io_uring --rw=randrw --bs=4k --iodepth=32 \
			--numjobs=2 ${run#*:} --time_based --runtime=1 --output=/dev/null" >/dev/null 2>"$TMP/fio_check.err"
		made=$(hazards "fio_check_${run%%:*}")
		[ -z "$made" ] && pass "doctor/check_fio_${run%%:*}" || fail "doctor/check_fio_${run%%:*}" "made $made"
	done
	# a busy SQPOLL ring polls for its work: not a spin
	"$UT" -q --summary-only --json "$TMP/fio_sqpoll.json" -c "fio --name=sqpoll --filename=$TMP/fio.data --size=64M \
		--ioengine=io_uring --sqthread_poll=1 --rw=randread --bs=4k --iodepth=16 --time_based --runtime=2 \
		--output=/dev/null" >/dev/null 2>"$TMP/fio_sqpoll.err"
	spin=$(python3 -c 'import json, sys
print(", ".join(f["message"] for f in json.load(open(sys.argv[1])).get("findings", []) if f["tag"] == "SQPOLL-SPIN"))' \
		"$TMP/fio_sqpoll.json" 2>&1)
	[ -z "$spin" ] && pass doctor/fio_sqpoll_no_spin || fail doctor/fio_sqpoll_no_spin "made $spin"
else
	skip doctor/fio_direct_registered "no fio"
fi
clean_run nop_firehose "$UT_WORKLOADS/nop_firehose --seconds 2 --batch 32"

# --fail-on=warn: exit status 3 on a punt storm, 0 on a clean run
"$UT" -q --summary-only --fail-on=warn -c "$W punt-async --dir $TMP >/dev/null" >/dev/null 2>&1
storm=$?
"$UT" -q --summary-only --fail-on=warn -c "$W clean-read --dir $TMP >/dev/null" >/dev/null 2>&1
clean=$?
[ $storm -eq 3 ] && [ $clean -eq 0 ] && pass doctor/fail_on_warn || fail doctor/fail_on_warn "punt storm $storm, clean $clean"

# the finding's instant: on the thread that crossed the threshold, at its
# time (the JSON's first_ns and tid), in a valid trace
"$UT" -q --json "$TMP/trace.json" -o "$TMP/punt.fxt" -c "$W punt-async --dir $TMP >/dev/null" >/dev/null 2>&1
"$UT" dump "$TMP/punt.fxt" >"$TMP/punt.dump"
python3 - "$TMP/trace.json" "$TMP/punt.dump" <<'PY'
import json, re, sys
f = next(f for f in json.load(open(sys.argv[1]))["findings"] if f["tag"] == "PUNT")
marks = [l for l in open(sys.argv[2]) if 'cat="finding" name="PUNT: ' in l]
ok = len(marks) == 1 and f"ts={f['first_ns']} " in marks[0] and f"tid={f['tid']} " in marks[0]
print("PASS doctor/instant_where_made" if ok else f"FAIL doctor/instant_where_made: {f['first_ns']} tid {f['tid']}: {marks[:2]}")
PY
"$UT" stats "$TMP/punt.fxt" | grep -q '^errors: 0$' && pass doctor/trace_valid || fail doctor/trace_valid "$("$UT" stats "$TMP/punt.fxt" | grep -A3 errors)"
