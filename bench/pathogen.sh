#!/usr/bin/env bash
# bench/pathogen.sh: the doctor against pathologies injected by a program
# nobody here wrote: uringscope's test/pathology/pathogen.c (fetch
# github:rch0wdhury/uringscope; see ../shared/notes/peers.md).  Not part
# of `make test`; needs root and liburing-dev.
#
#   bench/pathogen.sh PATH/TO/pathogen.c [SCENARIO...]
#
# Each scenario runs under `uring-trace --summary-only` (with --check for
# the buffer hazards); the table gives what pathogen says it injected (its
# GROUND-TRUTH "expect" line) and the findings uring-trace made.
set -u
src=${1:?usage: bench/pathogen.sh PATH/TO/pathogen.c [SCENARIO...]}
shift
here=$(cd "$(dirname "$0")/.." && pwd)
UT=${UT:-$here/build/uring-trace}
out=$(mktemp -d /tmp/pathogen.XXXXXX)
cc -O2 -o "$out/pathogen" "$src" -luring || exit 1
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=("punt 2000" "nobatch 3000" "overflow 1000" "errors 500" "leak 16 5"
	"sqpoll-stall 6" "worker-storm 64" "uaf-unmap" "uaf-reg" "uaf-reg-lifetime" "reap-lag 800")
printf '| scenario | injected (its expect line) | uring-trace findings |\n|---|---|---|\n'
for s in "${scenarios[@]}"; do
	name=${s%% *}
	check=
	case $name in uaf-*) check=--check ;; esac
	timeout 120 "$UT" -q --summary-only $check --json "$out/$name.json" -c "$out/pathogen $s" \
		>"$out/$name.out" 2>"$out/$name.err"
	python3 - "$out/$name.json" "$out/$name.out" "$s" "$check" <<'PY'
import json, sys
path, log, scenario, check = sys.argv[1:]
expect = " ".join(l.split(None, 1)[1].strip() for l in open(log) if l.startswith("GROUND-TRUTH expect="))
try:
    found = json.load(open(path)).get("findings", [])
    named = "; ".join(f'{f["severity"]} {f["tag"]} {f["key"]} x{f["count"]}' for f in found) or "none"
except Exception as e:
    named = f"no summary ({e})"
print(f"| {scenario} {check} | {expect} | {named} |")
PY
done
echo "(outputs in $out)" >&2
