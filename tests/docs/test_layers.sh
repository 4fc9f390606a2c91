#!/usr/bin/env bash
# The layering docs/architecture.md's table of folders gives holds: of the
# project's headers, the sources of a folder include their own folder's and
# those of the folders its row says it uses ("all of the above": every
# folder of a row before it); libc, libbpf and the like are not folders of
# the table.  The state the compiler's passes share (compiler/passes.h) is
# for compiler/ and probes/; the runtime calls compiler/compiler.h.  And
# base/alloc.h's one out-of-memory policy is every folder's: no source
# calls malloc, calloc, realloc, strdup, strndup or asprintf but
# base/alloc.c, and the clang wrapper (runtime/*.cc), a shared object of
# its own that does not link base/.
cd "$(dirname "$0")/../.."
. tests/lib.sh

# "folder used..." per row, in the table's order
awk -F'|' '
	/^\| folder \| its job \| uses \|/ { on = 1; next }
	on && /^\| ---/ { next }
	on && !/^\|/ { exit }
	on {
		folder = $2; gsub(/[ `\/]/, "", folder)
		gsub(/\([^)]*\)/, "", $4)   # why a folder is used
		line = folder; n = split($4, used, ",")
		for (i = 1; i <= n; i++) {
			u = used[i]; gsub(/^ +| +$/, "", u)
			if (u == "all of the above") line = line above
			else if (u != "") line = line " " u
		}
		print line
		above = above " " folder
	}' docs/architecture.md >"$TMP/layers"
[ -s "$TMP/layers" ] || { fail layers "no table of folders in docs/architecture.md"; exit 0; }
folders=" $(cut -d' ' -f1 "$TMP/layers" | tr '\n' ' ')"

while read -r folder used; do
	bad=()
	for f in "$folder"/*.c "$folder"/*.h "$folder"/*.y "$folder"/*.l "$folder"/*.cc; do
		[ -f "$f" ] || continue
		while read -r inc; do
			layer=${inc%%/*}
			[[ $folders == *" $layer "* ]] || continue   # not a folder of the table
			[ "$layer" = "$folder" ] || [[ " $used " == *" $layer "* ]] || bad+=("$f includes $inc")
		done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
	done
	if [ ${#bad[@]} -eq 0 ]; then
		pass "layers/$folder uses ${used:-no other folder}"
	else
		fail "layers/$folder uses ${used:-no other folder}" "$(printf '%s; ' "${bad[@]}")"
	fi
done <"$TMP/layers"

# the compiler's passes share their state with the probe kinds' hooks alone
outside=$(grep -l '#include "compiler/passes.h"' */*.[chyl] 2>/dev/null | grep -v '^compiler/\|^probes/\|^tests/')
if [ -z "$outside" ]; then
	pass "compiler/passes.h is compiler/'s and probes/' alone"
else
	fail "compiler/passes.h is compiler/'s and probes/' alone" "$(echo $outside)"
fi

allocs=$(grep -nE '\b(malloc|calloc|realloc|reallocarray|strdup|strndup|asprintf|vasprintf)\(' \
	$(cut -d' ' -f1 "$TMP/layers" | sed 's|$|/*.[chyl]|') 2>/dev/null | grep -v '^base/alloc\.c:')
if [ -z "$allocs" ]; then
	pass "allocation through base/alloc.h"
else
	fail "allocation through base/alloc.h" "$(printf '%s\n' "$allocs" | head -10)"
fi
