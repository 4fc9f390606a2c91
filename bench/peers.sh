#!/usr/bin/env bash
# bench/peers.sh: what tracing io_uring costs a workload, for uring-trace and
# its peers.  Not part of `make test`; needs root.
#
# Workloads (each pinned to one CPU, CPU 0 then CPU 1):
#   nop        build/workloads/nop_firehose (batches of 32 nops)
#   fio_tmpfs  fio ioengine=io_uring, 4 KiB random reads, buffered, file on /dev/shm
#   fio_loop   fio ioengine=io_uring, 4 KiB random reads, O_DIRECT, on a loop
#              device backed (direct-io) by a file in $LOOP_DIR (/dev/shm:
#              no disk under it, so the tracer's cost is not hidden in waits)
# Tracers ("peers"), each started before and stopped after one workload run:
#   none             untraced
#   bpftrace_count   bpftrace: @[probe] = count() on tracepoint:io_uring:*
#   bpftrace_print   bpftrace: one printf line per io_uring event, to /dev/null
#   perf_record      perf record -a -e 'io_uring:*' to a file in $OUT
#   uring_trace      $UT -o $OUT/ut.fxt (default script: every io_uring
#                    tracepoint and syscall, recorded), only if $UT is set and
#                    the tool attaches within 30 s; otherwise skipped.  Waited
#                    for by its "tracing; Ctrl-C to stop" line on stderr; its
#                    "N events, M lost" exit line gives events and losses.
#   uring_trace_summary  $UT -v --summary-only: no trace, the trace's
#                    constructs compiled out, the maps where the trace has them
#   uring_trace_summary_kernel  $UT -v --summary-only --all-in-kernel: the
#                    same with every map in the kernel (nothing sent)
#   uringscope       $USCOPE -a: uringscope's in-kernel aggregate mode (a C/libbpf
#                    io_uring tool, /work/shared/notes/peers.md), if $USCOPE is set
#                    or uringscope is on the PATH; otherwise skipped
#   uringscope_trace $USCOPE -a --trace $OUT/us.json: the same with its
#                    per-request timeline (Perfetto JSON)
#   uring_trace_summary_base  uring_trace_summary run by $UT_BASE
#   uring_trace_base the same run by $UT_BASE: another build (the one before a
#                    change), compared in the same rounds
#   uring_trace_noreaps  the same with --reaps=0 (no reaped-completion marks)
#   uring_trace_nosched  the same with --sched=0 (no scheduling records; the
#                    scheduler's probes are not attached)
#   uring_trace_interpreted  the same with UT_INTERPRET=1 (the reader
#                    interprets the user side instead of running it compiled)
#   uring_trace_kernel   the same with --all-in-kernel (every statement and map
#                    in BPF, none in the reader: before split execution)
#   uring_trace_ring     the same with --ring 5s (the flight recorder: the
#                    last 5 s kept in memory, written at the end)
#   ut_NAME          $UT with bench/content/NAME.ut: the content ladder, parts
#                    of the default script's work alone (see that folder)
# A round runs the workload untraced and then under each tracer; the ratio is
# throughput under the tracer / untraced throughput of the same round.  The
# summary gives medians over the rounds.  Tracer CPU time and max RSS are read
# from /proc/<tracer pid> over the workload's run (attach and detach excluded).
#
# Environment: DURATION (s per run, default 3), ROUNDS (default 3), CPUS
# ("0 1"), WORKLOADS ("nop fio_tmpfs fio_loop"), TRACERS (default all),
# UT (uring-trace binary), USCOPE (uringscope binary), UT_BASE (uring_trace_base's), UT_WORKLOADS (workload dir), OUT (results dir),
# WAIT_QUIET (s to wait for other processes' tracers to detach before each
# round; default 0: warn and go on), LOOP_DIR (/dev/shm), BPF_STATS (1: turn
# on kernel.bpf_stats_enabled and report the BPF time of the tracer's
# programs per operation, from their run_time_ns; the stats cost time of
# their own, so throughput is better measured without them; BPF time is
# reported too whenever they are on, whoever turned them on).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=${UT_WORKLOADS:-$ROOT/build/workloads}
DURATION=${DURATION:-3}
ROUNDS=${ROUNDS:-3}
CPUS=${CPUS:-"0 1"}
WORKLOADS=${WORKLOADS:-"nop fio_tmpfs fio_loop"}
TRACERS=${TRACERS:-"bpftrace_count bpftrace_print perf_record uring_trace"}
OUT=${OUT:-/tmp/ut-peers.$$}
UT=${UT:-}
USCOPE=${USCOPE:-$(command -v uringscope || true)}
CLK_TCK=$(getconf CLK_TCK)
mkdir -p "$OUT"
RESULTS=$OUT/results.tsv
SHM_FILE=/dev/shm/ut-peers.dat
LOOP_DIR=${LOOP_DIR:-/dev/shm}
LOOP_IMG=$LOOP_DIR/ut-peers-loop.img
BPF_STATS=${BPF_STATS:-0}
LOOP_DEV=
TRACER_PID=

log() { echo "peers: $*" >&2; }
source "$ROOT/bench/tracers.sh"

cleanup() {
  [ -n "$TRACER_PID" ] && kill -INT "$TRACER_PID" 2>/dev/null && wait "$TRACER_PID" 2>/dev/null
  [ -n "$LOOP_DEV" ] && losetup -d "$LOOP_DEV"
  rm -f "$SHM_FILE" "$LOOP_IMG" "$OUT"/perf.data* "$OUT"/ut.fxt "$OUT"/us.json
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 1; }
[ -x "$W/nop_firehose" ] || { log "no $W/nop_firehose (make build/workloads/nop_firehose)"; exit 1; }

# ---- workloads: each prints its throughput (ops/s or IOPS) ------------------
fio_iops() { python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))'; }

run_workload() { # NAME CPU
  case $1 in
    nop)
      "$W/nop_firehose" --cpu "$2" --seconds "$DURATION" |
        python3 -c 'import json,sys; print(round(json.load(sys.stdin)["ops_per_sec"]))' ;;
    fio_tmpfs)
      fio --name=tmpfs --filename="$SHM_FILE" --size=256M --ioengine=io_uring --rw=randread \
          --bs=4k --iodepth=16 --time_based --runtime="$DURATION" --cpus_allowed="$2" \
          --output-format=json 2>/dev/null | fio_iops ;;
    fio_loop)
      fio --name=loop --filename="$LOOP_DEV" --ioengine=io_uring --direct=1 --rw=randread \
          --bs=4k --iodepth=16 --time_based --runtime="$DURATION" --cpus_allowed="$2" \
          --output-format=json 2>/dev/null | fio_iops ;;
  esac
}

setup_workloads() {
  if [[ " $WORKLOADS " == *" fio_tmpfs "* ]]; then
    # Lay the file out once so no run pays for it.
    fio --name=layout --filename="$SHM_FILE" --size=256M --rw=write --bs=1M >/dev/null 2>&1
  fi
  if [[ " $WORKLOADS " == *" fio_loop "* ]]; then
    # Real blocks (not holes) so direct reads reach the virtual disk.
    dd if=/dev/urandom of="$LOOP_IMG" bs=1M count=256 status=none
    sync
    LOOP_DEV=$(losetup -f --show --direct-io=on "$LOOP_IMG" 2>/dev/null ||
               losetup -f --show "$LOOP_IMG")
    log "loop device $LOOP_DEV on $LOOP_IMG"
  fi
}

# ---- tracers -----------------------------------------------------------------
# Tracer attach: wait until its count of perf-event / BPF-link fds is non-zero
# and unchanged for 3 polls (0.1 s apart), at most 10 s.
wait_attached() { # PID
  local last=-1 same=0 n
  for _ in $(seq 100); do
    kill -0 "$1" 2>/dev/null || return 1
    n=$(ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'perf_event\|bpf_link\|bpf-link')
    if [ "$n" -gt 0 ] && [ "$n" -eq "$last" ]; then
      same=$((same + 1)); [ $same -ge 3 ] && return 0
    else
      same=0
    fi
    last=$n
    sleep 0.1
  done
  return 1
}

start_tracer() { # NAME LOG; sets TRACER_PID, returns 1 if it did not attach
  case $1 in
    bpftrace_count)
      bpftrace -e 'tracepoint:io_uring:* { @[probe] = count(); }' >"$2" 2>&1 & ;;
    bpftrace_print)
      bpftrace -e 'tracepoint:io_uring:* { printf("%s %d %d\n", probe, pid, tid); }' \
        >/dev/null 2>"$2" & ;;
    perf_record)
      perf record -a -e 'io_uring:*' -o "$OUT/perf.data" >"$2" 2>&1 & ;;
    uring_trace)
      # Not -q: that would drop the "N events, M lost" line at exit.  stderr
      # is a file, so there is no live status line.  Summary (stdout) dropped.
      # -v: the probe hits the kernel sent (hits/op in the summary).
      "$UT" -v -o "$OUT/ut.fxt" >/dev/null 2>"$2" & ;;
    uring_trace_summary)
      "$UT" -v --summary-only >/dev/null 2>"$2" & ;;
    uring_trace_summary_kernel)
      "$UT" -v --summary-only --all-in-kernel >/dev/null 2>"$2" & ;;
    uringscope)
      "$USCOPE" -a >"$2" 2>&1 & ;;
    uringscope_trace)
      "$USCOPE" -a --trace "$OUT/us.json" >"$2" 2>&1 & ;;
    uring_trace_base)
      "$UT_BASE" -v -o "$OUT/ut.fxt" >/dev/null 2>"$2" & ;;
    uring_trace_summary_base)
      "$UT_BASE" -v --summary-only >/dev/null 2>"$2" & ;;
    uring_trace_noreaps)
      "$UT" --reaps=0 -o "$OUT/ut.fxt" >/dev/null 2>"$2" & ;;
    uring_trace_nosched)
      "$UT" --sched=0 -o "$OUT/ut.fxt" >/dev/null 2>"$2" & ;;
    uring_trace_interpreted)
      UT_INTERPRET=1 "$UT" -o "$OUT/ut.fxt" >/dev/null 2>"$2" & ;;
    uring_trace_kernel)
      "$UT" --all-in-kernel -o "$OUT/ut.fxt" >/dev/null 2>"$2" & ;;
    uring_trace_ring)
      "$UT" --ring 5s -o "$OUT/ut.fxt" >/dev/null 2>"$2" & ;;
    ut_*)
      "$UT" -o "$OUT/ut.fxt" "$ROOT/bench/content/${1#ut_}.ut" >/dev/null 2>"$2" & ;;
  esac
  TRACER_PID=$!
  case $1 in
    uring_trace*|ut_*) wait_line "$TRACER_PID" "$2" 'tracing[ (a-z)]*; Ctrl-C to stop' ;;
    *) wait_attached "$TRACER_PID" ;;
  esac
}

cpu_ticks() { # PID: utime + stime of the whole process
  sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'
}

max_rss_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

# Nanoseconds its BPF programs ran so far (kernel.bpf_stats_enabled): the
# run_time_ns of the programs whose fds it holds (/proc/PID/fdinfo).
bpf_run_ns() { # PID
  local f
  for f in /proc/"$1"/fdinfo/*; do
    grep -h '^run_time_ns:' "$f" 2>/dev/null
  done | awk '{ s += $2 } END { printf "%.0f\n", s }'
}

# Events the tracer saw, when it says.
tracer_events() { # NAME LOG
  case $1 in
    bpftrace_count) awk -F': ' '/^@\[/ { s += $2 } END { print s + 0 }' "$2" ;;
    perf_record) sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$2" | tail -1 ;;
    uringscope*) # its counts of submissions and completions (not its events)
      sed -n 's/^submissions: *\([0-9]*\) *completions: *\([0-9]*\).*/\1 \2/p' "$2" |
        tail -1 | awk '{ print $1 + $2 }' ;;
    uring_trace*|ut_*) sed -n 's/^uring-trace: \([0-9]*\) events, [0-9]* lost.*/\1/p' "$2" | tail -1 ;;
  esac
}

# Probe hits the kernel sent or lost (uring-trace -v), over the tracer's
# whole run.
tracer_hits() { # NAME LOG
  sed -n 's/^uring-trace: the kernel sent \([0-9]*\) probe hits and lost \([0-9]*\).*/\1 \2/p' "$2" |
    tail -1 | awk '{ print $1 + $2 }'
}

tracer_note() { # NAME LOG: lost events and the like
  case $1 in
    bpftrace_print) awk '/Lost [0-9]+ events/ { s += $2 } END { if (s) print "lost=" s }' "$2" ;;
    perf_record) grep -o 'lost [0-9]* chunks\|[0-9]* lost samples' "$2" | head -1 | tr ' ' '_' ;;
    uringscope*) sed -n 's/^uringscope: \([0-9]*\) trace events dropped.*/dropped=\1/p' "$2" | tail -1 ;;
    uring_trace*|ut_*)
      sed -n 's/^uring-trace: [0-9]* events, \([0-9]*\) lost, \([0-9]*\) requests shed.*/lost=\1 shed=\2/p
              t
              s/^uring-trace: [0-9]* events, \([0-9]*\) lost.*/lost=\1/p' "$2" | tail -1 ;;
  esac
}

# Other tracers on the machine (any process holding perf-event or BPF-link
# fds that this script did not start) slow every workload, traced or not, and
# make the ratios meaningless: name them, and with WAIT_QUIET=N wait up to N s
# for them to go away.
foreign_tracers() {
  local p n
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$p" = "$$" ] || [ "$p" = "${TRACER_PID:-x}" ] && continue
    n=$(ls -l "/proc/$p/fd" 2>/dev/null | grep -c 'perf_event\|bpf_link\|bpf-link')
    [ "$n" -gt 0 ] && echo "$p($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | head -c 60 | sed 's/ *$//'): $n fds)"
  done
}
check_quiet() { # WHEN
  local f waited=0
  while f=$(foreign_tracers); [ -n "$f" ]; do
    if [ "$waited" -ge "${WAIT_QUIET:-0}" ]; then
      log "WARNING ($1): other tracers attached, results are disturbed: $f"
      echo "# WARNING ($1): other tracers attached: $f" >>"$OUT/warnings.txt"
      return 1
    fi
    sleep 5; waited=$((waited + 5))
  done
  return 0
}

# ---- main loop ----------------------------------------------------------------
if [[ " $TRACERS " == *" uringscope"* ]] && { [ -z "$USCOPE" ] || [ ! -x "$USCOPE" ]; }; then
  log "uringscope skipped: USCOPE not set and no uringscope on the PATH"
  TRACERS=$(echo " $TRACERS " | sed 's/ uringscope_trace / /; s/ uringscope / /')
fi
# uring-trace's tracers tried once first: a compile fills its cache, so that
# no round waits for clang (--summary-only's program is another compile).
for probe in uring_trace uring_trace_summary uring_trace_summary_kernel uring_trace_summary_base; do
  [[ " $TRACERS " == *" $probe "* ]] || continue
  bin=$UT; [ "$probe" = uring_trace_summary_base ] && bin=${UT_BASE:-}
  if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    log "$probe skipped: UT (or UT_BASE) not set or not executable"
    TRACERS=$(echo " $TRACERS " | sed "s/ $probe / /")
  elif ! start_tracer "$probe" "$OUT/ut-probe.log"; then
    log "$probe skipped: it did not start: $(head -c 300 "$OUT/ut-probe.log")"
    stop_tracer
    TRACERS=$(echo " $TRACERS " | sed "s/ $probe / /")
  else
    stop_tracer
  fi
done
setup_workloads
printf 'cpu\tworkload\tround\ttracer\tthroughput\tevents\ttracer_cpu_s\tmax_rss_kb\tbpf_ns\thits\tnote\n' >"$RESULTS"
if [ "$BPF_STATS" = 1 ]; then
  stats_before=$(sysctl -n kernel.bpf_stats_enabled)
  sysctl -q kernel.bpf_stats_enabled=1
  trap 'sysctl -q kernel.bpf_stats_enabled="$stats_before"; cleanup' EXIT
fi
start_time=$SECONDS
for cpu in $CPUS; do
  for workload in $WORKLOADS; do
    for round in $(seq "$ROUNDS"); do
      check_quiet "cpu $cpu $workload round $round"
      tp=$(run_workload "$workload" "$cpu")
      printf '%s\t%s\t%s\tnone\t%s\t\t\t\t\t\t\n' "$cpu" "$workload" "$round" "$tp" >>"$RESULTS"
      log "cpu $cpu $workload round $round: untraced $tp"
      for tracer in $TRACERS; do
        tlog="$OUT/$tracer.$cpu.$workload.$round.log"
        # other helpers' tracers come and go: each run waits for a quiet machine
        check_quiet "cpu $cpu $workload round $round $tracer"
        echo "$cpu $workload $round $tracer load $(cut -d' ' -f1-3 /proc/loadavg)" \
          "bpf_stats_enabled=$(sysctl -n kernel.bpf_stats_enabled)" >>"$OUT/load.txt"
        if ! start_tracer "$tracer" "$tlog"; then
          log "$tracer did not attach: $(head -c 200 "$tlog")"
          stop_tracer
          printf '%s\t%s\t%s\t%s\t\t\t\t\t\t\tno_attach\n' "$cpu" "$workload" "$round" "$tracer" >>"$RESULTS"
          continue
        fi
        t0=$(cpu_ticks "$TRACER_PID")
        b0=$(bpf_run_ns "$TRACER_PID")
        tp=$(run_workload "$workload" "$cpu")
        b1=$(bpf_run_ns "$TRACER_PID")
        t1=$(cpu_ticks "$TRACER_PID")
        bpf_ns=
        # (also when someone else turned the stats on: they cost the same)
        [ "$BPF_STATS" = 1 ] || [ "$(sysctl -n kernel.bpf_stats_enabled)" = 1 ] && bpf_ns=$((b1 - b0))
        rss=$(max_rss_kb "$TRACER_PID")
        stop_tracer
        cpu_s=$(awk -v a="${t0:-0}" -v b="${t1:-0}" -v hz="$CLK_TCK" 'BEGIN { printf "%.2f", (b - a) / hz }')
        ev=$(tracer_events "$tracer" "$tlog")
        note=$(tracer_note "$tracer" "$tlog")
        hits=$(tracer_hits "$tracer" "$tlog")
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cpu" "$workload" "$round" "$tracer" \
          "$tp" "$ev" "$cpu_s" "$rss" "$bpf_ns" "$hits" "$note" >>"$RESULTS"
        log "cpu $cpu $workload round $round: $tracer $tp events=$ev cpu=${cpu_s}s rss=${rss}kB $note"
        rm -f "$OUT"/perf.data* "$OUT/ut.fxt" "$OUT/us.json"
      done
    done
  done
done
log "measured in $((SECONDS - start_time)) s; raw results in $RESULTS"

# ---- summary: medians over rounds, ratio within each round ---------------------
python3 - "$RESULTS" "$DURATION" <<'EOF' | tee "$OUT/table.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
duration = float(sys.argv[2])
base = {(r["cpu"], r["workload"], r["round"]): float(r["throughput"])
        for r in rows if r["tracer"] == "none" and r["throughput"]}
groups = {}
for r in rows:
    groups.setdefault((r["cpu"], r["workload"], r["tracer"]), []).append(r)
def med(values, fmt):
    values = [v for v in values if v is not None]
    return fmt.format(statistics.median(values)) if values else "-"
def num(text):
    return float(text) if text not in ("", None) else None
print("| cpu | workload | tracer | throughput (median) | ratio to untraced | events/s | tracer CPU s (per %gs run) | tracer CPU ns/event | BPF ns/op | hits/op | tracer max RSS MB | notes |" % duration)
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for (cpu, workload, tracer), rs in groups.items():
    tps = [num(r["throughput"]) for r in rs]
    ratios = [num(r["throughput"]) / base[(cpu, workload, r["round"])]
              for r in rs if num(r["throughput"]) and base.get((cpu, workload, r["round"]))]
    events = [num(r["events"]) / duration if num(r["events"]) is not None else None for r in rs]
    rss = [num(r["max_rss_kb"]) for r in rs if num(r["max_rss_kb"])]
    notes = sorted({r["note"] for r in rs if r["note"]})
    per_event = [num(r["tracer_cpu_s"]) * 1e9 / num(r["events"]) for r in rs
                 if num(r["tracer_cpu_s"]) is not None and num(r["events"])]
    per_op = [num(r["bpf_ns"]) / (num(r["throughput"]) * duration) for r in rs
              if num(r["bpf_ns"]) is not None and num(r["throughput"])]
    # the hits of the tracer's whole run (a little longer than the workload's)
    hits_op = [num(r["hits"]) / (num(r["throughput"]) * duration) for r in rs
               if num(r["hits"]) is not None and num(r["throughput"])]
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        cpu, workload, tracer, med(tps, "{:,.0f}"), med(ratios, "{:.2f}"), med(events, "{:,.0f}"),
        med([num(r["tracer_cpu_s"]) for r in rs], "{:.2f}") if tracer != "none" else "-",
        med(per_event, "{:,.0f}"), med(per_op, "{:,.0f}"), med(hits_op, "{:.2f}"),
        "%.0f" % (max(rss) / 1024) if rss else "-", " ".join(notes)))
EOF
