#!/usr/bin/env bash
# Text from the user (script paths, import names, -D values) never reaches
# the generated C unescaped: each case hides a C declaration in that text,
# which must not become one (no line of the C starts with it), and the C
# compiles for BPF without a warning.  A script path holding star-slash and
# a newline once ended the comment naming the probe's place, and what
# followed the newline was C.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
export UT_CACHE_DIR=$TMP/cache
nl=$'\n'
clean() {   # clean NAME ARGS...: compiles, no line of its C is "int injected..."
  local name=$1; shift
  if ! timeout 60 "$UT" --emit-c "$@" >"$TMP/$name.c" 2>"$TMP/$name.err"; then
    fail "script_text/$name" "does not compile"; sed 's/^/  | /' "$TMP/$name.err" | head -10; return
  fi
  if grep -q '^int injected' "$TMP/$name.c"; then
    fail "script_text/$name" "user text became C: $(grep '^int injected' "$TMP/$name.c")"; return
  fi
  if ! timeout 120 "$UT" -q --compile -o "$TMP/$name.uto" "$@" >"$TMP/$name.out" 2>&1 || [ -s "$TMP/$name.out" ]; then
    fail "script_text/$name" "the C does not build cleanly"; sed 's/^/  | /' "$TMP/$name.out" | head -10; return
  fi
  pass "script_text/$name"
}

# the script's path: the comment before each probe names it
dir="$TMP/a*/${nl}int injected_path = 1; /*"
mkdir -p "$dir"
echo 'BEGIN { exit(); }' >"$dir/s.ut"
clean path "$dir/s.ut"

# an import's name, which makes the path of the module's probes
mod="$TMP/lib*/${nl}int injected_import = 1; /*m"
mkdir -p "$(dirname "$mod")"
echo 'BEGIN { exit(); }' >"$mod.ut"
printf 'import "lib*/\\nint injected_import = 1; /*m";\n' >"$TMP/imports.ut"
clean import "$TMP/imports.ut"

# -D string values, and a script flag's
echo 'const name = "x"; BEGIN { printf("%s\n", name); instant name; exit(); }' >"$TMP/define.ut"
clean define -D "name=a\"b\\c*/${nl}int injected_define = 1; /*\"" "$TMP/define.ut"
clean flag "--name=*/${nl}int injected_flag = 1; /*" "$TMP/define.ut"

# the lowest 64-bit value has no C literal (clang warned, and read it
# unsigned): -D, a for loop's bound and lhist()'s are written another way
echo 'const low = 0; BEGIN { @low = low; @h = lhist(pid, low, low + 100, 10);
	for ($i : low..low + 3) { @i[$i] = 1; } exit(); }' >"$TMP/lowest.ut"
clean lowest -D low=-9223372036854775808 "$TMP/lowest.ut"
