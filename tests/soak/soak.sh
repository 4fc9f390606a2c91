#!/usr/bin/env bash
# Soak test (`make soak`, outside `make test`): the default script left
# tracing the whole machine under --ring for MINUTES while io_uring
# programs come and go, as a production user would leave it.  It checks
# what a capture that runs for days needs:
#   - the tracer's RSS stays within --ring-size plus a stated overhead, and
#     its memory beside the window stays flat (the last third's median no
#     more than 10 % over the middle third's);
#   - no map fills ("was full" on stderr);
#   - every snapshot (SIGUSR1 each minute, and each request slower than
#     20 ms) and the final trace are valid under `uring-trace stats`, with
#     no slice left open (valid ones are removed once checked).
#
#   tests/soak/soak.sh [MINUTES]     (default 30)
#
# Workloads, in a loop until the time is up: liburing's test suite when
# LIBURING_TEST_DIR names its test/ directory (built: `make -C test`), else
# the bundled mix (rings opened and closed, processes exiting with rings
# and requests in flight, overflows, io-wq punts, SQPOLL, a steady nop load).
# Results go to SOAK_OUT (default build/soak): rss.csv (seconds; RSS, its anonymous and file pages, kB),
# uring-trace.err, the traces, and summary.txt, whose figures belong in
# bench/README.md.  Exit status 0 when every check passes.
set -u
cd "$(dirname "$0")/../.."
minutes=${1:-30}
UT=${UT:-$PWD/build/uring-trace}
W=${UT_WORKLOADS:-$PWD/build/workloads}
out=${SOAK_OUT:-$PWD/build/soak}
ring_size_mb=${SOAK_RING_MB:-128}
# the tracer's own memory beside the window: libraries (22 MB), the
# reader (reorder queues, names, findings, the user side's maps: its
# bookkeeping maps at their bound of 65,536 entries take about 6 MB each;
# 45-90 MB in all) and the engine writing a snapshot, whose tables grow
# with the threads, lanes and open flows of the window (liburing's suite:
# about 70 MB); while a snapshot is written the window may also pass
# --ring-size by what comes before its cursor leaves the oldest chunk
overhead_mb=${SOAK_OVERHEAD_MB:-160}
rm -rf "$out" && mkdir -p "$out"
[ "$(id -u)" -eq 0 ] || { echo "soak: needs root (it traces the machine)"; exit 2; }

# the metrics endpoint says what the window holds (uring_trace_ring_bytes):
# the tracer's memory beside it is the RSS less that
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$UT" -q --ring 10s --ring-size "${ring_size_mb}M" --slow-us=20000 --max-snapshots 1000 -o "$out/soak.fxt" \
	--metrics "$port" \
	>"$out/summary.out" 2>"$out/uring-trace.err" &
tracer=$!
sleep 5   # attached (a cold compile takes a second or two)

workloads() {
	if [ -n "${LIBURING_TEST_DIR:-}" ]; then
		(cd "$LIBURING_TEST_DIR" && ./runtests.sh $(ls *.t) >"$out/liburing.log" 2>&1)
		return
	fi
	local tmp
	tmp=$(mktemp -d)
	"$W/uring_paths" --dir "$tmp" --nops 200 --polls 50 --async 50 --links 20 >/dev/null
	"$W/short_rings" --rings 50 --requests 4 >/dev/null
	"$W/short_rings" --rings 50 --requests 4 --unreaped >/dev/null
	for _ in 1 2 3 4 5; do "$W/short_rings" --rings 1 --requests 2 --exit-open >/dev/null; done
	for mode in overflow leak leak-exit punt-async punt-poll sqpoll-idle workers errors small-cq; do
		"$W/uring_doctor" "$mode" >/dev/null 2>&1
	done
	"$W/nop_firehose" --seconds 2 --rate 200000 >/dev/null
	rm -rf "$tmp"
}

# Each snapshot is checked once written, and removed when valid: slow
# requests take snapshots too (--slow-us), up to one every --after, and the
# disk would fill over hours (10 s windows of up to --ring-size each).
bad=0 traces=0
check_trace() {   # FILE
	traces=$((traces + 1))
	"$UT" stats "$1" >"$1.stats" 2>&1
	if [ $? -ne 0 ] || ! grep -q '^errors: 0$' "$1.stats" || ! grep -q '^slices open at the end: 0$' "$1.stats"; then
		bad=$((bad + 1))
		echo "  $1: $(grep -A2 -E '^errors|^slices open' "$1.stats" | head -4)"
	elif [ "$1" != "$out/soak.fxt" ]; then
		rm -f "$1" "$1.stats"
	fi
}
check_snapshots() {   # all of them but the newest, which may still be written
	local newest
	newest=$(ls "$out" | sed -n 's/^soak\.\([0-9]*\)\.fxt$/\1/p' | sort -n | tail -1)
	for f in "$out"/soak.[0-9]*.fxt; do
		[ -e "$f" ] && [ "$f" != "$out/soak.$newest.fxt" ] && check_trace "$f"
	done
}

start=$SECONDS
next_snapshot=$((SECONDS + 60))
# every 2 s: a snapshot of a full window is written in about a second,
# and the peaks come then; anonymous and file-backed pages apart (the
# libraries' pages are file-backed and shared)
echo "seconds,rss_kb,anon_kb,file_kb,ring_kb" >"$out/rss.csv"
( while kill -0 $tracer 2>/dev/null; do
	ring=$(curl -sf -m 1 "http://127.0.0.1:$port/metrics" | sed -n 's/^uring_trace_ring_bytes //p')
	echo "$((SECONDS - start)),$(awk '/^VmRSS/ { r = $2 } /^RssAnon/ { a = $2 } /^RssFile/ { f = $2 }
		END { print r "," a "," f }' /proc/$tracer/status 2>/dev/null),$((${ring:-0} / 1024))" >>"$out/rss.csv"
	sleep 2
  done ) &
sampler=$!
rounds=0
while [ $((SECONDS - start)) -lt $((minutes * 60)) ] && kill -0 $tracer 2>/dev/null; do
	workloads
	rounds=$((rounds + 1))
	check_snapshots
	if [ $SECONDS -ge $next_snapshot ]; then
		kill -USR1 $tracer
		next_snapshot=$((SECONDS + 60))
	fi
done
kill -TERM $tracer
wait $tracer
rc=$?
kill $sampler 2>/dev/null

failed=0
check() {   # NAME OK WHY
	if [ "$2" = 1 ]; then echo "PASS soak/$1"; else echo "FAIL soak/$1: $3"; failed=1; fi
}
check tracer_exit "$([ $rc -eq 0 ] && echo 1)" "exit status $rc: $(tail -3 "$out/uring-trace.err")"
peak=$(tail -n +2 "$out/rss.csv" | cut -d, -f2 | sort -n | tail -1)
limit=$(((ring_size_mb + overhead_mb) * 1024))
check rss_within_cap "$([ "${peak:-0}" -le $limit ] && echo 1)" "peak ${peak} kB over ${limit} kB"
# Flat: the memory beside the window (RSS less what the window holds),
# its median over the last third of the run against the middle third's.
# The first third is the warm-up in which the bounded tables fill (the
# reader's maps, up to 65,536 entries each; thread names; findings); the
# peaks come from snapshots being written, whose engines follow what each
# window holds.
third_median() {   # 2 (middle) or 3 (last): the median, kB
	tail -n +2 "$out/rss.csv" | awk -F, -v part="$1" '{ beside[NR] = $2 - $5 }
		END { n = int(NR / 3); from = (part - 1) * n + 1
		      for (i = from; i < from + n; i++) v[i - from] = beside[i]
		      # a sort, n being small
		      for (i = 1; i < n; i++) for (j = i; j > 0 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		      print n ? v[int(n / 2)] : 0 }'
}
middle=$(third_median 2) last=$(third_median 3)
check memory_flat "$([ "${middle:-0}" -gt 0 ] && [ "${last:-0}" -le $((middle * 11 / 10)) ] && echo 1)" \
	"beside the window, the middle third's median ${middle} kB, the last third's ${last} kB"
check no_map_full "$(grep -q 'was full' "$out/uring-trace.err" || echo 1)" "$(grep 'was full' "$out/uring-trace.err" | head -3)"
for f in "$out"/soak*.fxt; do
	[ -e "$f" ] && check_trace "$f"
done
check traces_valid "$([ $bad -eq 0 ] && [ $traces -ge 1 ] && echo 1)" "$bad of $traces traces invalid"

{
	echo "soak: $minutes min, $rounds rounds of workloads ($([ -n "${LIBURING_TEST_DIR:-}" ] && echo "liburing test suite" || echo "bundled mix"))"
	echo "--ring 10s --ring-size ${ring_size_mb}M: peak RSS ${peak} kB; beside the window, medians of the middle and last thirds ${middle} and ${last} kB"
	echo "traces: $traces ($((traces - 1)) snapshots), $bad invalid"
	grep -E 'events|lost|was full|cut' "$out/uring-trace.err" | head -5
} | tee "$out/summary.txt"
exit $failed
