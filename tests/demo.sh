#!/usr/bin/env bash
# The main job on the bundled workload: trace uring_paths with the default
# script, write demo.fxt, print the summary and how to open the trace.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "uring-trace needs root (CAP_BPF and CAP_PERFMON) to load its probes: run 'sudo make demo'" >&2
	exit 1
fi
out=${DEMO_TRACE:-demo.fxt}
echo "== tracing the demo workload (build/workloads/uring_paths) with scripts/io_uring.ut"
build/uring-trace -o "$out" -c "build/workloads/uring_paths --delay-ms 0 > /dev/null"
echo
echo "== what the trace holds (uring-trace stats $out)"
build/uring-trace stats "$out" >"$out.stats"
sed -n '1,/^events by name/{/^events by name/!p}' "$out.stats"
grep -E '^(flows|processes|threads):' "$out.stats"
grep -E '^  pid [0-9]+ "ring ' "$out.stats"
rm -f "$out.stats"
echo
echo "Open $out at https://ui.perfetto.dev (Open trace file): each ring is a group"
echo "with its requests as spans and counters; click a request slice on the"
echo "uring_paths or iou-wrk thread to follow its arrows from submit to completion."
