#!/usr/bin/env bash
# UT_CAPTURE_RECORDS writes the records the reader takes, in its order,
# and bench/replay_bench replays them through the reader's work (the
# decoder, the user side, the engine, the writer): the capture of a real
# run is whole (every record its event's length, none malformed on
# replay) and replays any number of times.
source "$(dirname "$0")/../lib.sh"
need_root_bpf capture || exit 0
REPLAY=$(dirname "$UT")/bench/replay_bench
[ -x "$REPLAY" ] || { fail capture/replay_bench_built "no $REPLAY (make test-build builds it)"; exit 0; }
"$UT" --compile -o "$TMP/s.uto" scripts/io_uring.ut >/dev/null 2>"$TMP/compile.err" ||
	{ fail capture/compiles "$(head -3 "$TMP/compile.err")"; exit 0; }
UT_CAPTURE_RECORDS="$TMP/s.rec" "$UT" -o "$TMP/s.fxt" -c "$UT_WORKLOADS/nop_firehose --count 20000 --cpu 1 >/dev/null" \
	"$TMP/s.uto" >/dev/null 2>"$TMP/run.err" || fail capture/runs "$(tail -3 "$TMP/run.err")"
# A loaded machine may lose events or shed requests: the capture is then
# shorter but still whole; the count is checked only when nothing was lost.
python3 - "$TMP/s.rec" "$TMP/run.err" <<'PY'
import re, struct, sys
data = open(sys.argv[1], "rb").read()
err = open(sys.argv[2]).read()
lost = re.search(r"events, (\d+) lost", err)
complete = lost is not None and lost.group(1) == "0" and "shed" not in err
at = n = 0
while at + 4 <= len(data):
    (size,) = struct.unpack_from("I", data, at)
    if size < 24 or at + 4 + size > len(data):
        break
    at += 4 + size
    n += 1
ok = n >= (40000 if complete else 1) and at == len(data)
print(("PASS " if ok else "FAIL ") + "capture/whole" + ("" if ok else f": {n} records, {at} of {len(data)} bytes"))
PY
"$REPLAY" "$TMP/s.uto" "$TMP/s.rec" 2 >"$TMP/replay.out" 2>&1
if grep -Eq '^[0-9]+ records x 2 rounds: [0-9]+ ns a record, [0-9]+ trace events: [0-9.]+ ns an event \(0 malformed\)$' "$TMP/replay.out"; then
	pass capture/replays
else
	fail capture/replays "$(head -5 "$TMP/replay.out")"
fi
# The trace converted beside the loop (runtime/spool.c) is the one the
# loop writes itself, byte for byte, a spool of one chunk (full at every
# chunk: the loop waits for the converter) or of many
REPLAY_TRACE="$TMP/inline.fxt" "$REPLAY" "$TMP/s.uto" "$TMP/s.rec" >/dev/null 2>&1
for mb in 1 64; do
	if REPLAY_SPOOL=$mb REPLAY_TRACE="$TMP/spool.fxt" "$REPLAY" "$TMP/s.uto" "$TMP/s.rec" >"$TMP/spool.out" 2>&1 &&
		grep -q '^the converter: ' "$TMP/spool.out" && cmp -s "$TMP/inline.fxt" "$TMP/spool.fxt"; then
		pass capture/spool_${mb}m_same_trace
	else
		fail capture/spool_${mb}m_same_trace "$(head -3 "$TMP/spool.out"; cmp "$TMP/inline.fxt" "$TMP/spool.fxt" 2>&1)"
	fi
done
