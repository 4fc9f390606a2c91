#!/usr/bin/env bash
# Compiled programs kept between runs (runtime/program_cache.h): a script
# run again, unchanged, runs the program kept, with -v's account of its
# compile; any change to what the compile read (the script, an import, a
# directory an import was looked for in, -D) compiles it again; what may
# not be kept is not.
source "$(dirname "$0")/../lib.sh"
need_root_bpf program_cache || exit 0
export UT_CACHE_DIR="$TMP/cache"
kept_entries() { find "$UT_CACHE_DIR/prog" -name '*.utc' 2>/dev/null | wc -l; }
# A file changed within a second of a compile is not trusted (a later
# change could leave its times as they are): inputs are left to settle.
settle() { sleep 1.2; }

mkdir -p "$TMP/s" "$TMP/first"
printf 'fn greeting() { printf("from s\\n"); }\n' >"$TMP/s/mod.ut"
cat >"$TMP/s/main.ut" <<'UT'
import "mod";
tracepoint:syscalls:sys_enter_getppid { @calls = count(); }
BEGIN { greeting(); }
UT
settle
printf 'import os\nfor i in range(3): os.getppid()\n' >"$TMP/getppid.py"
run() {   # run NAME: traces main.ut with -I first, 3 getppid calls
	"$UT" -v --summary-only -I "$TMP/first" -c "/usr/bin/python3 $TMP/getppid.py" \
		"$TMP/s/main.ut" >"$TMP/$1.out" 2>"$TMP/$1.err"
}
run one
run two
if grep -q "^from s" "$TMP/one.out" && grep -q "^@calls: 3" "$TMP/one.out" &&
	! grep -q "compiled program from the cache" "$TMP/one.err"; then pass program_cache/first_run_compiles
else fail program_cache/first_run_compiles "$(cat "$TMP/one.out" "$TMP/one.err")"; fi
if grep -q "compiled program from the cache" "$TMP/two.err" && diff -q "$TMP/one.out" "$TMP/two.out" >/dev/null; then
	pass program_cache/second_run_kept
else fail program_cache/second_run_kept "$(cat "$TMP/two.out" "$TMP/two.err")"; fi
# -v tells the compile's placement again
if grep "placement:" "$TMP/one.err" >"$TMP/one.placement" && grep "placement:" "$TMP/two.err" >"$TMP/two.placement" &&
	diff -q "$TMP/one.placement" "$TMP/two.placement" >/dev/null; then pass program_cache/verbose_placement_again
else fail program_cache/verbose_placement_again "$(cat "$TMP/one.err" "$TMP/two.err")"; fi

# An import changed (same size, its time set back): compiled again.
printf 'fn greeting() { printf("from S\\n"); }\n' >"$TMP/s/mod.ut"
touch -r "$TMP/s/main.ut" "$TMP/s/mod.ut"
run three
if grep -q "^from S" "$TMP/three.out" && ! grep -q "from the cache" "$TMP/three.err"; then
	pass program_cache/changed_import_compiles
else fail program_cache/changed_import_compiles "$(cat "$TMP/three.out" "$TMP/three.err")"; fi

# A module of that name put where imports are looked for first (-I):
# found instead, so compiled again.
settle
run four_compiled
run four
printf 'fn greeting() { printf("from first\\n"); }\n' >"$TMP/first/mod.ut"
run five
if grep -q "from the cache" "$TMP/four.err" && grep -q "^from first" "$TMP/five.out" &&
	! grep -q "from the cache" "$TMP/five.err"; then pass program_cache/shadowing_import_compiles
else fail program_cache/shadowing_import_compiles "$(cat "$TMP/four.err" "$TMP/five.out" "$TMP/five.err")"; fi

# -D, like every option the compiler is given, is part of what is kept.
const_run() { "$UT" -q "$@" -e 'const N = 1; BEGIN { printf("N=%d\n", N); exit(); }' 2>&1; }
const_run >/dev/null
out=$(const_run; const_run -D N=2; const_run)
[ "$out" = "$(printf 'N=1\nN=2\nN=1')" ] && pass program_cache/define_is_part_of_the_key \
	|| fail program_cache/define_is_part_of_the_key "$out"

# A damaged entry is compiled again, and replaced.
for f in "$UT_CACHE_DIR"/prog/*.utc; do truncate -s 100 "$f"; done
run six
if grep -q "^from first" "$TMP/six.out" && grep -q "^@calls: 3" "$TMP/six.out" && ! grep -q "from the cache" "$TMP/six.err"; then
	pass program_cache/damaged_entry_compiles
else fail program_cache/damaged_entry_compiles "$(cat "$TMP/six.out" "$TMP/six.err")"; fi
for f in "$UT_CACHE_DIR"/prog/*.utc; do head -c 2000 /dev/urandom >"$f"; done
run seven
grep -q "^@calls: 3" "$TMP/seven.out" && pass program_cache/random_entry_compiles \
	|| fail program_cache/random_entry_compiles "$(cat "$TMP/seven.out" "$TMP/seven.err")"

# A script read from a pipe (<(...)) has no file to compare: not kept
# (its name, /dev/fd/N, is the same for another script).
out=$(for w in one two; do "$UT" -q <(echo "BEGIN { printf(\"$w\\n\"); exit(); }"); sleep 1.2; done 2>&1)
[ "$out" = "$(printf 'one\ntwo')" ] && pass program_cache/piped_script_not_kept \
	|| fail program_cache/piped_script_not_kept "$out"
# -v says why a program is not kept
"$UT" -v <(echo 'BEGIN { exit(); }') 2>&1 | grep -q "not kept in the cache: a script has no file to compare" \
	&& pass program_cache/verbose_says_why_not_kept || fail program_cache/verbose_says_why_not_kept

# Not kept: a compile that warned (the warning is shown at every run),
# and probes resolved in a program's files.
before=$(kept_entries)
for i in 1 2; do "$UT" -q -e 'interval:us:500 { exit(); }' >/dev/null 2>"$TMP/warn$i.err"; done
if [ "$(kept_entries)" = "$before" ] && grep -q "warning: intervals shorter" "$TMP/warn2.err"; then
	pass program_cache/warnings_not_kept
else fail program_cache/warnings_not_kept "$(kept_entries) vs $before: $(cat "$TMP/warn2.err")"; fi
before=$(kept_entries)
"$UT" -q -d 0.2 -e 'uprobe:/usr/bin/python3:Py_Initialize { @n = count(); }' >/dev/null 2>"$TMP/uprobe.err"
[ "$(kept_entries)" = "$before" ] && pass program_cache/uprobes_not_kept \
	|| fail program_cache/uprobes_not_kept "$(cat "$TMP/uprobe.err")"

# The cache keeps within UT_CACHE_MAX_MB: four programs' files (about
# 1 MB each, object and program) in a 2 MB cache leave the newest.
export UT_CACHE_DIR="$TMP/small" UT_CACHE_MAX_MB=2
for n in 1 2 3 4; do const_run -D N=$n >"$TMP/small$n.out"; done
bytes=$(du -sbc "$UT_CACHE_DIR/obj" "$UT_CACHE_DIR/prog" | tail -1 | cut -f1)
newest=$(const_run -v -D N=4 | grep -c "compiled program from the cache")
if [ "$bytes" -le $((2 << 20)) ] && [ "$newest" = 1 ] && grep -q "N=4" "$TMP/small4.out"; then
	pass program_cache/bounded
else fail program_cache/bounded "$bytes bytes, newest kept: $newest; $(ls -l "$UT_CACHE_DIR"/obj "$UT_CACHE_DIR"/prog)"; fi
