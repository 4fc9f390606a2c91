#!/usr/bin/env bash
# bench/block.sh: what tracing the block layer costs a workload, for
# scripts/block.ut, scripts/iostack.ut and their peers.  Not part of
# `make test`; needs root and fio.
#
# Workloads: fio, 4 KiB random reads with O_DIRECT, one job pinned to CPU 0:
#   psync_loop    ioengine=psync (queue depth 1) on a loop device
#   uring_loop    ioengine=io_uring, iodepth 16, on the loop device
#   psync_root    ioengine=psync on a 256 MiB file under /var/tmp (the root disk)
#   uring_root    ioengine=io_uring, iodepth 16, on that file
# The loop device is backed by a file in /var/tmp with direct I/O where
# losetup allows it, so its reads reach the root disk too.
# Tracers, each started before and stopped after one workload run, all
# system-wide (no -p; every block request of the machine):
#   none             untraced
#   block_ut         $UT -o FILE scripts/block.ut (trace and summary)
#   iostack_ut       $UT -o FILE scripts/iostack.ut, if it exists
#   bpftrace_biolat  bpftrace: issue-to-complete latency histogram keyed by
#                    (dev, sector) on the block tracepoints, biolatency's method
#   bcc_biolatency   biolatency-bpfcc (apt bpfcc-tools); bcc compiles against
#                    kernel headers and is recorded as no_attach where they
#                    are missing
# A round runs the workload untraced and then under each tracer; the ratio is
# IOPS under the tracer / untraced IOPS of the same round, and the summary
# gives the median ratio over the rounds.
#
# Environment: DURATION (s per run, default 3), ROUNDS (default 3),
# WORKLOADS, TRACERS (defaults: all), UT (default build/uring-trace),
# OUT (results directory, default /tmp/ut-block-bench.PID).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DURATION=${DURATION:-3}
ROUNDS=${ROUNDS:-3}
WORKLOADS=${WORKLOADS:-"psync_loop uring_loop psync_root uring_root"}
TRACERS=${TRACERS:-"block_ut iostack_ut bpftrace_biolat bcc_biolatency"}
UT=${UT:-$ROOT/build/uring-trace}
OUT=${OUT:-/tmp/ut-block-bench.$$}
mkdir -p "$OUT"
RESULTS=$OUT/results.tsv
DATA_DIR=$(mktemp -d /var/tmp/ut-block-bench.XXXXXX)
LOOP_DEV=
TRACER_PID=

log() { echo "block-bench: $*" >&2; }
source "$ROOT/bench/tracers.sh"

cleanup() {
  [ -n "$TRACER_PID" ] && kill -INT "$TRACER_PID" 2>/dev/null && wait "$TRACER_PID" 2>/dev/null
  [ -n "$LOOP_DEV" ] && losetup -d "$LOOP_DEV"
  rm -rf "$DATA_DIR" "$OUT/trace.fxt"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 1; }
command -v fio >/dev/null || { log "needs fio (apt-get install fio)"; exit 1; }

# ---- workloads: each prints its IOPS ------------------------------------------
run_fio() { # FILE ENGINE
  local depth=1
  [ "$2" = io_uring ] && depth=16
  fio --name=bench --filename="$1" --ioengine="$2" --iodepth=$depth --direct=1 --rw=randread --bs=4k \
      --size=256M --time_based --runtime="$DURATION" --cpus_allowed=0 --output-format=json 2>/dev/null |
    python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))'
}

run_workload() { # NAME
  case $1 in
    psync_loop) run_fio "$LOOP_DEV" psync ;;
    uring_loop) run_fio "$LOOP_DEV" io_uring ;;
    psync_root) run_fio "$DATA_DIR/root.dat" psync ;;
    uring_root) run_fio "$DATA_DIR/root.dat" io_uring ;;
  esac
}

setup_workloads() {
  # real blocks, not holes, so direct reads reach the disk
  dd if=/dev/urandom of="$DATA_DIR/root.dat" bs=1M count=256 status=none
  dd if=/dev/urandom of="$DATA_DIR/loop.img" bs=1M count=256 status=none
  sync
  LOOP_DEV=$(losetup -f --show --direct-io=on "$DATA_DIR/loop.img" 2>/dev/null ||
             losetup -f --show "$DATA_DIR/loop.img")
  log "loop device $LOOP_DEV on $DATA_DIR/loop.img; root-disk file $DATA_DIR/root.dat"
}

# ---- tracers ------------------------------------------------------------------
BIOLAT='tracepoint:block:block_rq_issue { @start[args->dev, args->sector] = nsecs; }
tracepoint:block:block_rq_complete /@start[args->dev, args->sector]/ {
	@usecs = hist((nsecs - @start[args->dev, args->sector]) / 1000);
	delete(@start[args->dev, args->sector]);
}
END { clear(@start); }'

start_tracer() { # NAME LOG; sets TRACER_PID; returns 1 if it did not attach
  case $1 in
    block_ut) "$UT" -o "$OUT/trace.fxt" "$ROOT/scripts/block.ut" >/dev/null 2>"$2" & ;;
    iostack_ut) "$UT" -o "$OUT/trace.fxt" "$ROOT/scripts/iostack.ut" >/dev/null 2>"$2" & ;;
    bpftrace_biolat) bpftrace -e "$BIOLAT" >"$2" 2>&1 & ;;
    bcc_biolatency) biolatency-bpfcc >"$2" 2>&1 & ;;
  esac
  TRACER_PID=$!
  case $1 in
    block_ut | iostack_ut) wait_line "$TRACER_PID" "$2" 'tracing; Ctrl-C to stop' ;;
    bpftrace_biolat) wait_line "$TRACER_PID" "$2" '^Attaching' && sleep 0.5 ;;
    bcc_biolatency) wait_line "$TRACER_PID" "$2" '^Tracing block device' ;;
  esac
}

# uring-trace's exit line: "N events, M lost".
tracer_note() { # NAME LOG
  case $1 in
    block_ut | iostack_ut) sed -n 's/^uring-trace: \([0-9]*\) events, \([0-9]*\) lost.*/events=\1 lost=\2/p' "$2" | tail -1 ;;
  esac
}

# ---- main loop ----------------------------------------------------------------
[ -f "$ROOT/scripts/iostack.ut" ] || TRACERS=${TRACERS/iostack_ut/}
setup_workloads
printf 'workload\tround\ttracer\tiops\tnote\n' >"$RESULTS"
for workload in $WORKLOADS; do
  for round in $(seq "$ROUNDS"); do
    iops=$(run_workload "$workload")
    printf '%s\t%s\tnone\t%s\t\n' "$workload" "$round" "$iops" >>"$RESULTS"
    log "$workload round $round: untraced $iops IOPS"
    for tracer in $TRACERS; do
      tlog=$OUT/$tracer.log
      if ! start_tracer "$tracer" "$tlog"; then
        why=$(grep -v '^\s*$' "$tlog" | grep -m1 -i 'error\|unable\|fail' | head -c 160)
        log "$tracer did not attach: $why"
        stop_tracer
        printf '%s\t%s\t%s\t\tno_attach: %s\n' "$workload" "$round" "$tracer" "$why" >>"$RESULTS"
        continue
      fi
      iops=$(run_workload "$workload")
      stop_tracer
      note=$(tracer_note "$tracer" "$tlog")
      printf '%s\t%s\t%s\t%s\t%s\n' "$workload" "$round" "$tracer" "$iops" "$note" >>"$RESULTS"
      log "$workload round $round: $tracer $iops IOPS $note"
      rm -f "$OUT/trace.fxt"
    done
  done
done

# Median ratio to the untraced run of the same round, per workload and tracer.
python3 - "$RESULTS" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
base = {(r["workload"], r["round"]): float(r["iops"]) for r in rows if r["tracer"] == "none" and r["iops"]}
out = {}
for r in rows:
    key = (r["workload"], r["tracer"])
    if r["tracer"] == "none":
        out.setdefault(key, []).append(float(r["iops"]))
    elif r["iops"] and base.get((r["workload"], r["round"])):
        out.setdefault(key, []).append(float(r["iops"]) / base[(r["workload"], r["round"])])
    else:
        out.setdefault(key, [])
print(f'{"workload":<12} {"tracer":<16} {"median":>10}  rounds')
for (w, t), v in out.items():
    if not v:
        print(f"{w:<12} {t:<16} {'-':>10}  did not attach")
    elif t == "none":
        print(f"{w:<12} {t:<16} {statistics.median(v):>10.0f}  IOPS: {' '.join(f'{x:.0f}' for x in v)}")
    else:
        print(f"{w:<12} {t:<16} {statistics.median(v):>10.3f}  ratios: {' '.join(f'{x:.3f}' for x in v)}")
PY
log "raw results in $RESULTS"
