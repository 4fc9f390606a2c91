#!/usr/bin/env bash
# scripts/iostack.ut traces the fileio workload (tests/workloads/README.md)
# with a known pattern, on ext4 on the root disk and on a loop device:
#  - wait mode under -p (the workload opened its file before tracing began,
#    so it does exactly 64 O_DIRECT pread64 of 4 KiB while traced): 64
#    pread64 in the syscall histogram, 64 ext4 reads in the filesystem's,
#    64 block reads of the file's disk, each a complete flow that begins
#    inside its pread64 slice (nested in an "ext4 read" slice), 4096 bytes at
#    the file's sectors;
#  - pattern mode under -c: 16 pwrite64 and 1 fsync, the 16 writes of the
#    file as "ext4 write" slices in their pwrite64 slices, every block
#    request a complete flow;
#  - --disk: another disk than the file's counts none of it; a disk that does
#    not exist and a bad --unit are errors that say what is allowed;
#  - on a kernel without fentry and kprobes, a note says so when tracing starts.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/loopdev.sh"
source "$(dirname "$0")/fileio_wait.sh"
need_root_bpf iostack || exit 0
SCRIPT=$UT_ROOT/scripts/iostack.ut
FILEIO=$UT_WORKLOADS/fileio
PY=/usr/bin/python3

# run_wait NAME FILE [iostack options...]: wait mode traced with -p.
run_wait() {
	local name=$1 file=$2
	shift 2
	trace_fileio_waiting "iostack/$name" "$TMP/$name" "$file" "$SCRIPT" "$@"
}

# run_pattern NAME FILE [iostack options...]: pattern mode traced with -c.
run_pattern() {
	local name=$1 file=$2 out=$TMP/$1
	shift 2
	mkdir -p "$out"
	if ! "$UT" -q --json "$out/summary.json" -o "$out/trace.fxt" "$@" \
		-c "$FILEIO --file $file --engine sync > $out/workload.json" "$SCRIPT" >"$out/out.txt" 2>"$out/err.txt"; then
		fail "iostack/$name/runs" "$(head -c 400 "$out/err.txt")"
		return 1
	fi
	pass "iostack/$name/runs"
}

# check NAME FILE MODE [EXPECT_NONE]: the summary and trace of a run.
check() {
	local out=$TMP/$1
	"$UT" dump "$out/trace.fxt" >"$out/dump.txt" 2>&1 || fail "iostack/$1/dump" "uring-trace dump failed"
	"$UT" stats --json "$out/trace.fxt" >"$out/stats.json" 2>&1 || fail "iostack/$1/stats" "uring-trace stats failed"
	"$PY" - "$1" "$out" "$2" "$3" "${4:-}" <<'PY'
import json, os, re, sys
name, out, path, mode, expect_none = sys.argv[1:6]
def check(what, cond, why=""):
    print(("PASS " if cond else "FAIL ") + f"iostack/{name}/{what}" + ("" if cond else ": " + why))

w = json.load(open(f"{out}/workload.json"))
m = json.load(open(f"{out}/summary.json"))
s = json.load(open(f"{out}/stats.json"))
check("workload_ok", w["ok"] and w["direct"], "the workload failed or could not use O_DIRECT")

# the disk under the file: its filesystem's device, or that partition's disk
st = os.stat(path)
sysdev = os.path.realpath(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
disk = os.path.basename(os.path.dirname(sysdev) if os.path.exists(f"{sysdev}/partition") else sysdev)

def count_map(mapname):
    """a histogram map's event count per key"""
    return {tuple(e["key"]): e["count"] for e in m["maps"].get(mapname, [])}
def hist_count(mapname, key):
    return count_map(mapname).get(key, 0)

ops = [o for o in w["ops"] if o["op"] in ("read", "write", "fsync")]
n_reads = sum(o["op"] == "read" for o in ops)
n_writes = sum(o["op"] == "write" for o in ops)
n_fsync = sum(o["op"] == "fsync" for o in ops)
check("no_lost_events", m["lost"] == 0, f'{m["lost"]} lost')
check("trace_reads", s["errors"] == 0, str(s.get("error_messages")))

sys_counts = count_map("@syscall_latency")
if expect_none:
    # --disk names another disk: nothing of this file is followed
    check("other_disk_no_syscalls", sys_counts.get(("pread64",), 0) == 0, str(sys_counts))
    check("other_disk_no_block_requests", not count_map("@block_latency"), str(count_map("@block_latency")))
    sys.exit(0)

# ---- the trace: slices per thread, flows ----
ev = re.compile(r'event (\w+) ts=(\d+) pid=(\d+) tid=(\d+) cat="[^"]*" name="([^"]*)"(?: args=\{(.*?)\})?(?: id=(\d+))?$')
stacks, begins, ends, nested = {}, {}, set(), []
for line in open(f"{out}/dump.txt"):
    g = ev.search(line.strip())
    if not g:
        continue
    kind, ts, pid, tid, nm, args, fid = g.groups()
    st = stacks.setdefault((pid, tid), [])
    if kind == "duration_begin":
        nested.append((nm, [x[0] for x in st], args or ""))
        st.append((nm, args or ""))
    elif kind == "duration_end" and st:
        st.pop()
    elif kind == "flow_begin":
        begins[fid] = [x[0] for x in st]
    elif kind == "flow_end":
        ends.add(fid)
flows_complete = [fid for fid in begins if fid in ends]
check("flows_all_complete", s["flows"]["incomplete"] == 0 and len(flows_complete) == len(begins),
      f'{s["flows"]}, begun {len(begins)} ended {len(ends)}')
check("flow_points_in_slices", s["flows"]["points_outside_slices"] == 0, str(s["flows"]))
from_pread = [fid for fid in flows_complete if "pread64" in begins[fid]]
ino = f"ino: uint32 {w['inode']}"

if mode == "wait":
    check("syscall_pread64", hist_count("@syscall_latency", ("pread64",)) == n_reads,
          f'{sys_counts} vs {n_reads} reads')
    check("fs_ext4_reads", hist_count("@fs_latency", ("ext4", "read")) == n_reads, str(count_map("@fs_latency")))
    check("block_reads", hist_count("@block_latency", (disk, "read")) == n_reads and
          hist_count("@block_queue_latency", (disk, "read")) == n_reads, f'{count_map("@block_latency")} on {disk}')
    check("only_this_disk", set(k[0] for k in count_map("@block_latency")) == {disk}, str(count_map("@block_latency")))
    check("flows_from_pread64", len(from_pread) == n_reads and len(begins) == n_reads,
          f'{len(from_pread)} of {len(begins)} flows begin in pread64 slices')
    check("flows_inside_ext4_read", all(begins[f][-1:] == ["ext4 read"] for f in from_pread),
          str([begins[f] for f in from_pread][:3]))
    in_pread = [a for nm, parents, a in nested if nm == "ext4 read" and parents[-1:] == ["pread64"] and ino in a]
    check("ext4_read_slices_in_pread64", len(in_pread) == n_reads, f'{len(in_pread)} ext4 read slices of inode {w["inode"]}')
    # each request: 4096 bytes read at one of the file's sectors, as block_io_start saw it
    reqs = re.findall(r'name="block request" args=\{disk: string "([^"]+)", sector: uint\d+ (\d+), bytes: uint\d+ (\d+), op: string "(\w+)"',
                      open(f"{out}/dump.txt").read())
    check("requests_4k_reads", len(reqs) == n_reads and all(r[0] == disk and r[2] == "4096" and r[3] == "read" for r in reqs),
          str(reqs[:3]))
    check("requests_distinct_sectors", len(set(r[1] for r in reqs)) == n_reads, "sectors repeat")
else:
    check("syscall_pwrite64", hist_count("@syscall_latency", ("pwrite64",)) == n_writes, str(sys_counts))
    check("syscall_fsync", hist_count("@syscall_latency", ("fsync",)) == n_fsync, str(sys_counts))
    check("syscall_pread64", hist_count("@syscall_latency", ("pread64",)) >= n_reads, str(sys_counts))
    fs = count_map("@fs_latency")
    check("fs_ext4_fsync", fs.get(("ext4", "fsync"), 0) == n_fsync, str(fs))
    in_pwrite = [a for nm, parents, a in nested if nm == "ext4 write" and parents[-1:] == ["pwrite64"] and ino in a]
    check("ext4_write_slices_in_pwrite64", len(in_pwrite) == n_writes, f'{len(in_pwrite)} of inode {w["inode"]}')
    check("block_writes", hist_count("@block_latency", (disk, "write")) >= 1, str(count_map("@block_latency")))
    check("flows_from_pread64", len(from_pread) == n_reads, f'{len(from_pread)} flows begin in pread64 slices')
totals = {e["key"][0]: e["value"] for e in m["maps"]["@total_ns"]}
check("layer_totals", all(totals.get(k, 0) > 0 for k in ("syscall", "filesystem", "block queue", "block device")),
      str(totals))
PY
}

# --- the root disk (ext4 here), O_DIRECT ---
root_file=$TMP/root.data
"$FILEIO" --file "$root_file" --engine sync --reads 64 --writes 0 >/dev/null 2>"$TMP/prepare.err" ||
	fail iostack/prepare "$(head -c 300 "$TMP/prepare.err")"
if [ "$(stat -f -c %T "$TMP")" != ext2/ext3 ]; then
	skip iostack/root "$TMP is not ext4 ($(stat -f -c %T "$TMP"))"
else
	run_wait root_wait "$root_file" && check root_wait "$root_file" wait
	run_pattern root_pattern "$root_file" && check root_pattern "$root_file" pattern
fi

# --- ext4 on a loop device ---
if loopdev_create 64; then
	loop_file=$LOOPDEV_MNT/loop.data
	"$FILEIO" --file "$loop_file" --engine sync --writes 0 >/dev/null 2>"$TMP/prepare.err" ||
		fail iostack/prepare_loop "$(head -c 300 "$TMP/prepare.err")"
	run_wait loop_wait "$loop_file" --disk="$LOOPDEV_NAME" && check loop_wait "$loop_file" wait
	run_pattern loop_pattern "$loop_file" && check loop_pattern "$loop_file" pattern
	# the file is on the loop device: following only vda sees none of it
	other=$(ls /sys/block | grep -vx "$LOOPDEV_NAME" | grep -v '^loop' | head -n 1)
	if [ -n "$other" ]; then
		run_wait loop_other_disk "$loop_file" --disk="$other" && check loop_other_disk "$loop_file" wait none
	fi
else
	skip iostack/loop "$LOOPDEV_ERROR"
fi

# --- where neither fentry nor kprobes run, the filesystem layer says so ---
if "$UT" --info 2>/dev/null | grep -Eq '^  fentry +no' && "$UT" --info 2>/dev/null | grep -Eq '^  kprobe +no'; then
	if [ ! -f "$TMP/root_wait/err.txt" ]; then
		skip iostack/degraded_note "no traced run on the root disk"
	elif grep -q '^uring-trace: note: this kernel runs no .*fentry.*programs' "$TMP/root_wait/err.txt" &&
		grep -q 'kprobe' "$TMP/root_wait/err.txt"; then
		pass iostack/degraded_note
	else
		fail iostack/degraded_note "no note naming fentry and kprobe: $(head -c 300 "$TMP/root_wait/err.txt")"
	fi
else
	skip iostack/degraded_note "this kernel runs fentry or kprobes: the filesystem layer is whole"
fi

# --- bad options: errors that say what is allowed ---
if "$UT" -q --summary-only --disk=no_such_disk -d 1 "$SCRIPT" >"$TMP/bad.out" 2>&1; then
	fail iostack/bad_disk "a disk that does not exist was accepted"
elif grep -q "no disk 'no_such_disk'" "$TMP/bad.out" && grep -q "vda\|loop\|sd\|nvme" "$TMP/bad.out"; then
	pass iostack/bad_disk
else
	fail iostack/bad_disk "$(head -c 300 "$TMP/bad.out")"
fi
if "$UT" --emit-c --unit=s "$SCRIPT" >/dev/null 2>"$TMP/unit.err"; then
	fail iostack/bad_unit "--unit=s was accepted"
elif grep -q "'unit' is one of \"ns\", \"us\" or \"ms\"" "$TMP/unit.err"; then
	pass iostack/bad_unit
else
	fail iostack/bad_unit "$(head -c 300 "$TMP/unit.err")"
fi
