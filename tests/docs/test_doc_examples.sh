#!/usr/bin/env bash
# Every ```ut block of docs/language.md, docs/coming-from-bpftrace.md and
# README.md, and every script in
# examples/, must be accepted by the compiler (--emit-c: checked against
# this kernel, nothing loaded).  Plus the README's basic commands.
cd "$(dirname "$0")/../.."
. tests/lib.sh

check_script() {   # NAME FILE
	local out
	if out=$("$UT" --emit-c "$2" 2>&1 >/dev/null); then
		pass "$1"
	else
		fail "$1" "$(printf '%s' "$out" | head -5)"
	fi
}

for doc in docs/language.md docs/coming-from-bpftrace.md README.md; do
	[ -f "$doc" ] || { fail "$doc" "missing"; continue; }
	# one file per block, named after the line its fence is on
	awk -v dir="$TMP" -v base="$(basename "$doc" .md)" '
		/^```ut[ \t]*$/ { inblock = 1; n = NR; f = dir "/" base "_" NR ".ut"; printf "" > f; next }
		inblock && /^```[ \t]*$/ { inblock = 0; close(f); next }
		inblock { print > f }
	' "$doc"
	blocks=$(find "$TMP" -name "$(basename "$doc" .md)_*.ut" | sort -t_ -k2 -n)
	[ -n "$blocks" ] || fail "$doc" "no \`\`\`ut examples found"
	for f in $blocks; do
		line=${f##*_}; line=${line%.ut}
		check_script "$doc:$line" "$f"
	done
done

shopt -s nullglob
for f in examples/*.ut; do
	check_script "$f" "$f"
done

# The commands the README shows.
if "$UT" --help | grep -q '^Usage: uring-trace'; then pass "--help"; else fail "--help" "no usage text"; fi
if "$UT" --version | grep -Eq '^uring-trace [0-9]+\.[0-9]+'; then pass "--version"; else fail "--version" "$("$UT" --version 2>&1)"; fi
n=$("$UT" -l 'tracepoint:io_uring:*' | grep -c '^tracepoint:io_uring:')
if [ "$n" -eq 17 ]; then pass "-l tracepoint:io_uring:* lists 17"; else fail "-l tracepoint:io_uring:*" "listed $n, expected 17 (kernel 6.18)"; fi
