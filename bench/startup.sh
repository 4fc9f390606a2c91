#!/usr/bin/env bash
# bench/startup.sh: start-up (start to attached) and exit (SIGINT to process
# exit) of uring-trace against bpftrace on the same script shape, in the same
# run.  Not part of `make test`; needs root.
#
# Scripts (each tool gets the same probes):
#   trivial   one tracepoint, counted:
#               tracepoint:syscalls:sys_enter_getpid { @n = count(); }
#   io_uring  uring-trace: the default scripts/io_uring.ut (17 io_uring
#             tracepoints + 6 io_uring syscall tracepoints, recording);
#             bpftrace: the same 23 tracepoints, counted per probe.
#   io_uring_summary  uring-trace --summary-only on the default script (the
#             trace compiled out, the maps in the kernel); bpftrace as for
#             io_uring.
# Conditions:
#   ut_cold   uring-trace with UT_CACHE_DIR a fresh empty directory (dumps
#             vmlinux.h, builds the PCH, compiles the object)
#   ut_warm   uring-trace with that directory populated (the compiled program
#             from cache: runtime/program_cache.h)
#   bpftrace  bpftrace (no cache: every start compiles)
# One round runs every (script, condition) once, in that order; ROUNDS rounds
# (default 5); medians are reported.  Times are CLOCK_MONOTONIC in the
# harness (python3): start = from just before fork/exec until the tool says it
# is attached ("uring-trace: tracing; Ctrl-C to stop" on stderr;
# "Attaching N probes..." on stdout for bpftrace, which bpftrace prints
# *before* it attaches, so the time until its N perf-event fds exist is also
# recorded as fds_ms); exit = from kill(SIGINT), sent 0.3 s after attach,
# until waitpid returns (includes detach, drain, summary output).
# uring-trace runs with -v, and its "BPF object ... (N ms)" and "detached N
# links (N slow) in X ms" lines are recorded too.
#
# Environment: UT (default build/uring-trace), ROUNDS (5), OUT (results dir),
# SCRIPTS (default "trivial io_uring io_uring_summary"), CONDS (default
# "ut_cold ut_warm bpftrace").
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
UT=${UT:-$ROOT/build/uring-trace}
ROUNDS=${ROUNDS:-5}
OUT=${OUT:-/tmp/ut-startup.$$}
[ "$(id -u)" -eq 0 ] || { echo "startup: needs root" >&2; exit 1; }
[ -x "$UT" ] || { echo "startup: no $UT" >&2; exit 1; }
command -v bpftrace >/dev/null || { echo "startup: no bpftrace" >&2; exit 1; }
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/ut-startup-work.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

python3 - "$UT" "$ROUNDS" "$OUT" "$WORK" "${SCRIPTS:-trivial io_uring io_uring_summary}" \
  "${CONDS:-ut_cold ut_warm bpftrace}" <<'EOF'
import os, re, signal, statistics, subprocess, sys, threading, time
ut, rounds, out, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
chosen, conds = sys.argv[5].split(), sys.argv[6].split()

IO_TPS = ["io_uring:" + n for n in (
    "io_uring_create io_uring_submit_req io_uring_req_failed io_uring_file_get io_uring_defer "
    "io_uring_poll_arm io_uring_task_add io_uring_queue_async_work io_uring_link "
    "io_uring_fail_link io_uring_complete io_uring_cqring_wait io_uring_cqe_overflow "
    "io_uring_register io_uring_task_work_run io_uring_local_work_run io_uring_short_write").split()]
SYS_TPS = ["syscalls:sys_%s_io_uring_%s" % (d, c) for c in ("setup", "enter", "register")
           for d in ("enter", "exit")]
TRIVIAL = "tracepoint:syscalls:sys_enter_getpid { @n = count(); }"
BT_IO = ",\n".join("tracepoint:" + t for t in IO_TPS + SYS_TPS) + " { @[probe] = count(); }"
SCRIPTS = {  # name: (uring-trace args, bpftrace program, probes)
    "trivial": (["-e", TRIVIAL], TRIVIAL, 1),
    "io_uring": ([], BT_IO, len(IO_TPS) + len(SYS_TPS)),
    "io_uring_summary": (["--summary-only"], BT_IO, len(IO_TPS) + len(SYS_TPS)),
}
SCRIPTS = {name: SCRIPTS[name] for name in chosen}
warm_cache = os.path.join(work, "warm-cache")

def perf_fds(pid):
    n = 0
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                t = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                continue
            if "perf_event" in t:
                n += 1
    except OSError:
        pass
    return n

def run(script, cond):
    ut_args, bt_prog, nprobes = SCRIPTS[script]
    env = dict(os.environ)
    if cond == "bpftrace":
        cmd, ready = ["bpftrace", "-e", bt_prog], re.compile(r"^Attaching \d+ probe")
    else:
        cache = warm_cache if cond == "ut_warm" else os.path.join(work, "cold-%d" % time.monotonic_ns())
        env["UT_CACHE_DIR"] = cache
        cmd = [ut, "-v", "-o", os.path.join(work, "t.fxt")] + ut_args
        ready = re.compile(r"^uring-trace: tracing( \(summary only\))?; Ctrl-C to stop")
    lines = []
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                         cwd=work, text=True, bufsize=1)
    start_ms = None
    for line in p.stdout:
        lines.append(line)
        if ready.search(line):
            start_ms = (time.monotonic() - t0) * 1e3
            break
    if start_ms is None:
        p.wait()
        sys.exit("startup: %s %s did not attach:\n%s" % (script, cond, "".join(lines[-20:])))
    # perf-event fds in place (bpftrace says "Attaching" before it attaches;
    # uring-trace says "tracing" after, and its BPF links are no perf events)
    deadline = time.monotonic() + 10 if cond == "bpftrace" else 0
    while perf_fds(p.pid) < nprobes and time.monotonic() < deadline:
        time.sleep(0.0005)
    fds_ms = (time.monotonic() - t0) * 1e3
    drain = threading.Thread(target=lambda: lines.extend(p.stdout))
    drain.start()
    time.sleep(0.3)
    t2 = time.monotonic()
    os.kill(p.pid, signal.SIGINT)
    note = ""
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        # bpftrace 0.17 sometimes misses a SIGINT (it stays in epoll_wait):
        # count it, leave it out of the medians, and send SIGINT again.
        note = "sigint_ignored"
        while True:
            os.kill(p.pid, signal.SIGINT)
            try:
                p.wait(timeout=1)
                break
            except subprocess.TimeoutExpired:
                pass
    exit_ms = (time.monotonic() - t2) * 1e3
    drain.join()
    text = "".join(lines)
    m = re.search(r"BPF object (from cache|compiled)[^(]*\((\d+) ms\)", text)
    obj = "%s %s ms" % (m.group(1).replace("from ", ""), m.group(2)) if m else \
        "program cached" if "compiled program from the cache" in text else ""
    m = re.search(r"detached (\d+) links \((\d+) slow\) in ([\d.]+) ms", text)
    detach = m.group(3) if m else ""
    if cond == "ut_cold":
        subprocess.run(["rm", "-rf", cache])
    return start_ms, fds_ms, exit_ms if not note else "", obj, detach, note

# Populate the warm cache once (not measured).
for script in SCRIPTS:
    env = dict(os.environ, UT_CACHE_DIR=warm_cache)
    subprocess.run([ut, "--emit-c"] + SCRIPTS[script][0], env=env, stdout=subprocess.DEVNULL)
    run(script, "ut_warm")

rows = []
with open(os.path.join(out, "results.tsv"), "w") as f:
    f.write("round\tscript\tcondition\tstart_ms\tfds_ms\texit_ms\tobject\tdetach_ms\tnote\n")
    for r in range(1, rounds + 1):
        for script in SCRIPTS:
            for cond in conds:
                s, fd, e, obj, det, note = run(script, cond)
                rows.append((script, cond, s, fd, e, det, note))
                es = "%.1f" % e if e != "" else ""
                f.write("%d\t%s\t%s\t%.1f\t%.1f\t%s\t%s\t%s\t%s\n" % (r, script, cond, s, fd, es, obj, det, note))
                f.flush()
                print("startup: round %d %-8s %-8s start %7.1f ms  fds %7.1f ms  exit %7s ms  %s %s %s"
                      % (r, script, cond, s, fd, es, obj, ("detach " + det + " ms") if det else "", note),
                      file=sys.stderr)

def med(script, cond, i):
    v = [row[i] for row in rows if row[0] == script and row[1] == cond and row[i] != ""]
    return statistics.median(float(x) for x in v) if v else None

with open(os.path.join(out, "table.md"), "w") as f:
    def p(s=""):
        print(s); f.write(s + "\n")
    p("| script | condition | start to attached (median ms) | min-max | perf fds in place (ms) | exit after SIGINT (median ms) | min-max | uring-trace detach (median, min-max ms) | notes |")
    p("|---|---|---|---|---|---|---|---|---|")
    for script in SCRIPTS:
        for cond in conds:
            rs = [row for row in rows if row[0] == script and row[1] == cond]
            ex = [r[4] for r in rs if r[4] != ""]
            dets = [float(r[5]) for r in rs if r[5] != ""]
            lost = sum(1 for r in rs if r[6])
            p("| %s | %s | %.0f | %.0f-%.0f | %.0f | %s | %s | %s | %s |" % (
                script, cond, med(script, cond, 2), min(r[2] for r in rs), max(r[2] for r in rs),
                med(script, cond, 3), "%.0f" % statistics.median(ex) if ex else "-",
                "%.0f-%.0f" % (min(ex), max(ex)) if ex else "-",
                "%.0f (%.0f-%.0f)" % (statistics.median(dets), min(dets), max(dets)) if dets else "-",
                "SIGINT ignored in %d of %d runs (left out)" % (lost, len(rs)) if lost else ""))
    p()
    p("| script | ut_cold / bpftrace start | ut_warm / bpftrace start (bpftrace fds in place) | ut exit / bpftrace exit |")
    p("|---|---|---|---|")
    for script in SCRIPTS:
        bs, bf, be = med(script, "bpftrace", 2), med(script, "bpftrace", 3), med(script, "bpftrace", 4)
        def ratio(a, b):
            return "%.2f" % (a / b) if a is not None and b else "-"
        p("| %s | %s | %s (%s) | %s |" % (
            script, ratio(med(script, "ut_cold", 2), bs), ratio(med(script, "ut_warm", 2), bs),
            ratio(med(script, "ut_warm", 2), bf), ratio(med(script, "ut_warm", 4), be)))
EOF
