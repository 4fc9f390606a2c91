#!/usr/bin/env bash
# for ($kv : @m) and percentile() end to end: loops in END over maps of
# values, strings and aggregations (one key and several), deleting as they
# go; over a map the kernel keeps; in a probe's body the reader runs; the
# same from the compiled reader and the interpreter; percentile() as the
# summary's percentiles; what cannot run so is refused.
source "$(dirname "$0")/../lib.sh"
need_root_bpf map_loops || exit 0

cat >"$TMP/end.ut" <<'UT'
BEGIN {
	@v[1, "a"] = 10; @v[2, "b"] = 20; @v[3, "c"] = 30;
	@c["x"] = count(); @c["x"] = count(); @c["y"] = count();
	@s[5] = sum(7); @a[5] = avg(4); @a[5] = avg(6); @lo[5] = min(-3); @hi[5] = max(9);
	@str[1] = "one"; @str[2] = "two";
	for ($i : 0..100) { @lat["r"] = hist($i); @lin = lhist($i, 0, 100, 10); }
	exit();
}
END {
	for ($kv : @v) {
		printf("v %d %s %d\n", $kv.0.0, $kv.0.1, $kv.1);
		if ($kv.1 >= 20) {
			delete(@v[$kv.0]);   /* the entry the loop is at */
		}
	}
	for ($kv : @v) { printf("left %d %s\n", $kv.0.0, $kv.0.1); }
	for ($e : @c) { printf("count %s %d\n", $e.0, $e.1); }
	for ($e : @s) { printf("sum %d %d\n", $e.0, $e.1); }
	for ($e : @a) { printf("avg %d %d\n", $e.0, $e.1); }
	for ($e : @lo) { printf("min %d %d\n", $e.0, $e.1); }
	for ($e : @hi) { printf("max %d %d\n", $e.0, $e.1); }
	for ($e : @str) {
		if ($e.1 == "two") { break; }
		printf("str %d %s\n", $e.0, $e.1);
	}
	printf("percentiles %d %d %d %d lhist %d\n", percentile(@lat["r"], 50), percentile(@lat["r"], 90),
	       percentile(@lat["r"], 99), percentile(@lat["r"], 999, 1000), percentile(@lin, 90));
}
UT
"$UT" -q --summary-only --json "$TMP/end.json" "$TMP/end.ut" >"$TMP/compiled.out" 2>"$TMP/compiled.err"
UT_INTERPRET=1 "$UT" -q --summary-only "$TMP/end.ut" >"$TMP/interpreted.out" 2>"$TMP/interpreted.err"
if python3 - "$TMP/compiled.out" "$TMP/end.json" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]).read().split("\n") if l and not l.startswith(("@", "[", "p50 "))]
want = ["v 1 a 10", "v 2 b 20", "v 3 c 30", "left 1 a", "count x 2", "count y 1", "sum 5 7", "avg 5 5",
        "min 5 -3", "max 5 9"]
# a loop's order is the map's; the str loop stops at "two", wherever it is
got = [l for l in lines if not l.startswith(("str ", "percentiles "))]
assert sorted(got) == sorted(want), got
assert [l for l in lines if l.startswith("str ")] in ([], ["str 1 one"]), lines
p = json.load(open(sys.argv[2]))["maps"]
lat = p["@lat"][0]["percentiles"]
lin = p["@lin"][0]["percentiles"]
line = [l for l in lines if l.startswith("percentiles ")]
assert line == ["percentiles %d %d %d %d lhist %d" % (lat["p50"], lat["p90"], lat["p99"], lat["p99.9"], lin["p90"])], \
    (line, lat, lin)
PY
then pass map_loops/in_end; else fail map_loops/in_end "$(cat "$TMP/compiled.out" "$TMP/compiled.err")"; fi
if diff "$TMP/compiled.out" "$TMP/interpreted.out" >"$TMP/diff"; then pass map_loops/compiled_as_interpreted
else fail map_loops/compiled_as_interpreted "$(head -20 "$TMP/diff" "$TMP/interpreted.err")"; fi

# a probe's body in the reader goes over a map and deletes what it is done
# with (as the default script does at a ring's close); END goes over a
# map the kernel keeps (a predicate reads it), read from the kernel
cat >"$TMP/probe.ut" <<'UT'
tracepoint:syscalls:sys_enter_getppid /@calls[tid] < 1000/ {
	@calls[tid] += 1;
	@open[tid, @calls[tid]] = nsecs;
}
tracepoint:syscalls:sys_enter_getpgid {
	for ($kv : @open) {
		if ($kv.0.0 == tid) {
			@closed[tid] = count();
			delete(@open[$kv.0]);
		}
	}
}
END {
	for ($kv : @calls) { printf("calls %d\n", $kv.1); }
	for ($kv : @open) { printf("still open %d\n", $kv.0.1); }
}
UT
cat >"$TMP/calls.py" <<'PY'
import os
for i in range(30):
    os.getppid()
os.getpgid(0)
for i in range(5):
    os.getppid()
PY
"$UT" -q --summary-only -v -c "/usr/bin/python3 $TMP/calls.py" "$TMP/probe.ut" >"$TMP/probe.out" 2>"$TMP/probe.err"
pid_line=$(grep -c '^calls 35$' "$TMP/probe.out")
if [ "$pid_line" -eq 1 ] && [ "$(grep -c '^still open' "$TMP/probe.out")" -eq 5 ] &&
	grep -Eq '^@closed\[[0-9]+\]: 30$' "$TMP/probe.out" &&
	grep -q 'placement: the kernel keeps @calls' "$TMP/probe.err"; then
	pass map_loops/in_a_probe_and_kernel_map
else
	fail map_loops/in_a_probe_and_kernel_map "$(cat "$TMP/probe.out"; grep placement "$TMP/probe.err")"
fi

# what the kernel would have to run is refused, with where and why: END
# runs in the reader under --all-in-kernel too, but its loop deletes from
# a map the kernel keeps, keyed by the loop's entry
"$UT" --all-in-kernel --emit-c "$TMP/end.ut" >/dev/null 2>"$TMP/kernel.err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'end.ut:10:2: error: a for loop over a map runs in the reader, over the map.s entries, but here the kernel would need \$kv.0.0: read for a key or value of a map in the kernel (.*end.ut:13:' "$TMP/kernel.err"; then
	pass map_loops/refused_in_kernel
else
	fail map_loops/refused_in_kernel "status $rc: $(head -3 "$TMP/kernel.err")"
fi
