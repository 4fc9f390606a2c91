#!/usr/bin/env bash
# Split execution (compiler/placement.c) changes where a script's work runs,
# not what it finds: each bundled script traces a workload twice at once,
# placed (the default) and with everything in the kernel (--all-in-kernel),
# both attached before the workload starts and filtering on its command
# name, so both see the same probe hits.  Their summaries must be the same
# (the same keys; the same counts and values, and histograms holding as
# many values, for maps whose values are not times) and `uring-trace stats`
# must count the same events of each name, with none lost.  (The tracers'
# own counts of records may differ: a thread whose hits only feed the
# reader's maps is named in the placed trace.)  A third tracer runs the
# placed script with the reader's user side interpreted (UT_INTERPRET=1)
# instead of compiled (compiler/gen_native.c): it must find the same.  A
# fourth writes no trace (--summary-only: the trace's statements compiled
# out, the maps where the trace's placement has them), and a fifth neither,
# with every map in the kernel (--summary-only --all-in-kernel: nothing
# sent): their summaries must be the same too, and nothing lost.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../iostack/loopdev.sh"
need_root_bpf placement || exit 0
W=$UT_WORKLOADS

# both NAME SCRIPT COMM "TIMED MAPS" CMD: traces CMD (whose command name is
# COMM) with SCRIPT placed and all in the kernel, then compares the two.
# The comparison holds when neither lost events: on a loaded machine one
# may, and the pair runs again (up to three times).
both() {
	local attempt
	for attempt in 1 2 3; do
		compare "$@" >"$TMP/compare.out"
		grep -q "^FAIL placement/$1/nothing_lost" "$TMP/compare.out" && [ $attempt -lt 3 ] || break
		echo "placement/$1: events lost (attempt $attempt), again"
	done
	cat "$TMP/compare.out"
}

compare() {
	local name=$1 script=$2 comm=$3 timed=$4 cmd=$5 out=$TMP/$1 mode pids=()
	rm -rf "$out"
	mkdir -p "$out"
	for mode in placed interpreted kernel summary summary_kernel; do
		local how=(-o "$out/$mode.fxt")
		case $mode in
		kernel) how+=(--all-in-kernel) ;;
		summary) how=(--summary-only) ;;
		summary_kernel) how=(--summary-only --all-in-kernel) ;;
		esac
		UT_INTERPRET=$([ $mode = interpreted ] && echo 1) "$UT" -v "${how[@]}" \
			--buffer 64M --comm "$comm" --json "$out/$mode.json" "$script" \
			>"$out/$mode.txt" 2>"$out/$mode.err" &
		pids+=($!)
	done
	for mode in placed interpreted kernel summary summary_kernel; do
		if ! wait_for "$out/$mode.err" 'tracing.*; Ctrl-C to stop'; then
			fail "placement/$name/starts" "$mode: $(head -c 300 "$out/$mode.err")"
			kill -INT "${pids[@]}" 2>/dev/null
			wait "${pids[@]}"
			return
		fi
	done
	(cd "$out" && sh -c "$cmd" >"$out/workload.out" 2>&1)
	kill -INT "${pids[@]}"
	wait "${pids[@]}"
	grep -q "as compiled code" "$out/placed.err" &&
		grep -q "interprets the script's user side (UT_INTERPRET=1)" "$out/interpreted.err" &&
		pass "placement/$name/compiled_and_interpreted" ||
		fail "placement/$name/compiled_and_interpreted" "$(grep -h 'user side' "$out"/*.err | head -3)"
	for mode in placed interpreted kernel; do
		"$UT" stats --json "$out/$mode.fxt" >"$out/$mode.stats.json" 2>>"$out/$mode.err" ||
			fail "placement/$name/stats" "$mode: uring-trace stats failed"
	done
	python3 - "$name" "$out" "$timed" <<'PY'
import json, sys
name, out, timed = sys.argv[1], sys.argv[2], sys.argv[3].split()
def check(what, cond, why=""):
    print(("PASS " if cond else "FAIL ") + f"placement/{name}/{what}" + ("" if cond else ": " + why))
modes = ("placed", "interpreted", "kernel", "summary", "summary_kernel")
s = {m: json.load(open(f"{out}/{m}.json")) for m in modes}
st = {m: json.load(open(f"{out}/{m}.stats.json")) for m in modes[:3]}
check("nothing_lost", all(s[m]["lost"] == 0 and s[m]["late"] == 0 and not s[m]["approximate"] for m in s),
      str({m: (s[m]["lost"], s[m]["late"], s[m]["approximate"]) for m in s}))
check("traced_something", st["kernel"]["events"] > 0, "no events")
# the trace's events (the records the tracers count also name threads: a
# thread whose hits only update the reader's maps is named in the placed
# trace alone)
check("same_events", st["placed"]["events"] == st["kernel"]["events"],
      f'{st["placed"]["events"]} placed, {st["kernel"]["events"]} in the kernel')
def counts(stats):
    return {(e["type"], e["name"]): e["count"] for e in stats["names"]}
cp, ck = counts(st["placed"]), counts(st["kernel"])
differ = {k: (cp.get(k), ck.get(k)) for k in set(cp) | set(ck) if cp.get(k) != ck.get(k)}
check("same_events_by_name", not differ, str(sorted(differ.items())[:8]))
check("same_flows", st["placed"]["flows"] == st["kernel"]["flows"], f'{st["placed"]["flows"]} vs {st["kernel"]["flows"]}')
def summary(maps, m):
    entries = {}
    for e in maps[m]:
        key = tuple(e["key"])
        if "buckets" in e:   # a histogram: how many values it holds
            entries[key] = e["count"]
        else:
            entries[key] = None if m in timed else e["value"]
    return entries
mp, mk = s["placed"]["maps"], s["kernel"]["maps"]
check("same_maps", sorted(mp) == sorted(mk), f"{sorted(mp)} vs {sorted(mk)}")
bad = [m for m in mk if m in mp and summary(mp, m) != summary(mk, m)]
check("same_summary", not bad, "; ".join(f"{m}: {summary(mp, m)} vs {summary(mk, m)}"[:300] for m in bad[:3]))
# compiled and interpreted: the same trace events and summary
mi = s["interpreted"]["maps"]
ci = counts(st["interpreted"])
check("interpreted_same_events", st["interpreted"]["events"] == st["placed"]["events"] and ci == cp and
      st["interpreted"]["flows"] == st["placed"]["flows"],
      f'{st["interpreted"]["events"]} vs {st["placed"]["events"]}: ' +
      str(sorted({k: (ci.get(k), cp.get(k)) for k in set(ci) | set(cp) if ci.get(k) != cp.get(k)}.items())[:8]))
bad = [m for m in mp if m not in mi or summary(mp, m) != summary(mi, m)]
check("interpreted_same_summary", sorted(mi) == sorted(mp) and not bad,
      "; ".join(f"{m}: {summary(mp, m)} vs {summary(mi, m) if m in mi else None}"[:300] for m in bad[:3]))
# no trace: the same summary, with the maps placed as for the trace and
# with every map in the kernel
for mode, what in (("summary", "summary_only_same_summary"), ("summary_kernel", "summary_only_in_kernel_same_summary")):
    ms = s[mode]["maps"]
    bad = [m for m in mp if m not in ms or summary(mp, m) != summary(ms, m)]
    check(what, sorted(ms) == sorted(mp) and not bad,
          "; ".join(f"{m}: {summary(mp, m)} vs {summary(ms, m) if m in ms else None}"[:300] for m in bad[:3]))
PY
}

both io_uring_paths "$UT_ROOT/scripts/io_uring.ut" uring_paths "" "$W/uring_paths --dir ."
both io_uring_nops "$UT_ROOT/scripts/io_uring.ut" nop_firehose "" "$W/nop_firehose --count 20000 --rate 200000"
if loopdev_create 64; then
	file=$LOOPDEV_MNT/data
	both fileio "$UT_ROOT/scripts/fileio.ut" fileio "@avg_us @max_us" "$W/fileio --file $file --engine sync"
	both iostack "$UT_ROOT/scripts/iostack.ut" fileio "@total_ns" "$W/fileio --file $file --engine sync"
	both block "$UT_ROOT/scripts/block.ut" fileio "" "$W/fileio --file $file --engine uring"
else
	skip placement/loop_device "$LOOPDEV_ERROR"
fi
