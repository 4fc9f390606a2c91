#!/usr/bin/env bash
# A trace cut short (--max-size, a full disk, SIGTERM) ends what it has
# open: every slice and span that began in the file ends in it (marked cut
# or unfinished), in room the writer kept for it, and the file is valid.
source "$(dirname "$0")/../lib.sh"
need_root_bpf cut || exit 0
export UT_CACHE_DIR="$TMP/cache"
busy="$UT_WORKLOADS/nop_firehose --seconds 1 --batch 8"

# stats: valid, no slice begins without an end; ends marked $2
valid_ended() {   # NAME MARK FILE ERRFILE
	"$UT" stats "$3" >"$TMP/$1.stats" 2>&1
	local rc=$? marked
	marked=$("$UT" dump "$3" | grep -c "$2: bool true")
	if [ $rc -eq 0 ] && grep -q '^errors: 0$' "$TMP/$1.stats" && grep -q '^slices open at the end: 0$' "$TMP/$1.stats" &&
		[ "$marked" -gt 0 ]; then pass "cut/$1"
	else fail "cut/$1" "rc=$rc marked=$marked $(grep -A3 '^errors' "$TMP/$1.stats") $(tail -3 "$4")"; fi
}

# --max-size with the default script: io_uring_enter slices and request
# spans were left open ("did not end" in Perfetto)
"$UT" --max-size 2M -o "$TMP/size.fxt" -c "$busy" >/dev/null 2>"$TMP/size.err"
size=$(stat -c %s "$TMP/size.fxt")
[ "$size" -le $((2 << 20)) ] && grep -q 'the trace was cut (--max-size reached)' "$TMP/size.err" \
	&& pass cut/max_size_bound || fail cut/max_size_bound "size $size $(tail -3 "$TMP/size.err")"
valid_ended max_size_ends_open cut "$TMP/size.fxt" "$TMP/size.err"

# A full disk: the writer holds room ahead on the file system, so the
# trace is cut where everything open can still end (exit status 1: the
# trace is not what was asked for)
mkdir -p "$TMP/small"
if mount -t tmpfs -o size=3m tmpfs "$TMP/small" 2>/dev/null; then
	"$UT" -o "$TMP/small/t.fxt" -c "$busy" >/dev/null 2>"$TMP/disk.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q 'the trace was cut (disk full)' "$TMP/disk.err" &&
		"$UT" dump "$TMP/small/t.fxt" | grep -q 'name="trace cut: disk full"'; then pass cut/disk_full_said
	else fail cut/disk_full_said "rc=$rc $(tail -3 "$TMP/disk.err")"; fi
	valid_ended disk_full_ends_open cut "$TMP/small/t.fxt" "$TMP/disk.err"
	umount "$TMP/small"
else
	skip cut/disk_full "cannot mount a tmpfs here"
fi

# SIGTERM in the middle: what is open ends at the stop, marked unfinished
# (a request the workload waits seconds for: its span and the wait's
# io_uring_enter slice are open then).  The kernel sheds no request here
# (UT_SHED_MARK=0): a reader still behind the half second of nops before it
# (sanitized, on a loaded machine) would shed the slow request whole.
UT_SHED_MARK=0 "$UT" -o "$TMP/term.fxt" -c "echo started >$TMP/started; exec $UT_WORKLOADS/slow_request --before 0.5 --slow-ms 20000" \
	>/dev/null 2>"$TMP/term.err" &
ut=$!
wait_for "$TMP/started" started
sleep 1.5
kill -TERM $ut
wait $ut
valid_ended sigterm_ends_open unfinished "$TMP/term.fxt" "$TMP/term.err"
