#!/usr/bin/env bash
# Overload without broken requests (issue 38): while the ring buffer holds
# more than a mark unread (half of it by default), the kernel sheds the
# requests that begin, whole: every point of their flows and what is keyed
# to them (their spans) is left out, and a request is in the trace whole or
# not at all.  The text, --json's "shed" and the trace's "requests shed"
# marks say how many; nothing open ends at a mark.  Here the mark is 48 KiB
# of a 256 KiB ring (UT_SHED_MARK), so that a nop firehose sheds long
# before it fills the ring and keeps some requests (a CPU wakes the reader
# after its share of a quarter of the ring, 32 KiB: a mark under that
# sheds them all).
source "$(dirname "$0")/../lib.sh"
need_root_bpf shed || exit 0

script=$(dirname "$0")/requests.ut

# every flow and span that begins ends, with its own request's user_data,
# and none ends that did not begin
whole() { # NAME
	"$UT" dump "$TMP/$1.fxt" >"$TMP/$1.dump" || { fail "shed/$1_dump" "dump failed"; return; }
	python3 - "$(dirname "$0")" "$TMP/$1.dump" "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from request_walk import Walk
w, name = Walk(sys.argv[2], '"requests shed"'), sys.argv[3]
ends_without_begin = w.flow_ends_without_begin + w.span_ends_without_begin
ok = (w.marks > 0 and not w.wrong and not ends_without_begin and not w.open_flows and not w.open_spans and
      w.flows_whole > 1000 and w.spans_whole > 1000)
print(("PASS " if ok else "FAIL ") + f"shed/{name}_requests_whole" +
      ("" if ok else f": {w.marks} marks, {w.flows_whole} flows and {w.spans_whole} spans whole, "
                     f"{len(w.open_flows)} flows and {len(w.open_spans)} spans never ended, "
                     f"{ends_without_begin} ends without a begin, {w.wrong} ends of another request"))
PY
}

UT_SHED_MARK=49152 "$UT" --buffer 256K --json "$TMP/small.json" -o "$TMP/small.fxt" \
	-c "$UT_WORKLOADS/nop_firehose --count 300000 --cpu 1 >/dev/null" "$script" >/dev/null 2>"$TMP/small.err"
shed=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["shed"] if d["lost"] == 0 else -1)' \
	"$TMP/small.json" 2>/dev/null)
if [ "${shed:-0}" -gt 0 ] && grep -q "^uring-trace: [0-9]* events, 0 lost, $shed requests shed; trace written" "$TMP/small.err" &&
	grep -q "^uring-trace: $shed requests were shed whole" "$TMP/small.err"; then
	pass shed/counted_in_text_and_json
else
	fail shed/counted_in_text_and_json "shed=$shed; $(grep -E 'lost|shed' "$TMP/small.err" | head -3)"
fi
whole small

# The default script, shedding: the trace stays valid (stats), every flow
# complete; the reader's maps are said to miss what the shed requests did.
UT_SHED_MARK=49152 "$UT" --buffer 256K -o "$TMP/default.fxt" \
	-c "$UT_WORKLOADS/nop_firehose --count 200000 --cpu 1 >/dev/null" \
	>/dev/null 2>"$TMP/default.err"
"$UT" stats "$TMP/default.fxt" >"$TMP/default.stats" 2>&1
if grep -q ' requests shed; trace written' "$TMP/default.err" &&
	grep -q 'miss what the [0-9]* lost or late hits and the [0-9]* requests shed did' "$TMP/default.err" &&
	grep -q '^errors: 0$' "$TMP/default.stats" && grep -q '^flows: [0-9]* complete, 0 incomplete' "$TMP/default.stats" &&
	grep -q '"requests shed"' "$TMP/default.stats"; then
	pass shed/default_script_valid
else
	fail shed/default_script_valid "$(grep -E 'lost|shed' "$TMP/default.err" | head -2; grep -E '^errors|^flows' "$TMP/default.stats")"
fi

# A kernel that sheds nothing (UT_SHED_MARK=0) says nothing of it.
UT_SHED_MARK=0 "$UT" --json "$TMP/none.json" -o "$TMP/none.fxt" \
	-c "$UT_WORKLOADS/nop_firehose --count 20000 --cpu 1 >/dev/null" "$script" >/dev/null 2>"$TMP/none.err"
if python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["shed"] == 0' "$TMP/none.json" 2>/dev/null &&
	! grep -q 'shed' "$TMP/none.err"; then
	pass shed/none_unsaid
else
	fail shed/none_unsaid "$(grep -E 'lost|shed' "$TMP/none.err" | head -2)"
fi
