#!/usr/bin/env bash
# Findings end to end: a rule in a probe (one finding per opcode, its
# severity computed, counted at each punt) and one in END, on requests
# forced to io-wq: the text section, the JSON, --fail-on's exit status 3,
# and the first one marked in the trace on the thread and at the time it
# was made (dump, stats); --snapshot-on writes a snapshot at it.
source "$(dirname "$0")/../lib.sh"
need_root_bpf findings || exit 0

cat >"$TMP/punts.ut" <<'UT'
import "io_uring";

tp_btf:io_uring:io_uring_queue_async_work {
	@punts += 1;
	$op = io_uring_op[args.req.opcode];
	finding "PUNT"[$op] (@punts >= 100 ? crit : warn) "%s: %d requests went to an io-wq worker", $op, @punts
		fix "drop IOSQE_ASYNC unless the request would block for long"
		with opcode = $op, punts = @punts, user_data = hex(args.req.cqe.user_data);
}

END {
	finding "TOTAL" info "%d punts in all", @punts with punts = @punts;
}
UT
timeout -k 10 120 "$UT" --fail-on=warn --json "$TMP/punts.json" -o "$TMP/punts.fxt" \
	-c "$UT_WORKLOADS/uring_doctor punt-async 200 > $TMP/workload.out" "$TMP/punts.ut" >"$TMP/punts.out" 2>"$TMP/punts.err"
rc=$?
if [ $rc -eq 3 ]; then pass findings/fail_on_exits_3
else fail findings/fail_on_exits_3 "status $rc: $(tail -3 "$TMP/punts.err")"; fi

# the text section after the maps: the most severe first
if python3 - "$TMP/punts.out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
section = text[text.index("\nfindings:\n"):].split("\n")[2:]
assert section[0] == "crit PUNT[READ]: READ: 200 requests went to an io-wq worker", section
assert re.match(r"^\t200 times, first at \d\d:\d\d:\d\d\.\d{6} in pid \d+ tid \d+$", section[1]), section
assert section[2] == "\tfix: drop IOSQE_ASYNC unless the request would block for long", section
assert re.match(r"^\tevidence: opcode = READ, punts = 200, user_data = 0x[0-9a-f]+$", section[3]), section
assert section[4] == "info TOTAL: 200 punts in all", section
assert section[5].endswith(" by uring-trace (BEGIN or END)"), section
PY
then pass findings/text; else fail findings/text "$(sed -n '/^findings:/,$p' "$TMP/punts.out")"; fi

# the JSON: the schema, each finding's fields
if python3 - "$TMP/punts.json" "$TMP/workload.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1, d["schema"]
f = d["findings"]
assert [(x["tag"], x["key"], x["severity"], x["count"]) for x in f] == \
    [("PUNT", ["READ"], "crit", 200), ("TOTAL", [], "info", 1)], f
punt = f[0]
assert punt["pid"] > 0 and punt["tid"] > 0 and punt["first_ns"] > 0, punt
assert punt["message"] == "READ: 200 requests went to an io-wq worker", punt
assert punt["fix"] == "drop IOSQE_ASYNC unless the request would block for long", punt
assert punt["evidence"]["opcode"] == "READ" and punt["evidence"]["punts"] == 200, punt
assert punt["evidence"]["user_data"].startswith("0x"), punt
assert f[1]["pid"] == 0 and f[1]["evidence"] == {"punts": 200}, f[1]
PY
then pass findings/json; else fail findings/json "$(head -c 2000 "$TMP/punts.json")"; fi

# the trace: one instant per finding, the first PUNT's on the punting
# thread at the time the JSON gives, TOTAL's on uring-trace's own track
"$UT" dump "$TMP/punts.fxt" >"$TMP/punts.dump"
"$UT" stats --json "$TMP/punts.fxt" >"$TMP/punts.stats"
if python3 - "$TMP/punts.dump" "$TMP/punts.json" "$TMP/punts.stats" <<'PY'
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
f = json.load(open(sys.argv[2]))["findings"]
stats = json.load(open(sys.argv[3]))
assert stats["errors"] == 0, stats["errors"]
marks = [l for l in lines if 'event instant' in l and 'cat="finding"' in l]
assert len(marks) == 2, marks
punt = [l for l in marks if 'name="PUNT: READ: 1 requests went to an io-wq worker"' in l]
assert len(punt) == 1, marks
m = re.search(r'ts=(\d+) pid=(\d+) tid=(\d+)', punt[0])
assert (int(m.group(1)), int(m.group(2)), int(m.group(3))) == (f[0]["first_ns"], f[0]["pid"], f[0]["tid"]), (punt, f[0])
assert 'severity: string "warn"' in punt[0] and 'opcode: string "READ"' in punt[0] and re.search(r"punts: \w+ 1\b", punt[0]), punt
total = [l for l in marks if 'name="TOTAL: 200 punts in all"' in l][0]
me = re.search(r'pid=(\d+)', total).group(1)
assert any(re.search(r'kernel_object thread koid=%s name="uring-trace"' % me, l) for l in lines), total
PY
then pass findings/marked_in_trace; else fail findings/marked_in_trace "$(grep 'cat="finding"' "$TMP/punts.dump" | head -3)"; fi

# without --fail-on, or below its severity: the status is the command's
"$UT" -q --summary-only --fail-on=crit -e 'BEGIN { finding "ONLY-WARN" warn "a warning"; exit(); }' >/dev/null 2>&1
rc_below=$?
"$UT" -q --summary-only -e 'BEGIN { finding "CRIT" crit "crit"; exit(); }' >/dev/null 2>&1
rc_none=$?
if [ $rc_below -eq 0 ] && [ $rc_none -eq 0 ]; then pass findings/fail_on_severity
else fail findings/fail_on_severity "status $rc_below below --fail-on, $rc_none without it"; fi

# --snapshot-on: the first finding at crit (not the warnings before it)
# writes a snapshot holding its instant
timeout -k 10 120 "$UT" -q --ring 2s --after 100ms --snapshot-on=crit -o "$TMP/snap.fxt" \
	-c "$UT_WORKLOADS/uring_doctor punt-async 200 > /dev/null" "$TMP/punts.ut" >/dev/null 2>"$TMP/snap.err"
"$UT" stats "$TMP/snap.1.fxt" >"$TMP/snap.stats" 2>&1
"$UT" dump "$TMP/snap.1.fxt" >"$TMP/snap.dump" 2>&1
if [ -f "$TMP/snap.1.fxt" ] && [ ! -e "$TMP/snap.2.fxt" ] && grep -q '^errors: 0$' "$TMP/snap.stats" &&
	grep -q 'name="snapshot"' "$TMP/snap.dump"; then
	pass findings/snapshot_on
else
	fail findings/snapshot_on "$(ls "$TMP"; tail -3 "$TMP/snap.err"; grep -A3 '^errors' "$TMP/snap.stats";
		grep -c 'name="snapshot"' "$TMP/snap.dump")"
fi

# Bounded: past the most kept (UT_MAX_FINDINGS here, 4096 by default), new
# findings are counted, not kept; the summary, the JSON and --fail-on say so.
cat >"$TMP/many.ut" <<'UT'
tracepoint:syscalls:sys_enter_getppid /pid == cpid/ {
	@calls += 1;
	finding "CALL"[@calls] (@calls == 10 ? warn : info) "call %d", @calls;
}
UT
printf 'import os\nfor i in range(10): os.getppid()\n' >"$TMP/many.py"   # ten findings at least
UT_MAX_FINDINGS=4 timeout -k 10 120 "$UT" --summary-only --fail-on=warn --json "$TMP/many.json" \
	-c "python3 $TMP/many.py" "$TMP/many.ut" >"$TMP/many.out" 2>"$TMP/many.err"
rc=$?
# (python makes getppid calls of its own: at least the script's ten)
calls=$(python3 -c 'import json, sys; print(int(json.load(open(sys.argv[1]))["maps"]["@calls"][0]["value"]))' \
	"$TMP/many.json" 2>/dev/null)
if [ $rc -eq 3 ] && [ "${calls:-0}" -ge 10 ] && [ "$(grep -c '^info CALL\[' "$TMP/many.out")" = 4 ] &&
	grep -q "^$((calls - 4)) more findings, made once 4 were kept, are not listed (the most severe: warn)\$" \
		"$TMP/many.out" &&
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
assert len(d["findings"]) == 4 and d["findings_not_kept"] == int(sys.argv[2]) - 4' "$TMP/many.json" "$calls"; then
	pass findings/bounded
else
	fail findings/bounded "status $rc: $(grep -A30 '^findings:' "$TMP/many.out" | tail -4; tail -2 "$TMP/many.err")"
fi
