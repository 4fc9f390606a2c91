#!/usr/bin/env bash
# usdt probes end to end on the usdt_probes workload (<sys/sdt.h>): -l
# lists a binary's probes and -lv their arguments; arguments keep their
# sizes and signs; str() of an argument reads the process's memory; a
# wildcard attaches to every probe it matches; a name two providers share
# must be given with its provider.
source "$(dirname "$0")/../lib.sh"
need_root_bpf usdt || exit 0
W=$UT_WORKLOADS/usdt_probes

if "$UT" -l "usdt:$W" >"$TMP/list.txt" 2>&1 && grep -qx "usdt:$W:ut_test:request" "$TMP/list.txt" \
	&& grep -qx "usdt:$W:other:done" "$TMP/list.txt"
then pass usdt/list; else fail usdt/list "$(cat "$TMP/list.txt")"; fi
"$UT" -lv "usdt:$W:request" >"$TMP/listv.txt" 2>&1
if [ "$(sed -n '2,$p' "$TMP/listv.txt" | tr -s ' ' | tr '\n' ';')" = " s64 arg0; s32 arg1; u64 arg2;" ]
then pass usdt/list_arguments; else fail usdt/list_arguments "$(cat "$TMP/listv.txt")"; fi

"$UT" -q --summary-only --json "$TMP/args.json" -c "$W 5 --path /tmp/usdt-path" -e "
usdt:$W:ut_test:request { @size[arg0] = sum(arg1); @path[str(arg2)] = count(); @low = min(arg1 - 1000); }
usdt:$W:other:done { @other_done = arg0; }
U:$W:ut_test:done { @done = arg0; }" >"$TMP/args.out" 2>"$TMP/args.err"
if python3 - "$TMP/args.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["maps"]
assert {int(e["key"][0]): e["value"] for e in m["@size"]} == {0: 0, 1: 100, 2: 200, 3: 300, 4: 400}, m["@size"]
assert m["@path"] == [{"key": ["/tmp/usdt-path"], "value": 5}], m["@path"]
assert m["@low"][0]["value"] == -1000, m["@low"]          # a signed 32-bit argument
assert m["@other_done"][0]["value"] == -5, m["@other_done"]
assert m["@done"][0]["value"] == 5, m["@done"]
PY
then pass usdt/arguments; else fail usdt/arguments "$(head -c 600 "$TMP/args.json") $(cat "$TMP/args.err")"; fi

"$UT" -q --summary-only --json "$TMP/wild.json" -c "$W 3" -e "usdt:$W:ut_test:* { @hits[probe] = count(); }" \
	>/dev/null 2>"$TMP/wild.err"
if python3 - "$TMP/wild.json" "$W" <<'PY'
import json, sys
m, w = json.load(open(sys.argv[1]))["maps"], sys.argv[2]
got = {e["key"][0]: e["value"] for e in m["@hits"]}
assert got == {"usdt:%s:ut_test:request" % w: 3, "usdt:%s:ut_test:callback" % w: 1, "usdt:%s:ut_test:done" % w: 1}, got
PY
then pass usdt/wildcard; else fail usdt/wildcard "$(head -c 600 "$TMP/wild.json") $(cat "$TMP/wild.err")"; fi

# errors: a name of two providers, a probe the binary lacks, a binary without probes
"$UT" --emit-c -e "usdt:$W:done { @ = count(); }" >/dev/null 2>"$TMP/err1"
grep -q "has USDT probes 'done' of several providers; name one: usdt:$W:ut_test:done, usdt:$W:other:done" "$TMP/err1" \
	&& pass usdt/ambiguous_name || fail usdt/ambiguous_name "$(cat "$TMP/err1")"
"$UT" --emit-c -e "usdt:$W:ut_test:requset { @ = count(); }" >/dev/null 2>"$TMP/err2"
grep -q "error: no USDT probe 'ut_test:requset' in $W (did you mean 'request'?)" "$TMP/err2" \
	&& pass usdt/no_such_probe || fail usdt/no_such_probe "$(cat "$TMP/err2")"
"$UT" --emit-c -e "usdt:/bin/true:x { @ = count(); }" >/dev/null 2>"$TMP/err3"
grep -q "error: /bin/true has no USDT probes" "$TMP/err3" && pass usdt/no_probes_in_binary \
	|| fail usdt/no_probes_in_binary "$(cat "$TMP/err3")"
