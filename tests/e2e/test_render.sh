#!/usr/bin/env bash
# `uring-trace render` on a real trace of the uring_paths workload: the SVG
# is valid XML and shows the workload's threads, both rings with lanes and
# counters, and flow arrows; windows and --only select; bad options and
# damaged traces are reported.
source "$(dirname "$0")/../lib.sh"
need_root_bpf render || exit 0

"$UT" -q -o "$TMP/trace.fxt" -c "$UT_WORKLOADS/uring_paths --dir $TMP > $TMP/workload.json" \
	>"$TMP/out.txt" 2>"$TMP/err.txt"
rc=$?
if [ $rc -ne 0 ]; then
	fail render/trace "exit status $rc: $(head -5 "$TMP/err.txt")"
	exit 0
fi

# valid XML, when xmllint is there (.ci/install-deps.sh installs it)
valid_xml() {
	local name=$1 file=$2
	if ! command -v xmllint >/dev/null; then
		skip "$name" "xmllint missing: apt-get install libxml2-utils"
	elif xmllint --noout "$file" 2>"$TMP/xmllint.txt"; then
		pass "$name"
	else
		fail "$name" "$(head -3 "$TMP/xmllint.txt")"
	fi
}
# count_of CLASS FILE: elements of that class (one element a line)
count_of() { grep -c "class=\"$1\"" "$2"; }

# the default output name: trace.fxt -> trace.svg
if "$UT" render "$TMP/trace.fxt" 2>"$TMP/render.txt" && [ -s "$TMP/trace.svg" ] &&
	grep -q "wrote $TMP/trace.svg" "$TMP/render.txt"; then
	pass render/default_output
else
	fail render/default_output "$(head -3 "$TMP/render.txt")"
	exit 0
fi
svg=$TMP/trace.svg
valid_xml render/valid_svg "$svg"

pid=$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' "$TMP/workload.json" | head -1)
rings=$(grep -o '"ring_fd":' "$TMP/workload.json" | wc -l)
if grep -q ">uring_paths  pid $pid</text>" "$svg" && grep -q ">uring_paths $pid</text>" "$svg" &&
	grep -q ">iou-wrk-$pid [0-9]*</text>" "$svg"; then
	pass render/threads
else
	fail render/threads "no process header, main thread or io-wq worker row for pid $pid"
fi
drawn_rings=$(grep -c 'class="process"[^>]*>ring 0x[0-9a-f]* fd [0-9]* of uring_paths' "$svg")
if [ "$rings" -ge 1 ] && [ "$drawn_rings" -eq "$rings" ] && grep -q '>lane 1</text>' "$svg" &&
	[ "$(count_of counter "$svg")" -ge $((3 * rings)) ]; then
	pass render/rings
else
	fail render/rings "$drawn_rings ring headers for $rings rings, $(count_of counter "$svg") counters"
fi
# request spans are named after their opcode
if grep -q '<title>NOP ' "$svg" && grep -q '<title>READ ' "$svg" && grep -q '<title>WRITE ' "$svg"; then
	pass render/request_spans
else
	fail render/request_spans "no NOP, READ or WRITE slices"
fi
arrows=$(count_of flow "$svg")
if [ "$arrows" -ge 10 ]; then pass render/arrows; else fail render/arrows "$arrows arrows"; fi

# a window, to stdout
if "$UT" render --busiest 0.5 -o - "$TMP/trace.fxt" >"$TMP/busy.svg" 2>"$TMP/render.txt" &&
	grep -q 'window .* to .* of .* after the first event' "$TMP/busy.svg" &&
	[ "$(count_of flow "$TMP/busy.svg")" -ge 1 ]; then
	pass render/busiest_to_stdout
else
	fail render/busiest_to_stdout "$(head -3 "$TMP/render.txt")"
fi
valid_xml render/busiest_valid_svg "$TMP/busy.svg"
"$UT" render --from 0 --to 0.001 --width 800 -o "$TMP/first_us.svg" "$TMP/trace.fxt" 2>/dev/null
if grep -q 'width="800"' "$TMP/first_us.svg" && [ "$(grep -c '<rect class="slice' "$TMP/first_us.svg")" -lt \
	"$(grep -c '<rect class="slice' "$svg")" ]; then
	pass render/window_and_width
else
	fail render/window_and_width "a 1 us window at 800 px did not draw fewer slices"
fi

# --only keeps the matching threads
"$UT" render --only iou-wrk -o "$TMP/only.svg" "$TMP/trace.fxt" 2>/dev/null
if grep -q ">iou-wrk-$pid" "$TMP/only.svg" && ! grep -q '>lane 1<' "$TMP/only.svg" &&
	! grep -q ">uring_paths $pid<" "$TMP/only.svg"; then
	pass render/only
else
	fail render/only "--only iou-wrk drew other threads"
fi

# gzip traces: trace.fxt.gz -> trace.svg next to it, the same picture but
# for the file name in the title
mkdir "$TMP/gz" && gzip -c "$TMP/trace.fxt" >"$TMP/gz/trace.fxt.gz"
if "$UT" render "$TMP/gz/trace.fxt.gz" 2>/dev/null &&
	cmp -s <(grep -v 'class="title"' "$TMP/gz/trace.svg") <(grep -v 'class="title"' "$svg"); then
	pass render/gzip_same_picture
else
	fail render/gzip_same_picture "the .gz trace drew a different picture (or none)"
fi

# a trace cut in the middle: exit 1, the picture says so and is valid
size=$(stat -c %s "$TMP/trace.fxt")
head -c $((size / 2 + 3)) "$TMP/trace.fxt" >"$TMP/cut.fxt"
"$UT" render -o "$TMP/cut.svg" "$TMP/cut.fxt" 2>"$TMP/cut.txt"
rc=$?
if [ $rc -eq 1 ] && grep -q 'trace damaged' "$TMP/cut.svg" && grep -q 'cut.fxt is damaged' "$TMP/cut.txt"; then
	pass render/cut_trace
else
	fail render/cut_trace "exit $rc: $(head -2 "$TMP/cut.txt")"
fi
valid_xml render/cut_trace_valid_svg "$TMP/cut.svg"

# command-line errors: exit 2 and a message saying what to do
expect_usage() {
	local name=$1 want=$2; shift 2
	"$UT" render "$@" >/dev/null 2>"$TMP/usage.txt"
	local rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$want" "$TMP/usage.txt"; then pass "$name"
	else fail "$name" "exit $rc: $(head -2 "$TMP/usage.txt")"; fi
}
expect_usage render/usage_width "--width takes pixels" --width 50 "$TMP/trace.fxt"
expect_usage render/usage_from "--from takes milliseconds" --from soon "$TMP/trace.fxt"
expect_usage render/usage_busiest_and_window "not both" --busiest 1 --from 2 "$TMP/trace.fxt"
expect_usage render/usage_no_trace "usage: uring-trace render"
expect_usage render/window_after_end "after the trace's last event" --from 100000 -o "$TMP/x.svg" "$TMP/trace.fxt"
"$UT" render -o "$TMP/x.svg" "$TMP/missing.fxt" 2>"$TMP/missing.txt"
rc=$?
if [ $rc -eq 1 ] && grep -q "missing.fxt" "$TMP/missing.txt"; then pass render/missing_trace
else fail render/missing_trace "exit $rc: $(head -2 "$TMP/missing.txt")"; fi
