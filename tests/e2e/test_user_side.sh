#!/usr/bin/env bash
# The golden output test_user_side holds the user side of a probe to
# (tests/unit/user_side/semantics.{txt,json}) is what BPF prints for the
# same script: aggregations, signed division and shifts, division by zero,
# casts, absent keys, loops, printf.
source "$(dirname "$0")/../lib.sh"
need_root_bpf user_side/semantics_in_bpf || exit 0
dir=tests/unit/user_side
"$UT" --summary-only -q --json "$TMP/out.json" "$dir/semantics.ut" >"$TMP/out.txt" 2>"$TMP/err.txt"
rc=$?
if [ $rc -eq 0 ] && diff -u "$dir/semantics.txt" "$TMP/out.txt" >"$TMP/diff.txt"; then
	pass user_side/semantics_in_bpf
else
	fail user_side/semantics_in_bpf "rc=$rc $(head -20 "$TMP/diff.txt" "$TMP/err.txt")"
fi
python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["maps"], separators=(",", ":")))' \
	"$TMP/out.json" >"$TMP/maps.json"
if diff -u "$dir/semantics.json" "$TMP/maps.json" >"$TMP/diff.txt"; then
	pass user_side/semantics_json_in_bpf
else
	fail user_side/semantics_json_in_bpf "$(head -5 "$TMP/diff.txt")"
fi
