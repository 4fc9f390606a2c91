# Sourceable helper: the fileio workload in wait mode, traced with -p from
# after it opened its file (a file opened before the trace started).
#
#   . tests/iostack/fileio_wait.sh
#   trace_fileio_waiting fileio/root "$TMP/root" "$TMP/data" scripts/fileio.ut [uring-trace options...] || return
#
# trace_fileio_waiting NAME OUT FILE SCRIPT [options...] starts
# `$UT_WORKLOADS/fileio --file FILE --engine sync --wait-fifo OUT/fifo`, waits until
# it has opened FILE, starts `$UT -p PID` with SCRIPT (writing OUT/summary.json,
# OUT/trace.fxt, OUT/out.txt, OUT/err.txt), releases the workload and stops
# the trace with SIGINT once the workload has exited (its JSON is in
# OUT/workload.json). Prints "FAIL NAME/...: why" and returns 1 when something
# does not start or fails; prints "PASS NAME/runs" otherwise. Needs tests/lib.sh.
# shellcheck shell=bash

trace_fileio_waiting() {
	local name=$1 out=$2 file=$3 script=$4
	shift 4
	mkdir -p "$out"
	rm -f "$out/fifo"
	"$UT_WORKLOADS/fileio" --file "$file" --engine sync --wait-fifo "$out/fifo" \
		>"$out/workload.json" 2>"$out/workload.err" &
	local wpid=$!
	if ! wait_for "$out/workload.err" 'waiting for a byte'; then
		fail "$name/workload" "fileio did not open its file: $(head -c 300 "$out/workload.err")"
		kill "$wpid" 2>/dev/null
		return 1
	fi
	"$UT" -p "$wpid" --json "$out/summary.json" -o "$out/trace.fxt" "$@" "$script" >"$out/out.txt" 2>"$out/err.txt" &
	local tpid=$!
	if ! wait_for "$out/err.txt" '^uring-trace: tracing'; then
		fail "$name/runs" "uring-trace did not start: $(head -c 400 "$out/err.txt")"
		kill "$wpid" "$tpid" 2>/dev/null
		return 1
	fi
	echo go >"$out/fifo"
	wait "$wpid"
	kill -INT "$tpid"
	if ! wait "$tpid"; then
		fail "$name/runs" "uring-trace failed: $(head -c 400 "$out/err.txt")"
		return 1
	fi
	pass "$name/runs"
}
