#!/usr/bin/env bash
# The flight recorder (--ring): a snapshot triggered by one slow request
# after seconds of fast ones holds that request whole, on its named ring;
# memory stays flat however long it runs; --max-size cuts a trace on a
# record boundary with the summary exact.
source "$(dirname "$0")/../lib.sh"
need_root_bpf ring || exit 0

# One slow request (a pipe read answered after 50 ms) after 3 s of nops
# (20,000 a second: none lost, even to a sanitized reader); the ring was
# created 3 s before the snapshot's window.
timeout -k 10 120 "$UT" --ring 1s --slow-us=20000 -o "$TMP/slow.fxt" \
	-c "$UT_WORKLOADS/slow_request --before 3 --after 0.5 --rate 20000 > $TMP/slow.json" >"$TMP/slow.out" 2>"$TMP/slow.err"
rc=$?
if [ $rc -ne 0 ] || ! grep -q '"ok":true' "$TMP/slow.json"; then
	fail ring/slow_runs "status $rc: $(tail -3 "$TMP/slow.err")"
	exit 0
fi
if [ -f "$TMP/slow.1.fxt" ] && [ ! -e "$TMP/slow.2.fxt" ] && grep -q '^@slow_requests\[READ\]: 1$' "$TMP/slow.out"; then
	pass ring/one_snapshot
else
	fail ring/one_snapshot "$(ls "$TMP"; grep slow_requests "$TMP/slow.out")"
fi
for f in slow slow.1; do
	if "$UT" stats "$TMP/$f.fxt" >"$TMP/$f.stats" 2>&1; then pass "ring/${f}_valid"
	else fail "ring/${f}_valid" "$(grep -A3 '^errors' "$TMP/$f.stats")"; fi
done
"$UT" dump "$TMP/slow.1.fxt" >"$TMP/slow.1.dump"
python3 - "$TMP/slow.1.dump" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
# the slow request's flow: its submit point, and an end with the same id
begin = None
for i, l in enumerate(lines):
    if 'name="submit"' in l and 'user_data: pointer 0x5105' in l and 'event instant' in l:
        m = re.search(r'event flow_begin .* id=(\d+)$', lines[i + 1])
        begin = m.group(1) if m else None
ends = [l for l in lines if re.search(r'event flow_end .* id=%s$' % begin, l)] if begin else []
span = any('duration_begin' in l and 'user_data: pointer 0x5105' in l for l in lines)
marked = any('name="slow request"' in l and 'user_data: pointer 0x5105' in l for l in lines)
snapshot = any('name="snapshot"' in l for l in lines)
ring = any(re.search(r'kernel_object process .*name="ring 0x[0-9a-f]+ fd \d+ of slow_request\[', l) for l in lines)
checks = {"flow": begin is not None and len(ends) == 1, "span": span, "marked": marked,
          "snapshot_marker": snapshot, "ring_named": ring}
bad = [k for k, v in checks.items() if not v]
print(("FAIL ring/snapshot_holds_the_slow_request: missing " + ", ".join(bad)) if bad
      else "PASS ring/snapshot_holds_the_slow_request")
PY

# Memory: the recorder keeps half a second of a steady 200k nops a second
# whether they ran 4 s or 16 s (kept whole, the 16 s would take 600 MB).
# Under ASan, freed memory waits in a quarantine of up to 256 MB: the
# recorder's chunks freed as the window moves filled it, so the peak
# measured how long the run was (207 MB for 4 s, 383 MB for 16 s, at the
# parent commit too); a small quarantine leaves the recorder's own memory.
peak_rss_kb() { # SECONDS
	python3 - "$UT" "$UT_WORKLOADS/nop_firehose --seconds $1 --rate 200000" "$TMP/rss$1.fxt" <<'PY'
import os, resource, subprocess, sys
# under ASan, freed memory waits in a quarantine of 256 MB before reuse
env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=4")
subprocess.run([sys.argv[1], "-q", "--ring", "500ms", "-o", sys.argv[3], "-c", sys.argv[2] + " >/dev/null", "-e",
                'import "io_uring"; io_uring_submit { flow request[args.req] begin "submit"; } '
                'io_uring_complete { flow request[args.req] end "complete"; }'],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
short=$(peak_rss_kb 4) long=$(peak_rss_kb 16)
if [ -n "$short" ] && [ -n "$long" ] && [ "$long" -lt $((short * 13 / 10)) ]; then
	pass ring/memory_flat
else
	fail ring/memory_flat "peak RSS ${short} kB for 4 s, ${long} kB for 16 s"
fi
echo "ring: peak RSS ${short} kB (4 s), ${long} kB (16 s)"

# --ring-size: a window asked for a minute of the nop firehose at full
# speed (hundreds of MB) holds what 16 MiB holds: memory the same after 1 s
# and 4 s, stderr says the window is shorter, and the file says which
# window it holds.
bounded_rss_kb() { # SECONDS
	python3 - "$UT" "$UT_WORKLOADS/nop_firehose --seconds $1 --batch 32" "$TMP/bound$1.fxt" "$TMP/bound$1.err" <<'PY'
import os, resource, subprocess, sys
env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=4")
with open(sys.argv[4], "w") as err:
    subprocess.run([sys.argv[1], "--ring", "60s", "--ring-size", "16M", "-o", sys.argv[3], "-c",
                    sys.argv[2] + " >/dev/null"], stdout=subprocess.DEVNULL, stderr=err, check=True, env=env)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
"$UT" -q --ring 60s -o "$TMP/warm.fxt" -c true 2>/dev/null   # compiled now: clang's memory is not measured
short=$(bounded_rss_kb 1) long=$(bounded_rss_kb 4)
if [ -n "$short" ] && [ -n "$long" ] && [ "$long" -lt $((short * 13 / 10)) ]; then pass ring/bounded_in_bytes
else fail ring/bounded_in_bytes "peak RSS ${short} kB for 1 s, ${long} kB for 4 s"; fi
echo "ring: --ring-size 16M, peak RSS ${short} kB (1 s), ${long} kB (4 s)"
window=$("$UT" dump "$TMP/bound4.fxt" | grep 'name="window"')
if grep -q 'the window.s records passed 16 MiB (--ring-size); it holds the last' "$TMP/bound4.err" &&
	echo "$window" | grep -q 'asked_s: double 60, held_s: double [0-9.]*, ring_size_bytes: uint32 16777216, cut_by_ring_size: bool true' &&
	"$UT" stats "$TMP/bound4.fxt" | grep -q '^errors: 0$'; then pass ring/bound_said
else fail ring/bound_said "$window $(tail -3 "$TMP/bound4.err")"; fi

# --max-size: the file stops at 2 MiB on a record boundary, says so, and
# the summary still counts every request (@submitted is the reader's: when
# a loaded machine loses hits, the summary says it is approximate).
"$UT" --max-size 2M -o "$TMP/cut.fxt" -e '
import "io_uring";
io_uring_submit { flow request[args.req] begin "submit"; @submitted = count(); }
io_uring_complete { flow request[args.req] end "complete"; }' \
	-c "$UT_WORKLOADS/nop_firehose --count 200000 --cpu 1 > $TMP/cut.json" >"$TMP/cut.out" 2>"$TMP/cut.err"
size=$(stat -c %s "$TMP/cut.fxt")
if [ "$size" -le $((2 << 20)) ] && "$UT" stats "$TMP/cut.fxt" >"$TMP/cut.stats" 2>&1 &&
	"$UT" dump "$TMP/cut.fxt" | grep -q 'name="trace cut: --max-size reached"' &&
	grep -q 'the trace was cut (--max-size reached)' "$TMP/cut.err" &&
	{ grep -q '^@submitted: 200000$' "$TMP/cut.out" ||
	  grep -q 'the summary is approximate: @submitted' "$TMP/cut.err"; }; then
	pass ring/max_size
else
	fail ring/max_size "size $size; $(grep -A3 '^errors' "$TMP/cut.stats"); $(tail -2 "$TMP/cut.err"); $(grep submitted "$TMP/cut.out")"
fi
