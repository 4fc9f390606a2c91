#!/usr/bin/env bash
# scripts/block.ut on the fileio workload (64 O_DIRECT reads of 4 KiB at
# offsets i * 8 KiB, 16 buffered writes of 4 KiB, fsync), on the root disk
# and on ext4 on a loop device, with both engines: the summary and the trace
# show exactly the workload's reads (count, 4096 bytes, operation, the
# sectors of the file's blocks from filefrag), and nothing of another
# process reading the same disk at the same time, although completions run
# in interrupts.  Also: --disk for a missing disk is an error, --unit, and
# the classic tracepoints' rwbs decodes like the BTF tracepoints' flags.
source "$(dirname "$0")/../lib.sh"
need_root_bpf block || exit 0
source "$(dirname "$0")/loopdev.sh"
SCRIPT="$UT_ROOT/scripts/block.ut"
for tool in filefrag dd; do
	command -v $tool >/dev/null || { skip block "$tool is not installed"; exit 0; }
done

# The disk holding a directory, as /sys/block names it (the test needs a
# filesystem right on a disk, not on a partition or a device-mapper target).
disk_of() {
	local numbers name
	numbers=$(mountpoint -d "$(df --output=target "$1" | tail -1)")
	name=$(basename "$(readlink "/sys/dev/block/$numbers")")
	[ -e "/sys/block/$name" ] && echo "$name"
}

# check NAME DIR DISK ENGINE [uring-trace options...]
check() {
	local name=$1 dir=$2 disk=$3 engine=$4
	shift 4
	local out="$TMP/$name" file="$dir/fileio.dat"
	mkdir -p "$out"
	# prepare the file untraced, so the traced run only reads and writes
	"$UT_WORKLOADS/fileio" --engine "$engine" --file "$file" >/dev/null || { fail "$name/prepare" "fileio failed"; return; }
	filefrag -v "$file" >"$out/filefrag.txt" || { fail "$name/filefrag" "filefrag failed"; return; }
	# another process reads the same disk with O_DIRECT meanwhile
	dd if=/dev/zero of="$dir/other.dat" bs=1M count=4 oflag=direct status=none
	(while :; do dd if="$dir/other.dat" of=/dev/null bs=4k iflag=direct status=none; done) &
	local noise=$!
	"$UT" -q "$@" -o "$out/trace.fxt" --json "$out/summary.json" \
		-c "$UT_WORKLOADS/fileio --engine $engine --file $file >$out/workload.json" "$SCRIPT" >"$out/summary.txt" 2>"$out/err.txt"
	local rc=$?
	kill $noise; wait $noise 2>/dev/null
	if [ $rc -ne 0 ]; then
		fail "$name/runs" "exit status $rc: $(head -3 "$out/err.txt")"
		return
	fi
	pass "$name/runs"
	"$UT" stats --json "$out/trace.fxt" >"$out/stats.json" && "$UT" dump "$out/trace.fxt" >"$out/dump.txt" ||
		{ fail "$name/read_trace" "stats or dump failed"; return; }
	python3 - "$out" "$name" "$disk" <<'PY'
import json, re, sys
out, name, disk = sys.argv[1:4]
def check(what, cond, why=""):
    print(("PASS " if cond else "FAIL ") + name + "/" + what + ("" if cond else ": " + why))

w = json.load(open(f"{out}/workload.json"))
summary = json.load(open(f"{out}/summary.json"))
m = summary["maps"]
stats = json.load(open(f"{out}/stats.json"))
pid = w["pid"]
reads = [op for op in w["ops"] if op["op"] == "read"]
writes = [op for op in w["ops"] if op["op"] == "write"]
check("workload_ok", w["ok"] and w["direct"], "the workload failed or had no O_DIRECT")

# Expected sectors: the physical block of each read's offset (filefrag -v).
text = open(f"{out}/filefrag.txt").read()
block = int(re.search(r"blocks of (\d+) bytes", text).group(1))
extents = [tuple(int(x) for x in e) for e in
           re.findall(r"^\s*\d+:\s+(\d+)\.\.\s*(\d+):\s+(\d+)\.\.\s*\d+:", text, re.M)]
def sector(offset):
    logical = offset // block
    for first, last, physical in extents:
        if first <= logical <= last:
            return (physical + logical - first) * (block // 512) + offset % block // 512
    return None
expected = sorted(sector(op["offset"]) for op in reads)

def value(map_name, key):
    return sum(e["value"] for e in m[map_name] if e["key"] == key)
def hist_counts(map_name, key):
    return {b["bucket"]: b["count"] for e in m[map_name] if e["key"] == key for b in e["buckets"]}


# The trace: request spans on the disk's group, with the submitter's pid.
groups = {int(g): n for g, n in re.findall(r'kernel_object process koid=(\d+) name="([^"]*)"', open(f"{out}/dump.txt").read())}
spans = []
for line in open(f"{out}/dump.txt"):
    e = re.search(r'event duration_begin .* pid=(\d+) tid=\d+ cat="[^"]*" name="(\w+)" args=\{sector: uint\d+ (\d+), '
                  r'bytes: uint\d+ (\d+), flags: string "([^"]*)", pid: koid (\d+)', line)
    if e and groups.get(int(e.group(1))) == disk:
        spans.append((e.group(2), int(e.group(3)), int(e.group(4)), e.group(5), int(e.group(6))))
# Reads outside the file are the workload's own too: its executable and
# libraries read in (read-ahead) when -c starts it with a cold page cache.
read_spans = [s for s in spans if s[0] == "read" and s[1] in expected]
exec_reads = [s for s in spans if s[0] == "read" and s[1] not in expected]
check("exec_reads_are_readahead", all("sync" not in s[3] for s in exec_reads), str(exec_reads))
n = len(reads) + len(exec_reads)
check("summary_requests", value("@requests", [disk, "read"]) == n,
      f'{value("@requests", [disk, "read"])} read requests, the workload made {len(reads)} (+{len(exec_reads)} at exec);'
      f' {summary["lost"]} events lost, {summary["missed"]} probe hits skipped by the kernel')
check("summary_bytes", value("@bytes", [disk, "read"]) == 4096 * len(reads) + sum(s[2] for s in exec_reads), str(m["@bytes"]))
check("summary_size_histogram", not exec_reads and hist_counts("@size", [disk, "read"]) == {"[4K, 8K)": len(reads)} or
      sum(hist_counts("@size", [disk, "read"]).values()) == n, str(m["@size"]))
for phase in ("queue", "service"):
    counts = hist_counts(f"@{phase}_us", [disk, "read"])
    check(f"summary_{phase}_histogram", sum(counts.values()) == n, str(counts))
check("trace_reads", len(read_spans) == len(reads), f"{len(read_spans)} read spans")
check("trace_read_sizes", all(s[2] == 4096 for s in read_spans), str(read_spans[:3]))
check("trace_read_flags", all("sync" in s[3] for s in read_spans), str(read_spans[:3]))
check("trace_read_sectors", sorted(s[1] for s in read_spans) == expected,
      f"traced {sorted(s[1] for s in read_spans)[:4]}..., filefrag says {expected[:4]}...")
# Buffered writes reach the disk at fsync, merged or not: the data writes
# (not metadata, not the empty flushes) cover exactly the written blocks.
data_writes = [s for s in spans if s[0] == "write" and s[2] and "meta" not in s[3]]
written = sorted(sec + i * 8 for _, sec, size, _, _ in data_writes for i in range(size // 4096))
check("trace_write_sectors", written == sorted(sector(op["offset"]) for op in writes),
      f"data writes {data_writes}, expected sectors {sorted(sector(op['offset']) for op in writes)[:3]}...")
check("summary_write_bytes", value("@bytes", [disk, "write"]) == sum(s[2] for s in spans if s[0] == "write"),
      f'{m["@bytes"]} but the trace has {[s for s in spans if s[0] == "write"]}')
check("trace_only_the_workload", all(s[4] == pid for s in spans), str([s for s in spans if s[4] != pid][:3]))
check("trace_flows_complete", stats["flows"]["complete"] == len(spans) and stats["flows"]["incomplete"] == 0,
      f'{stats["flows"]} for {len(spans)} requests')
check("trace_flow_points_in_slices", stats["flows"]["points_outside_slices"] == 0, str(stats["flows"]))
PY
	[ $? -eq 0 ] || fail "$name/checks" "the checker failed (files in $out)"
}

# check, and once more when it fails.  On the root disk of the VMs this
# project runs on, about one completion in 200 (under the noise above) runs
# in a softirq on top of the VM agent's thread (tokio-rt-worker, another
# pid namespace) where the kernel fires block_rq_complete (ftrace, clock
# mono, sees it) but runs no BPF program on it and counts no miss: a
# four-line script that only deletes each request's entry at completion
# misses the same ones; nor does any program run at a switch away from the
# agent's threads (switches to them are seen).  One run in 50-100 of this
# check lost 1-45 of its completions so (2026-11-27, 6.18); a second
# failure is not that.  Only failures a lost completion explains are run
# again: a count, a byte total, a histogram, an unfinished flow.
check_again_if_failed() {
	local out
	out=$(check "$@")
	if grep -q '^FAIL' <<<"$out" &&
		! grep '^FAIL' <<<"$out" | grep -qvE '/(summary_(requests|bytes|write_bytes|size_histogram|queue_histogram|service_histogram)|trace_flows_complete):'; then
		grep '^FAIL' <<<"$out" | sed 's/^FAIL /first attempt failed, running it again: /'
		out=$(check "$@")
	fi
	echo "$out"
}

root_dir=$(mktemp -d /var/tmp/ut-block.XXXXXX)
trap 'rm -rf "$root_dir"; loopdev_remove; rm -rf "$TMP"' EXIT
root_disk=$(disk_of "$root_dir")
if [ -z "$root_disk" ]; then
	skip block/root_disk "/var/tmp is not on a whole disk"
else
	check_again_if_failed root_sync "$root_dir" "$root_disk" sync
	check_again_if_failed root_uring "$root_dir" "$root_disk" uring
fi

if loopdev_create 64; then
	check loop_sync "$LOOPDEV_MNT" "$LOOPDEV_NAME" sync --disk="$LOOPDEV_NAME"
	check loop_uring "$LOOPDEV_MNT" "$LOOPDEV_NAME" uring --disk="$LOOPDEV_NAME" --unit=us
else
	skip block/loop "$LOOPDEV_ERROR"
fi

# A disk that does not exist stops the script before anything runs.
"$UT" -q --disk=nosuchdisk0 -c true "$SCRIPT" >"$TMP/nodisk.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "block.ut:[0-9]*:[0-9]*: there is no disk 'nosuchdisk0' on this machine; its disks are: .*$root_disk" "$TMP/nodisk.out"; then
	pass block/missing_disk_is_an_error
else
	fail block/missing_disk_is_an_error "exit $rc: $(cat "$TMP/nodisk.out")"
fi
# A partition is refused too: block requests belong to the whole disk.  An
# image with an MBR holding one partition (sectors 2048 on), attached with -P.
truncate -s 8M "$TMP/parted.img"
printf '\0\0\0\0\203\0\0\0\0\010\0\0\0\070\0\0' | dd of="$TMP/parted.img" bs=1 seek=446 conv=notrunc status=none
printf '\125\252' | dd of="$TMP/parted.img" bs=1 seek=510 conv=notrunc status=none
parted_dev=$(losetup -f --show -P "$TMP/parted.img" 2>/dev/null)
if [ -n "$parted_dev" ] && [ -e "/sys/class/block/$(basename "$parted_dev")p1" ]; then
	parted=$(basename "$parted_dev")
	"$UT" -q --disk="${parted}p1" -c true "$SCRIPT" >"$TMP/partition.out" 2>&1
	rc=$?
	if [ $rc -eq 1 ] && grep -q "'${parted}p1' is a partition; block requests are counted per disk: give its disk, $parted" "$TMP/partition.out"; then
		pass block/partition_is_an_error
	else
		fail block/partition_is_an_error "exit $rc: $(cat "$TMP/partition.out")"
	fi
else
	# the development kernel reads no partition tables (CONFIG_MSDOS_PARTITION
	# is off); the kernel matrix's 50-block.sh checks this on Debian's kernels
	skip block/partition_is_an_error "no partition on a loop device with an MBR (does this kernel read partition tables?)"
fi
[ -n "$parted_dev" ] && losetup -d "$parted_dev"

"$UT" -q --unit=s -c true "$SCRIPT" >"$TMP/unit.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "unit" "$TMP/unit.out"; then
	pass block/bad_unit_is_an_error
else
	fail block/bad_unit_is_an_error "exit $rc: $(cat "$TMP/unit.out")"
fi

# --unit=ns: the histograms are in nanoseconds.
if [ -n "$root_disk" ]; then
	"$UT" -q --summary-only --unit=ns --json "$TMP/ns.json" \
		-c "$UT_WORKLOADS/fileio --engine sync --file $root_dir/fileio.dat" "$SCRIPT" >/dev/null 2>"$TMP/ns.err"
	python3 - "$TMP/ns.json" "$root_disk" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["maps"]
n = sum(e["count"] for e in m["@service_ns"] if e["key"] == [sys.argv[2], "read"])
requests = sum(e["value"] for e in m["@requests"] if e["key"] == [sys.argv[2], "read"])
ok = n == requests >= 64 and not m["@service_us"]
print(("PASS " if ok else "FAIL ") + "block/unit_ns" + ("" if ok else f": {n} reads in @service_ns of {requests}, @service_us {m['@service_us']}"))
PY
	[ $? -eq 0 ] || fail block/unit_ns "the checker failed: $(head -3 "$TMP/ns.err")"
fi

# The classic tracepoints' fallback decodes rwbs into the same operations
# and flags as the BTF tracepoints' cmd_flags, request by request.
cat >"$TMP/decode.ut" <<'EOF'
import "block";
tp_btf:block_rq_issue {
	$opf = (u64)args.rq.cmd_flags;
	@btf[args.rq.__sector, block_op[block_op_of($opf)], block_flags[block_flags_of($opf)]] = count();
}
tracepoint:block:block_rq_issue {
	$opf = (u64)args.rwbs | BLOCK_OPF_RWBS;
	@classic[args.sector, block_op[block_op_of($opf)], block_flags[block_flags_of($opf)]] = count();
}
EOF
if [ -n "$root_disk" ]; then
	"$UT" -q --summary-only --json "$TMP/decode.json" \
		-c "$UT_WORKLOADS/fileio --engine sync --file $root_dir/fileio.dat" "$TMP/decode.ut" >/dev/null 2>"$TMP/decode.err"
	python3 - "$TMP/decode.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["maps"]
btf = sorted((tuple(e["key"]), e["value"]) for e in m["@btf"])
classic = sorted((tuple(e["key"]), e["value"]) for e in m["@classic"])
ok = btf == classic and len(btf) > 0
print(("PASS " if ok else "FAIL ") + "block/classic_decodes_like_btf" + ("" if ok else f": btf {btf} classic {classic}"))
PY
	[ $? -eq 0 ] || fail block/classic_decodes_like_btf "the checker failed: $(head -3 "$TMP/decode.err")"
fi
