#!/usr/bin/env bash
# lru @m: a map past its 65536 entries pushes out its least recently used
# entry instead of refusing the new key, in the kernel (an LRU hash) and
# in the reader (runtime/user_maps.c), and a .uto keeps the declaration.
# Each script gives @seen a new key at each of 80000 getppid() calls and
# keeps the last key in @last: the newest key must be in the map.
source "$(dirname "$0")/../lib.sh"
need_root_bpf lru || exit 0

CALLS=80000
printf 'import os, sys\nfor i in range(int(sys.argv[1])): os.getppid()\n' >"$TMP/getppid.py"
# in the kernel: only a probe that sends no records writes it
cat >"$TMP/kernel.ut" <<'UT'
lru @seen;
tracepoint:syscalls:sys_enter_getppid { $t = nsecs; @seen[$t] = 1; @last = $t; }
UT
# in the reader: the probe sends a record (its instant) that writes it
cat >"$TMP/reader.ut" <<'UT'
lru @seen;
tracepoint:syscalls:sys_enter_getppid { $t = nsecs; @seen[$t] = 1; @last = $t; instant "getppid"; }
UT
grep -v '^lru' "$TMP/kernel.ut" >"$TMP/plain.ut"

# run NAME SCRIPT: traces the calls, the maps in NAME.json, stderr in NAME.err
run() {
  timeout 120 "$UT" -o "$TMP/$1.fxt" --json "$TMP/$1.json" -c "/usr/bin/python3 $TMP/getppid.py $CALLS" "$2" \
    >/dev/null 2>"$TMP/$1.err"
}

# newest NAME PLACE: @seen holds its newest key and more than half its
# bound, and is in PLACE (kernel or reader)
newest() {
  python3 - "$TMP/$1.json" <<'PY'
import json, sys
maps = json.load(open(sys.argv[1]))["maps"]
seen = [e["key"][0] for e in maps["@seen"]]
last = maps["@last"][0]["value"]
assert 32768 < len(seen) <= 65536, len(seen)
assert last in seen, "the newest key was not kept"
PY
}

"$UT" --dump placement "$TMP/kernel.ut" | grep -q '^map 0 @seen: kernel' &&
  "$UT" --dump placement "$TMP/reader.ut" | grep -q '^map 0 @seen: reader' &&
  pass lru/placed || fail lru/placed "$("$UT" --dump placement "$TMP/reader.ut" 2>&1 | grep '^map')"

# the control: without lru the kernel's map fills and refuses the newest
run plain "$TMP/plain.ut"
grep -q '@seen is full in the kernel' "$TMP/plain.err" &&
  pass lru/plain_map_fills || fail lru/plain_map_fills "$(cat "$TMP/plain.err")"

run kernel "$TMP/kernel.ut"
if ! grep -q 'full' "$TMP/kernel.err" && newest kernel 2>>"$TMP/kernel.err"; then
  pass lru/kernel_keeps_newest
else
  fail lru/kernel_keeps_newest "$(cat "$TMP/kernel.err")"
fi

# the reader counts what it pushes out: every call past 65536, as none
# is lost (the counts of lost records are said otherwise)
run reader "$TMP/reader.ut"
pushed=$(sed -n 's/^uring-trace: @seen: \([0-9]*\) entries pushed out (lru: the least recently used go when it holds 65536)$/\1/p' \
  "$TMP/reader.err")
if ! grep -q 'full' "$TMP/reader.err" && [ -n "$pushed" ] && [ "$pushed" -gt 0 ] && newest reader 2>>"$TMP/reader.err"; then
  pass lru/reader_pushes_out
else
  fail lru/reader_pushes_out "$(cat "$TMP/reader.err")"
fi
grep -q ' 0 lost' "$TMP/reader.err" && [ "$pushed" = $((CALLS - 65536)) ] &&
  pass lru/reader_counts_pushed_out || fail lru/reader_counts_pushed_out "pushed out ${pushed:-none}: $(cat "$TMP/reader.err")"

# a compiled script keeps its maps lru
"$UT" -q --compile -o "$TMP/reader.uto" "$TMP/reader.ut" && run uto "$TMP/reader.uto"
if grep -q '^uring-trace: @seen: [0-9]* entries pushed out' "$TMP/uto.err" && ! grep -q 'full' "$TMP/uto.err"; then
  pass lru/uto_keeps_lru
else
  fail lru/uto_keeps_lru "$(cat "$TMP/uto.err")"
fi
