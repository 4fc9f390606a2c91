#!/usr/bin/env bash
# The workload programs the other tests trace: each runs briefly, untraced,
# and its JSON report must say it did exactly what it promises.
set -u
source "$(dirname "$0")/../lib.sh"
W=${UT_WORKLOADS:-build/workloads}

# check NAME JSON_FILE PYTHON: runs PYTHON with `d` bound to the parsed JSON;
# the code raises (assert) when something is wrong.
check() {
  local name=$1 file=$2 code=$3 err
  if err=$(python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
$code
" "$file" 2>&1); then
    pass "$name"
  else
    fail "$name" "$(echo "$err" | tail -n 3 | tr '\n' ' ')"
  fi
}

# --- uring_paths -----------------------------------------------------------
if [ -x "$W/uring_paths" ]; then
  if "$W/uring_paths" --json >"$TMP/paths.json" 2>"$TMP/paths.err"; then
    pass uring_paths_runs
  else
    fail uring_paths_runs "exit $?: $(head -c 300 "$TMP/paths.err")"
  fi
  check uring_paths_rings "$TMP/paths.json" '
assert d["ok"] is True
assert d["pid"] > 0 and d["tid"] == d["pid"]
rings = d["rings"]
assert len(rings) == 2
assert rings[0]["ring_fd"] != rings[1]["ring_fd"]
assert rings[0]["sq_entries"] == 64 and rings[1]["sq_entries"] == 32
assert rings[1]["cq_entries"] == 128 and rings[1]["flags"] & 8   # IORING_SETUP_CQSIZE
for r in rings:
    assert r["unexpected_cqes"] == 0
'
  check uring_paths_results "$TMP/paths.json" '
EINVAL, EBADF, ECANCELED = 22, 9, 125
F_MORE = 2
for r in d["rings"]:
    p = r["paths"]
    def res(name, submitted, expected):
        got = p[name]
        assert got["submitted"] == submitted, (name, got)
        assert got["res"] == expected, (name, got["res"], expected)
        assert got["completions"] == len(expected), (name, got)
    res("nop", 8, [0] * 8)
    res("poll", 4, [1] * 4)
    res("async", 4, [4096] * 4)
    res("link", 6, [0] * 6)
    res("invalid", 1, [-EINVAL])
    res("faillink", 2, [-EBADF, -ECANCELED])
    res("multishot", 1, [1, 1, 1, -ECANCELED])
    assert p["multishot"]["cqe_flags"] == [F_MORE, F_MORE, F_MORE, 0]
    res("poll_remove", 1, [0])
'
  "$W/uring_paths" --rings 1 --nops 20 --polls 9 --async 0 --links 5 --invalid 3 \
      --faillinks 4 --multishot 0 >"$TMP/paths2.json" 2>"$TMP/paths2.err"
  check uring_paths_counts "$TMP/paths2.json" '
assert d["ok"] is True
assert len(d["rings"]) == 1
p = d["rings"][0]["paths"]
want = {"nop": 20, "poll": 9, "async": 0, "link": 15, "invalid": 3, "faillink": 8,
        "multishot": 0, "poll_remove": 0}
for name, n in want.items():
    assert p[name]["submitted"] == n and p[name]["completions"] == n, (name, p[name])
# CQEs of a batch come heads first; the index (from user_data) says which is which
f = p["faillink"]
assert sorted(zip(f["index"], f["res"])) == [(i, -9 if i % 2 == 0 else -125) for i in range(8)], f
assert p["invalid"]["res"] == [-22] * 3
'
  if "$W/uring_paths" --nops x >/dev/null 2>&1; then
    fail uring_paths_bad_option "accepted --nops x"
  else
    pass uring_paths_bad_option
  fi
else
  skip uring_paths "no $W/uring_paths"
fi

# --- fileio ----------------------------------------------------------------
if [ -x "$W/fileio" ]; then
  data="$TMP/fileio.data"
  if "$W/fileio" --file "$data" --json >"$TMP/fileio.json" 2>"$TMP/fileio.err"; then
    pass fileio_runs
  else
    fail fileio_runs "exit $?: $(head -c 300 "$TMP/fileio.err")"
  fi
  check fileio_pattern "$TMP/fileio.json" '
import os
assert d["ok"] is True and d["mode"] == "pattern" and d["engine"] == "uring"
st = os.stat(d["path"])
assert (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino) == (d["dev_major"], d["dev_minor"], d["inode"])
ops = d["ops"]
kinds = [o["op"] for o in ops]
assert kinds == ["open"] + ["read"] * 64 + ["close", "open"] + ["write"] * 16 + ["fsync", "close"], kinds
reads = [o for o in ops if o["op"] == "read"]
assert [o["offset"] for o in reads] == [i * 8192 for i in range(64)]
assert all(o["size"] == 4096 and o["res"] == 4096 and o["fd"] == ops[0]["fd"] for o in reads)
writes = [o for o in ops if o["op"] == "write"]
assert [o["offset"] for o in writes] == [64 * 8192 + j * 4096 for j in range(16)]
assert all(o["res"] == 4096 for o in writes)
assert ops[0]["flags"] == ("O_RDONLY|O_DIRECT" if d["direct"] else "O_RDONLY")
assert all(o["res"] == 0 for o in ops if o["op"] in ("fsync", "close"))
'
  "$W/fileio" --file "$data" --engine sync --reads 4 --writes 2 >"$TMP/fileio_sync.json" 2>/dev/null
  check fileio_sync "$TMP/fileio_sync.json" '
assert d["ok"] is True and d["engine"] == "sync"
assert d["prepare"]["bytes_written"] == 0    # the first run left the file long enough
assert [o["op"] for o in d["ops"]].count("read") == 4
assert [o["op"] for o in d["ops"]].count("write") == 2
'
  # Wait mode: the file is open before the fifo releases the reads.
  fifo="$TMP/fileio.fifo"
  "$W/fileio" --file "$data" --reads 8 --wait-fifo "$fifo" >"$TMP/fileio_wait.json" 2>"$TMP/fileio_wait.err" &
  pid=$!
  opened=no
  for _ in $(seq 100); do
    if grep -q "waiting for a byte" "$TMP/fileio_wait.err" 2>/dev/null; then opened=yes; break; fi
    sleep 0.05
  done
  if [ $opened = yes ] && ls -l /proc/$pid/fd 2>/dev/null | grep -q "$data"; then
    pass fileio_wait_opened_first
  else
    fail fileio_wait_opened_first "file not open while waiting"
  fi
  echo go >"$fifo"
  wait $pid
  check fileio_wait "$TMP/fileio_wait.json" '
assert d["ok"] is True and d["mode"] == "wait"
assert [o["op"] for o in d["ops"]] == ["open"] + ["read"] * 8 + ["close"]
'
else
  skip fileio "no $W/fileio"
fi

# --- nop_firehose ----------------------------------------------------------
if [ -x "$W/nop_firehose" ]; then
  "$W/nop_firehose" --count 100000 --cpu 0 >"$TMP/firehose.json" 2>"$TMP/firehose.err"
  check nop_firehose_count "$TMP/firehose.json" '
assert d["ok"] is True
assert d["submitted"] == 100000 and d["completed"] == 100000
assert d["batch"] == 32 and d["cpu"] == 0
assert d["ops_per_sec"] > 0 and d["seconds"] > 0 and d["cpu_seconds"] > 0
'
  "$W/nop_firehose" --seconds 0.3 >"$TMP/firehose2.json" 2>/dev/null
  check nop_firehose_seconds "$TMP/firehose2.json" '
assert d["ok"] is True and d["completed"] == d["submitted"] > 0
assert 0.25 < d["seconds"] < 2
'
else
  skip nop_firehose "no $W/nop_firehose"
fi

# --- iowq_sleep ------------------------------------------------------------
if "$W/iowq_sleep" --wait-ms 5 >"$TMP/iowq.json" 2>"$TMP/iowq.err"; then
  check iowq_sleep "$TMP/iowq.json" '
assert d["ok"] is True and d["res"] >= 0 and d["user_data"] == "0xf1f0" and d["wait_ms"] == 5
'
else
  fail iowq_sleep "exit $?: $(head -c 300 "$TMP/iowq.err")"
fi

# --- usdt_probes -----------------------------------------------------------
if "$W/usdt_probes" 3 --path /x >"$TMP/usdt.json" 2>"$TMP/usdt.err"; then
  check usdt_probes "$TMP/usdt.json" 'assert d == {"ok": True, "requests": 3, "path": "/x"}'
else
  fail usdt_probes "exit $?: $(head -c 300 "$TMP/usdt.err")"
fi

# --- uring_doctor ----------------------------------------------------------
# Every mode runs with its defaults, untraced: exit 0 (77: the machine cannot
# make it), one GROUND-TRUTH line with the mode's tag and the results the
# mode promises, and no file left behind.
if [ -x "$W/uring_doctor" ]; then
  ud_dir=$TMP/uring_doctor; mkdir -p "$ud_dir"
  ud_shm=$(mktemp -d /dev/shm/ut_uring_doctor.XXXXXX)
  for mode in $("$W/uring_doctor" --list | awk 'NR > 1 { print $1 }'); do
    "$W/uring_doctor" "$mode" --dir "$ud_dir" --shm-dir "$ud_shm" >"$TMP/ud.out" 2>"$TMP/ud.err"
    rc=$?
    if [ $rc = 77 ]; then
      skip "uring_doctor_$mode" "$(head -c 200 "$TMP/ud.err")"
      continue
    elif [ $rc != 0 ]; then
      fail "uring_doctor_$mode" "exit $rc: $(head -c 300 "$TMP/ud.err")"
      continue
    fi
    if err=$(python3 - "$mode" "$TMP/ud.out" <<'PY' 2>&1
import sys
mode, lines = sys.argv[1], open(sys.argv[2]).read().splitlines()
assert len(lines) == 1 and lines[0].startswith("GROUND-TRUTH "), lines
words = lines[0].split()
tag, kv = words[1], dict(w.split("=", 1) for w in words[2:])
assert kv["mode"] == mode, kv
tags = {"punt": "PUNT", "nobatch": "BATCH", "overflow": "OVERFLOW", "errors": "ERRORS", "leak": "LEAK",
        "sqpoll": "SQPOLL", "workers": "WORKERS", "iowq-wait": "IOWQ-WAIT", "config-tw": "CONFIG",
        "defer-tw": "DEFER-TW", "unregistered-files": "CONFIG", "small-cq": "CONFIG",
        "short-write": "SHORT-WRITE", "reap-lag": "REAP-LAG", "slow": "SLOW", "hazard-uaf": "HAZARD-UAF",
        "hazard-bufreg": "HAZARD-BUFREG", "hazard": "HAZARD", "clean": "NONE"}
assert tag == next(t for p, t in tags.items() if mode.startswith(p)), (mode, tag)
checks = {
    "punt-async": lambda: kv["ok"] == kv["punted"] == "1000",
    "punt-eagain": lambda: kv["ok"] == kv["punted"] == "1000",
    "punt-nowait": lambda: kv["ok"] == kv["punted"] == "1000",
    "punt-poll": lambda: kv["ok"] == "256",
    "overflow": lambda: (kv["overflowed"], kv["dropped"], kv["reaped"], kv["nodrop"]) == ("1000", "0", "1008", "1"),
    "errors": lambda: kv["errors"] == kv["completions"] == "1250",
    "sqpoll-idle": lambda: int(kv["wakeups"]) >= int(kv["submits"]) // 2,
    "workers": lambda: kv["ok"] == "32",
    "iowq-wait": lambda: kv["ok"] == "16",
    "small-cq": lambda: kv["dropped"] == "0",
    "short-write": lambda: kv["file_got"] == kv["pipe_got"] == "4096",
    "hazard": lambda: kv["ok"] == "4",
    "hazard-uaf": lambda: kv["res"] == "-14",
    "hazard-bufreg": lambda: (kv["ok"], kv["update_ret"], kv["unregister_ret"]) == ("4", "1", "0"),
    "clean-read": lambda: kv["ok"] == kv["reads"],
}
assert checks.get(mode, lambda: True)(), kv
PY
    ); then
      pass "uring_doctor_$mode"
    else
      fail "uring_doctor_$mode" "$(echo "$err" | tail -n 2 | tr '\n' ' ')"
    fi
  done
  left=$(find "$ud_dir" "$ud_shm" -mindepth 1)
  if [ -z "$left" ]; then
    pass uring_doctor_cleans_up
  else
    fail uring_doctor_cleans_up "left: $(echo "$left" | tr '\n' ' ')"
  fi
  rm -rf "$ud_shm"
else
  skip uring_doctor "no $W/uring_doctor"
fi
