#!/usr/bin/env bash
# Before and after: --baseline saves a run's JSON summary, --diff compares
# another run with it, map key by map key (counts, a histogram's count,
# p50 and p99), and says which findings appeared or went.
source "$(dirname "$0")/../lib.sh"
need_root_bpf diff || exit 0
export UT_CACHE_DIR="$TMP/cache"
W=$UT_WORKLOADS/uring_doctor

"$UT" -q --summary-only --baseline "$TMP/before.json" -c "$W punt-async" >"$TMP/before.out" 2>&1
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not (d["schema"] >= 1 and
  any(e["key"] == ["READ", "async (io-wq)"] and e["value"] == 1000 for e in d["maps"]["@requests"])))' "$TMP/before.json" \
	&& pass diff/baseline_saved || fail diff/baseline_saved "$(head -c 400 "$TMP/before.json") $(tail -3 "$TMP/before.out")"

# the same workload: its requests did not change
"$UT" -q --summary-only --diff "$TMP/before.json" -c "$W punt-async" >"$TMP/same.out" 2>&1
grep -q '^against .*before.json' "$TMP/same.out" && ! grep -q '^@requests:' "$TMP/same.out" \
	&& pass diff/unchanged_not_listed || fail diff/unchanged_not_listed "$(sed -n '/^against/,$p' "$TMP/same.out")"

# the fix (registered files, batched, O_DIRECT): the punted reads are gone
"$UT" -q --summary-only --diff "$TMP/before.json" -c "$W clean-read" >"$TMP/after.out" 2>&1
if grep -Eq '^@requests: [0-9]+ of its keys changed' "$TMP/after.out" &&
	grep -Eq '^  READ, async \(io-wq\) +1000 -> - +\(gone\)' "$TMP/after.out" &&
	grep -Eq '^  READ_FIXED, inline +- -> [0-9]+ +\(new\)' "$TMP/after.out" &&
	grep -Eq '^  READ +1000 -> - +\(gone\) +p50 [0-9]+ -> -, p99 [0-9]+ -> -' "$TMP/after.out"; then
	pass diff/changes_listed
else fail diff/changes_listed "$(sed -n '/^against/,$p' "$TMP/after.out")"; fi

# a baseline that is not one: refused before tracing, exit status 2
echo '{"events": 1}' >"$TMP/bad.json"
"$UT" -q --summary-only --diff "$TMP/bad.json" -e 'BEGIN { exit(); }' >"$TMP/bad.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'bad.json is not a uring-trace summary' "$TMP/bad.out" && pass diff/bad_baseline_refused \
	|| fail diff/bad_baseline_refused "rc=$rc $(cat "$TMP/bad.out")"
