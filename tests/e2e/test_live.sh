#!/usr/bin/env bash
# The live view (--live) in a real terminal (tmux): one screen redrawn in
# place every interval with each map's rate or percentiles of the interval;
# without a terminal, a plain block an interval; with or without a trace.
source "$(dirname "$0")/../lib.sh"
need_root_bpf live || exit 0
if ! command -v tmux >/dev/null; then
	skip live "needs tmux (the deps step installs it)"
	exit 0
fi
export UT_CACHE_DIR="$TMP/cache"
session=ut-live-$$
trap 'tmux kill-session -t "$session" 2>/dev/null; rm -rf "$TMP"' EXIT
load="$UT_WORKLOADS/nop_firehose --seconds 12 --rate 20000 >/dev/null"

# compiled first, so that the terminal shows the view from its first second
"$UT" -q --summary-only -e 'BEGIN { exit(); }' >/dev/null 2>&1
tmux new-session -d -s "$session" -x 120 -y 30 \
	"'$UT' --live -q -o '$TMP/live.fxt' -c '$load' 2>'$TMP/tmux.err'; echo \"exit \$?\" >'$TMP/tmux.done'; sleep 60"
screen() { tmux capture-pane -p -t "$session"; }
for _ in $(seq 600); do screen | grep -q '^  NOP, inline' && break; sleep 0.1; done
screen >"$TMP/screen1"
sleep 2
screen >"$TMP/screen2"
headers=$(grep -c '^uring-trace [0-9:]*, the last' "$TMP/screen2")
if [ "$headers" -eq 1 ] && grep -Eq '^@requests +/s$' "$TMP/screen2" &&
	grep -Eq '^  NOP, inline +[0-9.]+k?$' "$TMP/screen2" &&
	grep -Eq '^@latency_us +/s +p50 +p99 +p99\.9$' "$TMP/screen2" && grep -Eq '^  NOP +[0-9.]+k? +[0-9]+ +[0-9]+ +[0-9]+$' "$TMP/screen2"
then pass live/terminal_view
else fail live/terminal_view "$headers headers: $(cat "$TMP/screen2")"; fi
[ "$(grep '^uring-trace' "$TMP/screen1")" != "$(grep '^uring-trace' "$TMP/screen2")" ] && pass live/redrawn_in_place \
	|| fail live/redrawn_in_place "the same screen 2 s later: $(head -2 "$TMP/screen2")"
rate=$(sed -n 's/^  NOP, inline *\([0-9.]*\)k$/\1/p' "$TMP/screen2")
python3 -c 'import sys; sys.exit(not 10 <= float(sys.argv[1]) <= 30)' "${rate:-0}" && pass live/rate_a_second \
	|| fail live/rate_a_second "NOP ${rate:-?}k/s for a load of 20k/s"
for _ in $(seq 300); do [ -s "$TMP/tmux.done" ] && break; sleep 0.1; done
[ "$(cat "$TMP/tmux.done")" = "exit 0" ] && "$UT" stats "$TMP/live.fxt" | grep -q '^errors: 0$' \
	&& pass live/with_a_trace || fail live/with_a_trace "$(cat "$TMP/tmux.done" "$TMP/tmux.err")"

# not a terminal: a plain block an interval, and the summary at the end
"$UT" --live=500ms -q --summary-only -c "$UT_WORKLOADS/nop_firehose --seconds 3 --rate 20000 >/dev/null" \
	>"$TMP/plain.out" 2>&1
# (no trace: the headline's rate is of the records the reader gets, not
# of events it would have written; a loaded machine, sanitized, may draw
# an interval late: "the last 0.6 s")
blocks=$(grep -c '^uring-trace [0-9:]*, the last [0-9.]* s: [0-9.]*[kM]* records/s to the reader' "$TMP/plain.out")
if [ "$blocks" -ge 4 ] && ! grep -q $'\033' "$TMP/plain.out" && grep -q '^@requests\[NOP, inline\]: ' "$TMP/plain.out"
then pass live/plain_blocks
else fail live/plain_blocks "$blocks blocks: $(head -20 "$TMP/plain.out")"; fi
