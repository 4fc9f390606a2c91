#!/usr/bin/env bash
# print(), zero(), time(), strftime() and elapsed end to end, as bpftrace
# spells and prints them: maps printed while tracing (the largest entry
# last, histograms by their total), their top entries, divided; values;
# zero() keeps the keys; time() and strftime() give the wall clock.
source "$(dirname "$0")/../lib.sh"
need_root_bpf print || exit 0

cat >"$TMP/print.ut" <<'UT'
BEGIN {
	for ($i : 0..10) { @n[$i % 3] = count(); @s[$i % 3] = sum($i * 1000); }
	@h["a"] = hist(3); @h["b"] = hist(3); @h["b"] = hist(300); @v = 7;
}
END {
	print(@n); printf("-- top 2\n"); print(@n, 2); printf("-- divided\n"); print(@s, 0, 1000);
	printf("-- hist\n"); print(@h, 1); print(@v); print("text"); print(hex(255));
	zero(@n); printf("-- zeroed\n"); print(@n);
	clear(@n); clear(@s); clear(@h); clear(@v);
}
interval:ms:10 { exit(); }
UT
"$UT" -q --summary-only "$TMP/print.ut" >"$TMP/print.out" 2>"$TMP/print.err"
cat >"$TMP/want.out" <<'OUT'
@n[1]: 3
@n[2]: 3
@n[0]: 4
-- top 2
@n[2]: 3
@n[0]: 4
-- divided
@s[1]: 12
@s[2]: 15
@s[0]: 18
-- hist
@h[b]:
[2, 4)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[4, 8)                 0 |                                                    |
[8, 16)                0 |                                                    |
[16, 32)               0 |                                                    |
[32, 64)               0 |                                                    |
[64, 128)              0 |                                                    |
[128, 256)             0 |                                                    |
[256, 512)             1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
p50 3, p90 511, p99 511, p99.9 511

@v: 7
text
0xff
-- zeroed
@n[0]: 0
@n[1]: 0
@n[2]: 0
OUT
if diff "$TMP/want.out" "$TMP/print.out" >"$TMP/diff"; then pass print/maps_and_values
else fail print/maps_and_values "$(cat "$TMP/diff" "$TMP/print.err")"; fi

# the wall clock: time() and strftime() (%f: microseconds), elapsed since
# the start (counted in ns: above 0)
"$UT" -q --summary-only -e 'BEGIN { time(); time("%Y-%m-%d|\n"); printf("%s %d\n", strftime("%H:%M:%S.%f", nsecs), elapsed > 0); exit(); }' \
	>"$TMP/time.out" 2>"$TMP/time.err"
if grep -Eq '^[0-9]{2}:[0-9]{2}:[0-9]{2}$' "$TMP/time.out" && grep -qx "$(date +%Y-%m-%d)|" "$TMP/time.out" \
	&& grep -Eq '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6} 1$' "$TMP/time.out"
then pass print/time_and_strftime; else fail print/time_and_strftime "$(cat "$TMP/time.out" "$TMP/time.err")"; fi

# maps printed at intervals, as bpftrace's tools do (pidpersec.bt): a time
# line, then the map, every interval while the command runs
printf 'import os, time\nfor i in range(40): os.getppid(); time.sleep(0.01)\n' >"$TMP/getppid.py"
"$UT" -q --summary-only -c "/usr/bin/python3 $TMP/getppid.py" -e 'tracepoint:syscalls:sys_enter_getppid { @ = count(); }
	interval:ms:100 { time("%H:%M:%S calls: "); print(@); clear(@); }' >"$TMP/interval.out" 2>"$TMP/interval.err"
if python3 - "$TMP/interval.out" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
prints = [l for l in lines if l.endswith(" calls: ") or re.match(r"^\d\d:\d\d:\d\d calls: @: \d+$", l)]
counted = [int(l.split("@: ")[1]) for l in prints if "@: " in l]
assert len(prints) >= 2, lines     # at least two intervals
assert all(re.match(r"^\d\d:\d\d:\d\d calls: (@: \d+)?$", l) for l in prints), prints
assert 0 < sum(counted) <= 40, counted
PY
then pass print/at_intervals; else fail print/at_intervals "$(cat "$TMP/interval.out" "$TMP/interval.err")"; fi

# JSON: keys of their types (numbers where the summary shows numbers),
# histogram buckets with their bounds as numbers, stats() as an object
"$UT" -q --summary-only --json "$TMP/maps.json" -e 'BEGIN {
	@h = hist(-5); @h = hist(0); @h = hist(5); @h = hist(1000000);
	@l[7, "k"] = lhist(5, 0, 20, 10); @l[7, "k"] = lhist(25, 0, 20, 10);
	@keys[-3, hex(5), "s", errname(-11)] = count(); @st = stats(3); exit(); }' >/dev/null 2>"$TMP/maps.err"
if python3 - "$TMP/maps.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1, d["schema"]
m = d["maps"]
assert [(e["key"], e["count"]) for e in m["@h"]] == [([], 4)], m["@h"]
h = [(b["min"], b["max"], b["count"]) for b in m["@h"][0]["buckets"]]
assert h == [(None, -1, 1), (0, 0, 1), (4, 7, 1), (524288, 1048575, 1)], h
# linear within the bucket of the value of rank ceil(4 * p): its k-th of c
# is min + (max - min) * k / c
assert m["@h"][0]["percentiles"] == {"p50": 0, "p90": 1048575, "p99": 1048575, "p99.9": 1048575}, m["@h"]
l = [(e["key"], b["min"], b["max"]) for e in m["@l"] for b in e["buckets"]]
assert l == [([7, "k"], 0, 9), ([7, "k"], 20, None)], l
assert m["@l"][0]["percentiles"] == {"p50": 9, "p90": 20, "p99": 20, "p99.9": 20}, m["@l"]
assert m["@keys"] == [{"key": [-3, "0x5", "s", "-EAGAIN"], "value": 1}], m["@keys"]
assert m["@st"] == [{"key": [], "value": {"count": 1, "average": 3, "total": 3}}], m["@st"]
PY
then pass print/json_types_and_buckets; else fail print/json_types_and_buckets "$(cat "$TMP/maps.json" "$TMP/maps.err")"; fi

# private maps are the script's bookkeeping: neither in the text summary nor
# in the JSON (print() still prints one when asked)
"$UT" -q --summary-only --json "$TMP/private.json" -e 'private @start, @seen;
	BEGIN { @start[1] = 5; @seen = count(); @shown[2] = 7; print(@start); exit(); }' \
	>"$TMP/private.out" 2>"$TMP/private.err"
if python3 - "$TMP/private.json" "$TMP/private.out" <<'PY'
import json, sys
maps = json.load(open(sys.argv[1]))["maps"]
assert list(maps) == ["@shown"], maps
out = open(sys.argv[2]).read().split("\n")
assert [l for l in out if l] == ["@start[1]: 5", "@shown[2]: 7"], out
PY
then pass print/private_maps; else fail print/private_maps "$(cat "$TMP/private.json" "$TMP/private.out" "$TMP/private.err")"; fi
