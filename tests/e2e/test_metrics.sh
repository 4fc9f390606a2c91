#!/usr/bin/env bash
# The metrics endpoint (--metrics) against the real thing: promtool checks
# the text, a Prometheus server (Debian's, installed by the deps step)
# scrapes uring-trace while a workload runs, and its query API answers a
# rate and a histogram_quantile of the script's maps.  Also: a port in use
# is refused with a clear message, the endpoint listens on localhost by
# default, and a client that sends nothing does not hold scrapes or tracing.
source "$(dirname "$0")/../lib.sh"
need_root_bpf metrics || exit 0
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null || ! command -v curl >/dev/null; then
	skip metrics "needs prometheus, promtool and curl (the deps step installs them)"
	exit 0
fi
export UT_CACHE_DIR="$TMP/cache"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port) prom_port=$(free_port)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

# a steady load for the scrapes: nops at 20 k/s for up to a minute (a
# port found free may be taken before the tracer listens, by any
# client's connection on the machine: another is tried then)
for _ in 1 2 3; do
	"$UT" -q --metrics "$port" -o "$TMP/t.fxt" -c "$UT_WORKLOADS/nop_firehose --seconds 60 --rate 20000" \
		>"$TMP/ut.out" 2>"$TMP/ut.err" &
	ut=$!
	for _ in $(seq 300); do
		curl -sf "http://127.0.0.1:$port/metrics" -o "$TMP/first.txt" && break
		kill -0 $ut 2>/dev/null || break
		sleep 0.1
	done
	grep -q "Address already in use" "$TMP/ut.err" || break
	wait $ut
	port=$(free_port)
done
pids+=($ut)
if grep -q '^uring_trace_requests_total{op="NOP",path="inline"} [1-9]' "$TMP/first.txt"; then pass metrics/serves_the_maps
else fail metrics/serves_the_maps "$(head -c 600 "$TMP/first.txt") $(cat "$TMP/ut.err")"; fi
# the tracer's own memory, and with --ring what the window holds of
# --ring-size (a capture left running is watched by them)
rss=$(sed -n 's/^process_resident_memory_bytes //p' "$TMP/first.txt")
if [ "${rss:-0}" -gt 1000000 ] && ! grep -q '^uring_trace_ring_bytes' "$TMP/first.txt"; then pass metrics/resident_memory
else fail metrics/resident_memory "process_resident_memory_bytes ${rss:-none}; $(grep ring_bytes "$TMP/first.txt")"; fi
ring_port=$(free_port)
"$UT" -q --ring 2s --ring-size 16M --metrics "$ring_port" -o "$TMP/ring.fxt" \
	-c "$UT_WORKLOADS/nop_firehose --seconds 4 --rate 50000" >"$TMP/ring.out" 2>"$TMP/ring.err" &
ring_ut=$!
pids+=($ring_ut)
ring_bytes=
for _ in $(seq 100); do
	sleep 0.1
	ring_bytes=$(curl -sf "http://127.0.0.1:$ring_port/metrics" | sed -n 's/^uring_trace_ring_bytes //p')
	[ "${ring_bytes:-0}" -gt 0 ] && break
done
wait $ring_ut
if [ "${ring_bytes:-0}" -gt 0 ] && [ "$ring_bytes" -le $((16 << 20)) ]; then pass metrics/ring_bytes
else fail metrics/ring_bytes "uring_trace_ring_bytes ${ring_bytes:-none} (--ring-size 16M); $(head -3 "$TMP/ring.err")"; fi

promtool check metrics <"$TMP/first.txt" >"$TMP/promtool.out" 2>&1 && pass metrics/promtool_check_metrics \
	|| fail metrics/promtool_check_metrics "$(head -20 "$TMP/promtool.out")"
ss -ltn | grep -q "127.0.0.1:$port " && ! ss -ltn | grep -q "0.0.0.0:$port " && pass metrics/localhost_by_default \
	|| fail metrics/localhost_by_default "$(ss -ltn | grep ":$port ")"

# a port in use: said, exit status 2, nothing traced
"$UT" -q --metrics "$port" -e 'BEGIN { exit(); }' >"$TMP/busy.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "cannot listen on 127.0.0.1 port $port: Address already in use" "$TMP/busy.out" \
	&& pass metrics/port_in_use_refused || fail metrics/port_in_use_refused "rc=$rc $(cat "$TMP/busy.out")"

# clients that connect and send nothing: a scrape still answers, and the
# reader goes on (its events keep growing)
for _ in 1 2 3 4; do
	python3 -c 'import socket, sys, time; s = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); time.sleep(30)' "$port" &
	pids+=($!)
done
sleep 1
events() { curl -sf -m 5 "http://127.0.0.1:$port/metrics" | sed -n 's/^uring_trace_events_total //p'; }
e1=$(events); sleep 1; e2=$(events)
[ -n "$e1" ] && [ -n "$e2" ] && [ "$e2" -gt "$e1" ] && pass metrics/idle_clients_hold_nothing \
	|| fail metrics/idle_clients_hold_nothing "events ${e1:-none} then ${e2:-none}"

# a real Prometheus scrapes it every second; its query API gives a rate of
# the requests and a histogram_quantile of their latency
cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: uring-trace
    static_configs:
      - targets: ['127.0.0.1:$port']
EOF
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address="127.0.0.1:$prom_port" >"$TMP/prometheus.log" 2>&1 &
pids+=($!)
query() {   # PROMQL: the first result's value, or nothing
	curl -sf -G "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" |
		python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
rate= p99=
for _ in $(seq 60); do
	sleep 1
	rate=$(query 'sum(rate(uring_trace_requests_total{op="NOP"}[5s]))' 2>/dev/null)
	p99=$(query 'histogram_quantile(0.99, sum by (le) (rate(uring_trace_latency_seconds_bucket{op="NOP"}[5s])))' 2>/dev/null)
	[ -n "$rate" ] && [ -n "$p99" ] && [ "$rate" != 0 ] && [ "$p99" != NaN ] && break
done
if python3 -c 'import sys; r, q = float(sys.argv[1]), float(sys.argv[2]); sys.exit(not (1000 < r < 1e6 and 0 < q < 1))' \
	"${rate:-0}" "${p99:-0}"; then
	pass metrics/prometheus_scrapes_rate_and_quantile
else
	fail metrics/prometheus_scrapes_rate_and_quantile "rate=${rate:-none} p99=${p99:-none}: $(tail -3 "$TMP/prometheus.log")"
fi
echo "metrics: Prometheus saw $rate NOP requests/s, p99 latency $p99 s"
